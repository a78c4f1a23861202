/** The composition root: every I/O adapter and the execution service are built here, and nowhere else. */
import cluster from 'node:cluster';
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import { SharedBudgets, hashed } from './budgets/shared.js';
import { chainReaderFor, type ProofStatusReader } from './chain/index.js';
import { clusterMetrics } from './cluster.js';
import { createDocumentLoader, credentialTypeDocuments } from './jsonld/documents.js';
import type { Config } from './config.js';
import { PlanCache } from './domain/plan-cache.js';
import { createAttestor, type Attestor } from './domain/attestation.js';
import { WebhookDispatcher } from './domain/webhooks.js';
import type { Resolve } from './domain/webhook-guard.js';
import { Executor, attestationFacts, createStrategies, routesOf, timersOf, typeDeclarations, type BoundRoute, type BoundTimer } from './execution/index.js';
import { Metrics } from './domain/metrics.js';
import type { ExecutionResult } from './schemas/execution.js';
import { ExecutionLifecycle } from './services/executions.js';
import { DeploymentRecorder } from './services/deployment-records.js';
import { DeploymentFollower } from './services/deployment-follower.js';
import { RequestCheck } from './chain/request-check.js';
import { RequestMatcher } from './chain/request-match.js';
import { RevisionService } from './services/revisions.js';
import { ShadowRunner } from './services/shadows.js';
import { openStore, type ChainSend, type Store } from './store/index.js';
import { observeStore } from './store/observer.js';
import { createDemoIssuer, demoStatePublication, demoStatusResolver, revokeDemoNonce } from './trust/demo-issuer.js';
import { knownTypesOnce } from './domain/credential-types.js';
import { createCredentialVerifier, type CredentialVerifier, type TrustDeps } from './trust/index.js';
import { onchainStatusResolver } from './trust/onchain-status.js';
import type { StateResolvers } from './zkp/state.js';

export interface AppDeps {
  /** The app closes it on close either way. */
  store?: Store;
  logger?: FastifyServerOptions['logger'];
  now?: () => number;
  chain?: ProofStatusReader;
  zkpStateResolvers?: StateResolvers;
  /** For the SSRF guard (default: the system's resolver). */
  webhookResolve?: Resolve;
  trust?: TrustDeps;
  /** Start the cold verification threads when ready instead of at the first new credential. */
  warmVerification?: boolean;
  /** Test hook of DeploymentService: after a deploy send is stored, before it is broadcast. */
  beforeBroadcast?: (send: ChainSend) => void | Promise<void>;
  /** Test hook: before a deploy's setMultiRequest is reserved (DeploymentService). */
  beforeFollowUp?: (send: ChainSend) => void | Promise<void>;
}

/** Built once per app, closed by the app's onClose. */
export interface Adapters {
  store: Store;
  now: () => number;
  metrics: Metrics;
  plans: PlanCache;
  verifier: CredentialVerifier;
  executor: Executor;
  executions: ExecutionLifecycle;
  revisions: RevisionService;
  shadows: ShadowRunner;
  timers: BoundTimer[];
  routes: BoundRoute[];
  /** Where WEBHOOK_SECRET is set. */
  webhooks?: WebhookDispatcher;
  attestor: Attestor;
  /** The service's own deployment records (the follower's, the deploy route's). */
  deployments: DeploymentRecorder;
  /** Where a chain is configured. */
  follower?: DeploymentFollower;
  /** Where REDIS_URL is set. */
  budgets?: SharedBudgets;
}

/** With DEMO_ISSUER=1 the demo issuer is trusted too, its statuses and states given in process. */
async function credentialVerifier(config: Config, given: TrustDeps, log: FastifyBaseLogger): Promise<CredentialVerifier> {
  if (config.trust.mode === 'off') {
    log.warn('CREDENTIAL_VERIFICATION=off: credentials are believed without checks; every result says verification "off". Development only.');
  }
  let deps: TrustDeps = config.chains.chains.size === 0
    ? given
    : {
        ...given,
        statusResolvers: { Iden3OnchainSparseMerkleTreeProof2023: await onchainStatusResolver(config.chains), ...given.statusResolvers },
      };
  if (config.trust.issuerStates?.source === 'chain') {
    // viem only here (src/chain/lazy.ts).
    const { stateContractPublication } = await import('./trust/state-contract.js');
    const fromChain = stateContractPublication({
      chains: config.chains, contracts: config.trust.issuerStates.contracts, shortCacheMs: config.trust.revocationCacheMs, clock: Date.now,
    });
    deps = { ...deps, statePublication: () => fromChain };
  }
  if (!config.demoIssuer) return createCredentialVerifier(config.trust, deps);
  const demo = await revokeDemoNonce(await createDemoIssuer({ statusUrl: `http://127.0.0.1:${config.port}/demo-issuer/status` }));
  log.warn({ issuer: demo.did }, 'DEMO_ISSUER=1: the demo issuer, whose key is public, is trusted. Never in production.');
  const trusted = config.trust.trustedIssuers;
  return createCredentialVerifier(
    { ...config.trust, trustedIssuers: trusted === '*' ? '*' : [...trusted, demo.did] },
    {
      ...deps,
      statusResolvers: { ...deps.statusResolvers, SparseMerkleTreeProof: demoStatusResolver(demo) },
      statePublication: (resolver) => demoStatePublication(demo, deps.statePublication?.(resolver) ?? resolver),
    },
  );
}

/** On failure, what was opened is closed. */
export async function composeAdapters(config: Config, deps: AppDeps, log: FastifyBaseLogger): Promise<Adapters> {
  const now = deps.now ?? Date.now;
  const metrics = new Metrics(cluster.isWorker ? clusterMetrics : undefined);
  const store = deps.store
    ? observeStore(deps.store, metrics)
    : await openStore(config.database, (err) => log.warn({ err }, 'database connection error'), metrics);
  const budgets = config.redis && new SharedBudgets(config.redis.url, config.redis.prefix, log, undefined, config.redis.commandTimeoutMs);
  try {
    await budgets?.connect();
    const onVerdicts = (results: readonly ExecutionResult[]) => metrics.countVerdicts(results);
    const chain = deps.chain ?? (await chainReaderFor(config.chains));
    // Answers under a digest of what they depend on: instances configured otherwise never take each other's.
    const t = config.trust;
    const settings = (...v: unknown[]) => hashed(JSON.stringify(v)).slice(0, 10);
    const shared = budgets && {
      coldBudget: budgets.coldBudget(),
      sharedStates: budgets.answers(`state:${settings(t.resolverUrl, t.resolverCacheMs, t.revocationCacheMs)}`),
      sharedRevocations: budgets.answers(`revocation:${settings(t.resolverUrl, t.revocationCacheMs, [...config.chains.chains.keys()], config.demoIssuer)}`),
    };
    const verifier = await credentialVerifier(config, { ...deps.trust, ...shared }, log);
    metrics.watchVerifier(() => verifier.stats());
    const plans = new PlanCache(typeDeclarations);
    const attestor = await createAttestor(config.attestation, (message) => log.warn(message));
    const executor = new Executor();
    const revisions = new RevisionService(store);
    const shadows: ShadowRunner = new ShadowRunner({
      store, plans, limit: config.shadowQueueLimit, maxBytes: config.shadowQueueBytes, evaluate: (compiled, job) => executions.shadowResults(compiled, job), // bound below, called after
      counted: (outcome) => metrics.countShadow(outcome),
      failed: (err, context) => log.warn({ err, ...context }, 'a shadow evaluation or its write failed'),
    });
    const executions: ExecutionLifecycle = new ExecutionLifecycle({
      scenarios: store, executions: store, outbox: store, revisions, plans, now, executor, onVerdicts, webhook: config.webhook, attestor,
      attestationFacts: (type) => attestationFacts(type, config.trust), shadows,
    });
    const strategies = await createStrategies({
      pending: executions, answers: store, nullifiers: store, verifier, chain,
      credentialTypes: knownTypesOnce(() => credentialTypeDocuments(config.trust.documents)),
      // Offline: rules' contexts are checked at create time against what the service holds.
      documentLoader: createDocumentLoader({ documents: config.trust.documents }),
      allowUncheckedRequests: config.chains.allowUncheckedRequests,
      zkp: config.zkp, publicBaseUrl: config.publicBaseUrl, stateResolvers: deps.zkpStateResolvers,
    }).catch(async (err: unknown) => {
      await verifier.close();
      throw err;
    });
    executor.register(Object.values(strategies));
    const webhooks = config.webhook ? new WebhookDispatcher(store, config.webhook, log, now, deps.webhookResolve) : undefined;
    const deployments = new DeploymentRecorder({ store, plans, webhook: config.webhook, now });
    // Compares a rule with its request as the OnChainZKP strategy does.
    const check = new RequestCheck({
      allowUnchecked: config.chains.allowUncheckedRequests,
      matcher: new RequestMatcher({ contexts: config.zkp.contexts, documentLoader: createDocumentLoader({ documents: config.trust.documents }) }),
    });
    const follower = config.chains.chains.size > 0
      ? new DeploymentFollower({ store, recorder: deployments, settings: config.chains, reader: chain, check, log, now })
      : undefined;
    if (follower) metrics.watchFollower(() => follower.snapshot());
    return {
      store, now, metrics, plans, verifier, executor, executions, revisions, shadows, timers: timersOf(strategies), routes: routesOf(strategies), webhooks, attestor,
      deployments, follower, budgets,
    };
  } catch (err) {
    await budgets?.close();
    await store.close();
    throw err;
  }
}
