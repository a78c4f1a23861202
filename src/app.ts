import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { composeAdapters, type Adapters, type AppDeps } from './adapters.js';
import type { Config } from './config.js';
import { auth, createAuthenticator } from './http/auth.js';
import { bodyPolicy } from './http/body-policy.js';
import { corsPlugin } from './http/cors.js';
import { openApiDocs } from './http/docs.js';
import { handleClientError, handleFrameworkError, problemDetails, ShuttingDown } from './http/errors.js';
import { attestationRoutes, jwksRoute } from './http/attestation.js';
import { executeRoutes } from './http/execute.js';
import { dryRunRoutes } from './http/dry-run.js';
import { executionRoutes } from './http/executions.js';
import { exportRoutes } from './http/export.js';
import { EvidenceExporter } from './services/export.js';
import { healthRoutes } from './http/health.js';
import { metricsPlugin } from './http/metrics.js';
import { idempotency } from './http/idempotency.js';
import { protection } from './http/protection.js';
import { scenarioRoutes, scenarioSchemaCheck } from './http/scenarios.js';
import { revisionRoutes } from './http/revisions.js';
import { approvalRoutes } from './http/approvals.js';
import { shadowRoutes } from './http/shadows.js';
import { databaseState } from './services/health.js';
import { IDEMPOTENCY_TTL_MS, IdempotencyKeys } from './services/idempotency.js';
import { ScenarioService } from './services/scenarios.js';
import { ApprovalService } from './services/approvals.js';
import { ShadowService } from './services/shadows.js';
import { typeRoutes } from './http/type-routes.js';
import { installValidators } from './http/validation.js';
import { terminalLogStream } from './http/log-stream.js';
import { webhookProblems } from './domain/webhooks.js';
import { webhookSecretRoute } from './http/webhook-secret.js';
import { deploymentsLifecycle, followerLifecycle, scenarioTimers, storeLifecycle, verifierLifecycle, webhooksLifecycle } from './plugins/lifecycle.js';
import { deploymentRoutes } from './http/deployments.js';
import { DeploymentService } from './services/deployments.js';
import { createDocumentLoader, credentialTypeDocuments } from './jsonld/documents.js';
import { knownTypesOnce } from './domain/credential-types.js';
import { credentialTypeRoutes } from './http/credential-types.js';
import { queryPolicies } from './execution/registry.js';
import { consoleRoutes } from './http/console.js';
import { meRoutes } from './http/me.js';
import { record, scenarioResponses } from './http/scenario-responses.js';
import type { ScenarioRow } from './store/types.js';

export type { AppDeps } from './adapters.js';

/** What only server.ts calls. */
export interface ServiceApp extends FastifyInstance {
  /**
   * Before close() on SIGTERM: readiness 503 and `Connection: close` while still serving, so clients move away first.
   */
  drain(): void;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * How long idle connections outlive the listener: Node ends them at once, cutting off one whose request is unread.
 */
const IDLE_GRACE_MS = 1000;

/** Never logged, should a serializer ever include them. */
export const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.body',
  'res.body',
  '*.credentials',
  '*.credentialSubject',
];

export async function buildApp(config: Config, deps: AppDeps = {}): Promise<ServiceApp> {
  const stream = deps.logger === undefined ? await terminalLogStream() : undefined;
  const app = Fastify({
    logger: deps.logger ?? { level: config.logLevel, redact: { paths: REDACT, censor: '[redacted]' }, ...(stream && { stream }) },
    bodyLimit: config.bodyLimit,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false } },
    // Fastify's defaults, stated: bodies with these keys are refused.
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // 503 problem+json from the hook below.
    return503OnClosing: false,
    // Ids of 128 characters, each percent-encoded.
    routerOptions: { maxParamLength: 512 },
    frameworkErrors: handleFrameworkError,
    clientErrorHandler: handleClientError,
    requestTimeout: config.requestTimeoutMs,
    // X-Forwarded-For only from a listed proxy.
    trustProxy: config.trustProxy.length > 0 ? config.trustProxy : false,
  }).withTypeProvider<TypeBoxTypeProvider>();

  const adapters = await composeAdapters(config, deps, app.log);
  try {
    return await registerAll(app, config, deps, adapters);
  } catch (err) {
    // A caller never gets an app that failed to build, to close.
    const closers = [async () => adapters.webhooks?.stop(), async () => adapters.follower?.stop(), async () => adapters.budgets?.close(), () => adapters.verifier.close(), () => adapters.store.close()];
    for (const close of closers) {
      await close().catch((closeErr: unknown) => app.log.warn({ err: closeErr }, 'closing an adapter after a failed build failed'));
    }
    throw err;
  }
}

async function registerAll(app: FastifyInstance, config: Config, deps: AppDeps, adapters: Adapters): Promise<ServiceApp> {
  const { store, now, metrics, plans, verifier, executor, executions, revisions, shadows, timers, routes, webhooks, attestor, follower, budgets } = adapters;
  // While draining and closing, no keep-alive client may write its next request to a socket close() is about to end.
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

  // After the hooks above: new requests are refused before the timers and webhooks stop.
  await app.register(storeLifecycle, {
    store, now, retentionDays: config.executionRetentionDays, purgeIntervalMs: config.executionPurgeIntervalMs, idempotencyTtlMs: IDEMPOTENCY_TTL_MS,
  });
  await app.register(verifierLifecycle, { verifier, warm: deps.warmVerification === true });
  // After the store's: closed before it, once the last request is answered, its comparisons written.
  app.addHook('onClose', () => shadows.close());
  await app.register(scenarioTimers, { timers });
  if (webhooks) await app.register(webhooksLifecycle, { webhooks });
  if (follower) await app.register(followerLifecycle, { follower });
  if (budgets) app.addHook('onClose', async () => budgets.close());

  await app.register(bodyPolicy);
  const validators = installValidators(app);
  const { approvalProjects } = config;
  const scenarios = new ScenarioService({
    store, plans, now, schema: scenarioSchemaCheck(validators),
    approvalRequired: (projectId) => approvalProjects === '*' || (projectId !== null && approvalProjects.includes(projectId)),
    validate: async (scenario) => [...webhookProblems(scenario, config.webhook), ...(await executor.validate(scenario))],
  });
  adapters.deployments.serializeWith(scenarioSerializer(app));
  const deployments = new DeploymentService({
    store, plans, now, deploy: config.deploy, chains: config.chains,
    requests: { contexts: config.zkp.contexts, documentLoader: createDocumentLoader({ documents: config.trust.documents }) },
    recorder: adapters.deployments, log: app.log,
    ...(deps.beforeBroadcast && { beforeBroadcast: deps.beforeBroadcast }),
    ...(deps.beforeFollowUp && { beforeFollowUp: deps.beforeFollowUp }),
  });
  await app.register(deploymentsLifecycle, { deployments, replaceAfterMs: config.deploy.replaceAfterMs });
  await app.register(problemDetails);

  await app.register(openApiDocs, { ui: config.docs });

  // Before protection and auth, so their refusals carry CORS headers.
  if (config.corsOrigins.length > 0) await app.register(corsPlugin, { origins: config.corsOrigins });
  const authenticate = createAuthenticator(config.apiTokens, config.jwt);
  await app.register(protection, {
    rateLimit: config.rateLimit, maxEventLoopDelayMs: config.maxEventLoopDelayMs, identify: authenticate.identify, store: budgets?.rateLimitStore(),
  });

  // Open routes; OffChainZKP's wallet callback is authenticated by its proof.
  await app.register(healthRoutes, {
    database: () => databaseState(store),
    stopping: () => draining || closing,
    deployers: () => deployments.deployerShortfalls(),
    ...(follower && { following: () => follower.snapshot() }),
    ...(budgets && { budgets: () => budgets.state() }),
  });
  await app.register(metricsPlugin, { metrics });
  await app.register(typeRoutes, { routes });
  await app.register(jwksRoute, { attestor });
  if (config.console) await app.register(consoleRoutes);
  await app.register(async (secured) => {
    await secured.register(auth, { authenticate });
    const idempotent = idempotency(new IdempotencyKeys(store, now), now);
    await secured.register(scenarioRoutes, { scenarios, idempotent });
    await secured.register(deploymentRoutes, { deployments });
    await secured.register(executeRoutes, { executions, idempotent, coldRefusal: (tenant) => verifier.coldRefusal(tenant), attestor });
    await secured.register(dryRunRoutes, { executions, scenarios, coldRefusal: (tenant) => verifier.coldRefusal(tenant), perMinute: config.dryRunsPerMinute });
    await secured.register(revisionRoutes, { revisions });
    await secured.register(meRoutes);
    await secured.register(credentialTypeRoutes, { credentialTypes: knownTypesOnce(() => credentialTypeDocuments(config.trust.documents)), policies: queryPolicies });
    await secured.register(approvalRoutes, { approvals: new ApprovalService({ store, plans, now }) });
    await secured.register(shadowRoutes, { shadows: new ShadowService(store, now) });
    await secured.register(executionRoutes, {
      executions, summariesPerMinute: config.summariesPerMinute, summaryMaxExecutions: config.summaryMaxExecutions,
    });
    await secured.register(exportRoutes, { exporter: new EvidenceExporter(store) });
    await secured.register(attestationRoutes, { executions, attestor });
    await secured.register(webhookSecretRoute, { webhook: config.webhook });
  });

  // Not a decorator every FastifyInstance would claim to have.
  return Object.assign(app, { drain });
}

/** A revision written outside a request (a deploy carried on at start) keeps the text the scenario's GET answers. */
function scenarioSerializer(app: FastifyInstance): (row: ScenarioRow) => string {
  let compiled: ((data: unknown) => string) | undefined;
  return (row) => {
    const compiler = app.serializerCompiler;
    if (compiler === undefined) throw new Error('the serializer compiler is set at ready');
    compiled ??= compiler({
      schema: scenarioResponses.read[200], method: 'GET', url: '/compliance/scenarios/:scenarioId', httpStatus: '200',
    }) as (data: unknown) => string;
    return compiled(record(row));
  };
}
