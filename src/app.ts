import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { composeAdapters, type Adapters, type AppDeps } from './adapters.js';
import type { Config } from './config.js';
import { auth, createAuthenticator } from './http/auth.js';
import { corsPlugin } from './http/cors.js';
import { openApiDocs } from './http/docs.js';
import { handleClientError, handleFrameworkError, problemDetails, ShuttingDown } from './http/errors.js';
import { attestationRoutes, jwksRoute } from './http/attestation.js';
import { executeRoutes } from './http/execute.js';
import { executionRoutes } from './http/executions.js';
import { healthRoutes } from './http/health.js';
import { metricsPlugin } from './http/metrics.js';
import { IDEMPOTENCY_TTL_MS, idempotency } from './http/idempotency.js';
import { useJsonParser } from './http/json.js';
import { protection } from './http/protection.js';
import { scenarioRoutes } from './http/scenarios.js';
import { revisionRoutes } from './http/revisions.js';
import { RevisionService } from './services/revisions.js';
import { typeRoutes } from './http/type-routes.js';
import { installValidators } from './http/validation.js';
import { terminalLogStream } from './http/log-stream.js';
import { webhookProblems } from './domain/webhooks.js';
import { webhookSecretRoute } from './http/webhook-secret.js';
import { scenarioTimers, storeLifecycle, verifierLifecycle, webhooksLifecycle } from './plugins/lifecycle.js';

export type { AppDeps } from './adapters.js';

/** The service's Fastify instance, and what only the process that runs it (server.ts) calls. */
export interface ServiceApp extends FastifyInstance {
  /**
   * The first step of a graceful stop (server.ts, on SIGTERM), before close(): /health/ready answers 503 and every
   * answer carries `Connection: close`, while requests are still served, so clients and load balancers move away
   * before the listener closes.
   */
  drain(): void;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * On close, how long connections without a request in progress are left open after the listener closed. Node's
 * server.close() ends them at once, and one a client opened an instant before (its request not read yet) would be cut
 * off (ECONNRESET) with its request; given this, its request is read and answered (with Connection: close).
 */
const IDLE_GRACE_MS = 1000;

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
 * The service as a Fastify instance: the adapters from the composition root (adapters.ts), the cross-cutting plugins
 * (problem details, protection, docs, metrics, auth) and the route plugins, each handed only what it uses.
 */
export async function buildApp(config: Config, deps: AppDeps = {}): Promise<ServiceApp> {
  const stream = deps.logger === undefined ? await terminalLogStream() : undefined;
  const app = Fastify({
    logger: deps.logger ?? { level: config.logLevel, redact: { paths: REDACT, censor: '[redacted]' }, ...(stream && { stream }) },
    bodyLimit: config.bodyLimit,
    requestIdHeader: false,
    // Honour a caller's x-request-id when it is a sane token, else make one.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false } },
    // JSON bodies with a __proto__ or constructor.prototype key are refused (400), not parsed (Fastify's defaults, stated).
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // While closing, new requests get 503 problem+json from the hook below, not Fastify's plain JSON.
    return503OnClosing: false,
    // Ids are up to 128 characters, and a client may percent-encode each (":" as %3A): room for that.
    routerOptions: { maxParamLength: 512 },
    // Router errors (malformed percent-encoding, over-long parameters) as problem+json too.
    frameworkErrors: handleFrameworkError,
    // What Node's HTTP parser refuses (malformed request, headers too large, request timeout) as problem+json too.
    clientErrorHandler: handleClientError,
    requestTimeout: config.requestTimeoutMs,
    // request.ip, which every per-address limit counts: the X-Forwarded-For client only behind a listed proxy.
    trustProxy: config.trustProxy.length > 0 ? config.trustProxy : false,
  }).withTypeProvider<TypeBoxTypeProvider>();

  const adapters = await composeAdapters(config, deps, app.log);
  try {
    return await registerAll(app, config, deps, adapters);
  } catch (err) {
    // The lifecycle plugins close the adapters on app.close(), but a caller never gets an app that failed to build.
    // A failure to close is logged: the caller is told why the build failed.
    const closers = [async () => adapters.webhooks?.stop(), () => adapters.verifier.close(), () => adapters.store.close()];
    for (const close of closers) {
      await close().catch((closeErr: unknown) => app.log.warn({ err: closeErr }, 'closing an adapter after a failed build failed'));
    }
    throw err;
  }
}

/** buildApp's hooks and plugins, on the adapters composeAdapters opened. */
async function registerAll(app: FastifyInstance, config: Config, deps: AppDeps, adapters: Adapters): Promise<ServiceApp> {
  const { store, now, metrics, plans, verifier, executor, timers, routes, onVerdicts, webhooks, attestor, attestationFacts } = adapters;
  // While draining and shutting down, every answer closes its connection, so that no keep-alive client writes its next
  // request to a socket close() is about to end, and close() need not wait for the client's keep-alive to end.
  let draining = false;
  let closing = false;
  const drain = () => {
    if (!draining) app.log.info('draining: readiness 503, connections closed after each answer');
    draining = true;
  };
  app.addHook('preClose', async () => {
    closing = true;
    const closeIdle = app.server.closeIdleConnections.bind(app.server);
    app.server.closeIdleConnections = () => setTimeout(closeIdle, IDLE_GRACE_MS).unref();
  });
  app.addHook('onRequest', async () => {
    if (closing) throw new ShuttingDown('retry, and another will answer');
  });
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (draining || closing) reply.header('connection', 'close');
  });

  // After the hooks above: on close, new requests are refused before the timers stop and the webhooks finish.
  await app.register(storeLifecycle, {
    store, now, retentionDays: config.executionRetentionDays, purgeIntervalMs: config.executionPurgeIntervalMs, idempotencyTtlMs: IDEMPOTENCY_TTL_MS,
  });
  await app.register(verifierLifecycle, { verifier, warm: deps.warmVerification === true });
  await app.register(scenarioTimers, { timers });
  if (webhooks) await app.register(webhooksLifecycle, { webhooks });

  // JSON only: Fastify also parses text/plain by default, which would turn a wrong Content-Type into a 400.
  app.removeContentTypeParser('text/plain');
  useJsonParser(app);
  const validators = installValidators(app);
  await app.register(problemDetails);

  await app.register(openApiDocs, { ui: config.docs });

  // Before protection and auth: a preflight is answered before them, and their refusals carry the CORS headers.
  if (config.corsOrigins.length > 0) await app.register(corsPlugin, { origins: config.corsOrigins });
  const authenticate = createAuthenticator(config.apiTokens, config.jwt);
  await app.register(protection, { rateLimit: config.rateLimit, maxEventLoopDelayMs: config.maxEventLoopDelayMs, identify: authenticate.identify });

  // Open routes: health, metrics and the scenario types' own (OffChainZKP's wallet callback, which the proof authenticates).
  await app.register(healthRoutes, { store, stopping: () => draining || closing });
  await app.register(metricsPlugin, { metrics });
  await app.register(typeRoutes, { routes });
  await app.register(jwksRoute, { attestor });
  // Everything else takes a bearer token with the route's scope.
  await app.register(async (secured) => {
    await secured.register(auth, { authenticate });
    const idempotent = idempotency(store, now);
    await secured.register(scenarioRoutes, { store, plans, validators, idempotent, now, validate: async (s) => [...webhookProblems(s, config.webhook), ...(await executor.validate(s))] });
    await secured.register(executeRoutes, { store, plans, now, idempotent, executor, onVerdicts, coldRefusal: (t) => verifier.coldRefusal(t), webhook: config.webhook, attestor, attestationFacts });
    const revisions = new RevisionService(store);
    await secured.register(revisionRoutes, { revisions });
    await secured.register(executionRoutes, { store, now, revisions });
    await secured.register(attestationRoutes, { store, attestor, now });
    await secured.register(webhookSecretRoute, { webhook: config.webhook });
  });

  // A property of the root instance, typed by ServiceApp, not a decorator every FastifyInstance would claim to have.
  return Object.assign(app, { drain });
}
