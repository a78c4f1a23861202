import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Config } from './config.js';
import { PlanCache } from './domain/plan-cache.js';
import { authHook, createAuthenticator, scopeHook } from './http/auth.js';
import { handleFrameworkError, registerErrorHandling } from './http/errors.js';
import { executeRoutes } from './http/execute.js';
import { healthRoutes } from './http/health.js';
import { scenarioRoutes } from './http/scenarios.js';
import { installValidators } from './http/validation.js';
import { useJsonParser } from './http/json.js';
import { registerProtection } from './http/protection.js';
import { Metrics } from './http/metrics.js';
import { chainReaderFor, type ProofStatusReader } from './chain/index.js';
import { OffChain } from './http/offchain.js';
import { WebhookDispatcher } from './domain/webhooks.js';
import type { StateResolvers } from './zkp/state.js';
import { createCredentialVerifier, type CredentialVerifier, type TrustDeps } from './trust/index.js';
import { createDemoIssuer, demoStatusResolver } from './trust/demo-issuer.js';
import { onchainStatusResolver } from './trust/onchain-status.js';

import { IDEMPOTENCY_TTL_MS, idempotency } from './http/idempotency.js';
import { openStore, type Store } from './store/index.js';
import { executionRoutes } from './http/executions.js';

/** Hash of the inline style Swagger UI's page carries. */
const DOCS_INLINE_STYLE = 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w=';

/** How often pending OffChainZKP executions whose request expired are failed. */
const EXPIRY_SWEEP_MS = 5000;

export interface AppDeps {
  /** A store to use instead of opening the configured one; the app closes it on close either way. */
  store?: Store;
  /** Fastify logger option; defaults to pino at config.logLevel. Tests pass false or a stream. */
  logger?: FastifyServerOptions['logger'];
  /** Clock, epoch ms. */
  now?: () => number;
  /** Reads OnChainZKP verification; defaults to a ChainReader on config.chains (none configured: reads nothing). */
  chain?: ProofStatusReader;
  /** OffChainZKP issuer-state resolvers; default: ZKP_STATE_RESOLVERS over RPC. */
  zkpStateResolvers?: StateResolvers;
  /** Credential trust I/O (HTTP client, status resolvers), for tests on local servers. */
  trust?: TrustDeps;
  /** Start the cold verification threads when the app is ready instead of at the first new credential (the server does). */
  warmVerification?: boolean;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Headers and fields that must never reach a log line, should a serializer ever include them. */
export const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.body',
  'res.body',
  '*.credentials',
  '*.credentialSubject',
];

/**
 * The credential verifier of the configuration. With DEMO_ISSUER=1 the deterministic demo issuer is trusted too and
 * its revocation statuses are answered in process, so demo credentials verify with no other server.
 */
async function credentialVerifier(config: Config, given: TrustDeps, log: FastifyBaseLogger): Promise<CredentialVerifier> {
  if (config.trust.mode === 'off') {
    log.warn('CREDENTIAL_VERIFICATION=off: credentials are believed without checks; every result says verification "off". Development only.');
  }
  // On-chain revocation statuses are read from the chains of CHAIN_RPC_URLS.
  const deps: TrustDeps = config.chains.chains.size === 0 ? given : {
    ...given,
    statusResolvers: { Iden3OnchainSparseMerkleTreeProof2023: await onchainStatusResolver(config.chains), ...given.statusResolvers },
  };
  if (!config.demoIssuer) return createCredentialVerifier(config.trust, deps);
  const demo = await createDemoIssuer({ statusUrl: `http://127.0.0.1:${config.port}/demo-issuer/status` });
  log.warn({ issuer: demo.did }, 'DEMO_ISSUER=1: the demo issuer, whose key is public, is trusted. Never in production.');
  const trusted = config.trust.trustedIssuers;
  return createCredentialVerifier(
    { ...config.trust, trustedIssuers: trusted === '*' ? '*' : [...trusted, demo.did] },
    { ...deps, statusResolvers: { ...deps.statusResolvers, SparseMerkleTreeProof: demoStatusResolver(demo) } },
  );
}

export async function buildApp(config: Config, deps: AppDeps = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: deps.logger ?? { level: config.logLevel, redact: { paths: REDACT, censor: '[redacted]' } },
    bodyLimit: config.bodyLimit,
    requestIdHeader: false,
    // Honour a caller's x-request-id when it is a sane token, else make one.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false } },
    return503OnClosing: true,
    // Ids are up to 128 characters, and a client may percent-encode each (":" as %3A): room for that.
    routerOptions: { maxParamLength: 512 },
    // Router errors (malformed percent-encoding, over-long parameters) as problem+json too.
    frameworkErrors: handleFrameworkError,
    requestTimeout: config.requestTimeoutMs,
  });

  const metrics = new Metrics();
  const now = deps.now ?? Date.now;
  const store = metrics.timeStore(deps.store ?? (await openStore(config.database, (err) => app.log.warn({ err }, 'database connection error'))));
  app.addHook('onClose', async () => store.close());

  // Audit retention: purge at start and then periodically; the timer never keeps the process alive.
  const purge = async () => {
    const before = new Date(now() - config.executionRetentionDays * 24 * 3600 * 1000).toISOString();
    try {
      const purged = await store.purgeExecutions(before);
      if (purged > 0) app.log.info({ purged, before }, 'purged old execution records');
      const keys = await store.purgeIdempotencyKeys(new Date(now() - IDEMPOTENCY_TTL_MS).toISOString());
      if (keys > 0) app.log.info({ keys }, 'purged expired idempotency keys');
    } catch (err) {
      app.log.warn({ err }, 'execution purge failed; will retry');
    }
  };
  const offChain = new OffChain(config, { store, now, log: app.log, metrics, stateResolvers: deps.zkpStateResolvers });
  await offChain.ready();
  const sweep = () => offChain.sweep().catch((err) => app.log.warn({ err }, 'expiring pending executions failed; will retry'));
  const webhooks = config.webhook ? new WebhookDispatcher(store, config.webhook, app.log, now) : undefined;
  const timers: NodeJS.Timeout[] = [];
  app.addHook('onReady', async () => {
    await purge();
    timers.push(setInterval(purge, config.executionPurgeIntervalMs).unref());
    timers.push(setInterval(sweep, EXPIRY_SWEEP_MS).unref());
    webhooks?.start();
  });
  // While shutting down, responses to requests still in flight close their connection, so that close() need not
  // wait for the client's keep-alive to end.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
    for (const t of timers) clearInterval(t);
    await webhooks?.stop();
  });
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (closing) reply.header('connection', 'close');
  });

  // JSON only: Fastify also parses text/plain by default, which would turn a wrong Content-Type into a 400.
  app.removeContentTypeParser('text/plain');
  useJsonParser(app);
  const validators = installValidators(app);
  registerErrorHandling(app);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Scenario Compliance Service',
        version: '0.1.0',
        description:
          'Decides whether a blockchain address, holding a set of verifiable credentials, passes a compliance scenario. ' +
          'Errors are RFC 9457 problem details (application/problem+json). See the README for the decisions taken where the seed is silent.',
      },
      tags: [
        { name: 'execute', description: 'Run a scenario (seed 4.1)' },
        { name: 'scenarios', description: 'Create, read, list, update (seed 4.2) and delete scenarios' },
        { name: 'executions', description: 'The execution audit log' },
        { name: 'health', description: 'Liveness and readiness' },
      ],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description:
              'A static token from API_TOKENS (every scope), or a JWT verified against AUTH_JWKS_URL whose `scope` claim ' +
              'grants scenarios:read, scenarios:write and/or scenarios:execute. A missing scope answers 403.',
          },
        },
      },
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
  if (config.docs) {
    await app.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: { deepLinking: true },
      staticCSP: true,
      // Swagger UI's one inline style, by its hash (else the browser reports a CSP violation on every load).
      transformStaticCSP: (header) => header.replace("style-src 'self' https:", `style-src 'self' https: '${DOCS_INLINE_STYLE}'`),
    });
  }

  const authenticate = createAuthenticator(config.apiTokens, config.jwt);
  await registerProtection(app, config, authenticate.identify);

  const plans = new PlanCache();
  await app.register(healthRoutes, { store });
  metrics.register(app);
  offChain.routes(app);
  await app.register(async (secured) => {
    secured.addHook('onRequest', authHook(authenticate));
    secured.addHook('preHandler', scopeHook());
    const idempotent = idempotency(store, now);
    await secured.register(scenarioRoutes, { store, plans, validators, idempotent, validate: (s) => offChain.validate(s) });
    const chain = deps.chain ?? (await chainReaderFor(config.chains));
    const verifier = await credentialVerifier(config, deps.trust ?? {}, app.log);
    app.addHook('onClose', () => verifier.close());
    metrics.watchVerifier(() => verifier.stats());
    if (deps.warmVerification) app.addHook('onReady', async () => verifier.warm());
    await secured.register(executeRoutes, { store, plans, now, idempotent, metrics, chain, offChain, verifier, publicBaseUrl: config.publicBaseUrl });
    await secured.register(executionRoutes, { store });
  });

  return app;
}
