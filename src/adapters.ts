/** The composition root: every I/O adapter is built here and nowhere else; tests hand theirs in through AppDeps. */
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
import type { ScenarioType } from './schemas/scenario.js';
import { openStore, type Store } from './store/index.js';
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
  /** Epoch ms. */
  now?: () => number;
  chain?: ProofStatusReader;
  zkpStateResolvers?: StateResolvers;
  webhookResolve?: Resolve;
  trust?: TrustDeps;
  warmVerification?: boolean;
}

export interface Adapters {
  store: Store;
  now: () => number;
  metrics: Metrics;
  plans: PlanCache;
  verifier: CredentialVerifier;
  executor: Executor;
  timers: BoundTimer[];
  routes: BoundRoute[];
  onVerdicts: (results: readonly ExecutionResult[]) => void;
  webhooks?: WebhookDispatcher;
  /** Signs nothing when no key is configured. */
  attestor: Attestor;
  attestationFacts: (type: ScenarioType) => { holderBound: boolean; credentialsVerified: boolean };
}

/** With DEMO_ISSUER=1 the demo issuer's statuses and states are answered in process: demo credentials need no server. */
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

/** On failure, what was opened is closed. */
export async function composeAdapters(config: Config, deps: AppDeps, log: FastifyBaseLogger): Promise<Adapters> {
  const now = deps.now ?? Date.now;
  const metrics = new Metrics(cluster.isWorker ? clusterMetrics : undefined);
  const store = deps.store
    ? observeStore(deps.store, metrics)
    : await openStore(config.database, (err) => log.warn({ err }, 'database connection error'), metrics);
  try {
    const onVerdicts = (results: readonly ExecutionResult[]) => metrics.countVerdicts(results);
    const chain = deps.chain ?? (await chainReaderFor(config.chains));
    const verifier = await credentialVerifier(config, deps.trust ?? {}, log);
    metrics.watchVerifier(() => verifier.stats());
    const strategies = await createStrategies({
      store, now, onVerdicts, verifier, chain,
      credentialTypes: knownTypesOnce(() => credentialTypeDocuments(config.trust.documents)),
      // Offline, for both ZKP types: rules' contexts are checked at create time against what the service holds.
      documentLoader: createDocumentLoader({ documents: config.trust.documents }),
      allowUncheckedRequests: config.chains.allowUncheckedRequests,
      zkp: config.zkp, publicBaseUrl: config.publicBaseUrl, webhook: config.webhook, stateResolvers: deps.zkpStateResolvers,
    }).catch(async (err: unknown) => {
      await verifier.close();
      throw err;
    });
    const executor = new Executor(Object.values(strategies));
    const webhooks = config.webhook ? new WebhookDispatcher(store, config.webhook, log, now, deps.webhookResolve) : undefined;
    const attestor = await createAttestor(config.attestation, (message) => log.warn(message));
    return {
      store, now, metrics, plans: new PlanCache(typeDeclarations), verifier, executor, timers: timersOf(strategies), routes: routesOf(strategies), onVerdicts, webhooks, attestor,
      attestationFacts: (type) => attestationFacts(type, config.trust),
    };
  } catch (err) {
    await store.close();
    throw err;
  }
}
