/**
 * The composition root: every I/O adapter of the service is built here, from the configuration, and nowhere else
 * (the store, the chain reader, the credential verifier and its threads, the OffChainZKP verifier, the webhook sender,
 * the clock). Tests hand in real implementations on local servers through AppDeps instead.
 */
import cluster from 'node:cluster';
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
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
import { openStore, type Store } from './store/index.js';
import { observeStore } from './store/observer.js';
import { createDemoIssuer, demoStatePublication, demoStatusResolver, revokeDemoNonce } from './trust/demo-issuer.js';
import { knownTypesOnce } from './domain/credential-types.js';
import { createCredentialVerifier, type CredentialVerifier, type TrustDeps } from './trust/index.js';
import { onchainStatusResolver } from './trust/onchain-status.js';
import type { StateResolvers } from './zkp/state.js';

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
  /** Resolves webhook target hostnames for the SSRF guard (default: the system's resolver), for tests. */
  webhookResolve?: Resolve;
  /** Credential trust I/O (HTTP client, status resolvers), for tests on local servers. */
  trust?: TrustDeps;
  /** Start the cold verification threads when the app is ready instead of at the first new credential (the server does). */
  warmVerification?: boolean;
}

/** What the app runs on: built once per app by composeAdapters, closed by the app's onClose. */
export interface Adapters {
  store: Store;
  now: () => number;
  metrics: Metrics;
  plans: PlanCache;
  verifier: CredentialVerifier;
  executor: Executor;
  /** Every execution's start, completion and expiry, and the reads of recorded ones. */
  executions: ExecutionLifecycle;
  /** The scenario types' timers (plugins/lifecycle.ts scenarioTimers runs them). */
  timers: BoundTimer[];
  /** The scenario types' routes (http/type-routes.ts registers them). */
  routes: BoundRoute[];
  /** Execution webhooks, where WEBHOOK_SECRET is set. */
  webhooks?: WebhookDispatcher;
  /** Signs attestations of verdicts (ATTESTATION_*); signs nothing when no key is configured. */
  attestor: Attestor;
}

/**
 * The credential verifier of the configuration. With DEMO_ISSUER=1 the deterministic demo issuer is trusted too and
 * its revocation statuses and issuer states are answered in process, so demo credentials verify with no other server.
 */
async function credentialVerifier(config: Config, given: TrustDeps, log: FastifyBaseLogger): Promise<CredentialVerifier> {
  if (config.trust.mode === 'off') {
    log.warn('CREDENTIAL_VERIFICATION=off: credentials are believed without checks; every result says verification "off". Development only.');
  }
  // On-chain revocation statuses are read from the chains of CHAIN_RPC_URLS.
  let deps: TrustDeps = config.chains.chains.size === 0
    ? given
    : {
        ...given,
        statusResolvers: { Iden3OnchainSparseMerkleTreeProof2023: await onchainStatusResolver(config.chains), ...given.statusResolvers },
      };
  if (config.trust.issuerStates?.source === 'chain') {
    // viem only here (src/chain/lazy.ts): issuer states read from the State contracts of CHAIN_RPC_URLS.
    const { stateContractPublication } = await import('./trust/state-contract.js');
    const fromChain = stateContractPublication({
      chains: config.chains, contracts: config.trust.issuerStates.contracts, shortCacheMs: config.trust.revocationCacheMs, clock: Date.now,
    });
    deps = { ...deps, statePublication: () => fromChain };
  }
  if (!config.demoIssuer) return createCredentialVerifier(config.trust, deps);
  // It answers statuses only: DEMO_REVOKED_NONCE revoked (demo-credentials --revoked), every other nonce not.
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

/** Builds every adapter from the configuration; `deps` replaces some (tests). On failure, what was opened is closed. */
export async function composeAdapters(config: Config, deps: AppDeps, log: FastifyBaseLogger): Promise<Adapters> {
  const now = deps.now ?? Date.now;
  // In a cluster worker, /metrics sums every worker's figures.
  const metrics = new Metrics(cluster.isWorker ? clusterMetrics : undefined);
  // The metrics observe every store operation (a handed-in store too); the store knows only the observer's interface.
  const store = deps.store
    ? observeStore(deps.store, metrics)
    : await openStore(config.database, (err) => log.warn({ err }, 'database connection error'), metrics);
  try {
    const onVerdicts = (results: readonly ExecutionResult[]) => metrics.countVerdicts(results);
    const chain = deps.chain ?? (await chainReaderFor(config.chains));
    const verifier = await credentialVerifier(config, deps.trust ?? {}, log);
    metrics.watchVerifier(() => verifier.stats());
    const plans = new PlanCache(typeDeclarations);
    const attestor = await createAttestor(config.attestation, (message) => log.warn(message));
    const executor = new Executor();
    const executions = new ExecutionLifecycle({
      scenarios: store, executions: store, outbox: store, plans, now, executor, onVerdicts, webhook: config.webhook, attestor,
      attestationFacts: (type) => attestationFacts(type, config.trust),
    });
    // Each scenario type's strategy, built by its module (src/execution/registry.ts) from what it names here.
    const strategies = await createStrategies({
      pending: executions, answers: store, nullifiers: store, verifier, chain,
      // The credential types of the contexts the verifier's document loader holds (bundled and JSONLD_DOCUMENTS_FILE).
      credentialTypes: knownTypesOnce(() => credentialTypeDocuments(config.trust.documents)),
      // Offline, for both ZKP types: rules' contexts are checked at create time against what the service holds.
      documentLoader: createDocumentLoader({ documents: config.trust.documents }),
      allowUncheckedRequests: config.chains.allowUncheckedRequests,
      zkp: config.zkp, publicBaseUrl: config.publicBaseUrl, stateResolvers: deps.zkpStateResolvers,
    }).catch(async (err: unknown) => {
      await verifier.close();
      throw err;
    });
    executor.register(Object.values(strategies));
    const webhooks = config.webhook ? new WebhookDispatcher(store, config.webhook, log, now, deps.webhookResolve) : undefined;
    return {
      store, now, metrics, plans, verifier, executor, executions, timers: timersOf(strategies), routes: routesOf(strategies), webhooks, attestor,
    };
  } catch (err) {
    await store.close();
    throw err;
  }
}
