/**
 * The service's configuration: only from the environment, checked once at start. Each module declares its variables
 * as a TypeBox schema next to its code (service, auth and webhooks in src/config/, the store, trust, chains and ZKP in
 * their own directories); `configSchema` composes them, env-schema checks them, and each module's converter turns the
 * checked values into its options and checks what one value cannot say alone (PUBLIC_BASE_URL with ZKP_VERIFIER_DID,
 * AUTH_JWT_ISSUER with AUTH_JWKS_URL, WORKERS with an in-memory database). README's configuration table is written
 * from the same schemas (`npm run docs:config`; test/config.docs.test.ts fails when it drifts).
 *
 * Blank values: an empty or whitespace-only value is unset, for every variable, exactly as if it were absent (its
 * default applies); other values are trimmed. Every problem is a ConfigError whose one-line message names the variable.
 */
import type { JwtOptions, StaticToken } from './http/auth.js';
import { chainEnv, chainSettings, type ChainSettings } from './chain/config.js';
import type { WebhookConfig } from './domain/webhooks.js';
import { zkpEnv, zkpEnvConfig, type ZkpEnvConfig } from './zkp/env.js';
import { trustEnv, trustOptions } from './trust/env.js';
import type { TrustOptions } from './trust/types.js';
import { databaseConfig, storeEnv, type DatabaseConfig } from './store/config.js';
import { authEnv, authSettings } from './config/auth.js';
import type { ConfigSection } from './config/docs.js';
import { ConfigError } from './config/errors.js';
import { serviceEnv, serviceSettings } from './config/service.js';
import { composeSchemas, readEnv, type Env } from './config/variables.js';
import { webhookConfig, webhookEnv } from './config/webhook.js';

export { ConfigError };
export type { DatabaseConfig };

export interface Config {
  port: number;
  host: string;
  database: DatabaseConfig;
  /** Accepted static bearer tokens and their projects; empty when API_TOKENS is unset. */
  apiTokens: StaticToken[];
  /** JWT bearer tokens verified against a JWKS, when AUTH_JWKS_URL is set. */
  jwt?: JwtOptions;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  bodyLimit: number;
  /** Serve the Swagger UI at /docs. */
  docs: boolean;
  /** How long SIGTERM waits for in-flight requests before the process exits anyway. */
  shutdownTimeoutMs: number;
  /** Per-token rate limit: at most `max` requests per `windowMs` (max 0 = off). */
  rateLimit: { max: number; windowMs: number };
  /** Shed load with 503 when the event loop lags more than this (0 = off). */
  maxEventLoopDelayMs: number;
  /** A request that takes longer than this to arrive and be answered is cut off (0 = no limit). */
  requestTimeoutMs: number;
  /** Credential trust: proofs, trusted issuers, revocation, holder binding (CREDENTIAL_VERIFICATION, TRUSTED_ISSUERS, ...). */
  trust: TrustOptions;
  /** Trust the deterministic demo issuer and answer its revocation statuses in process (a demo, never production). */
  demoIssuer: boolean;
  /** OnChainZKP: chains to read verifier contracts from (CHAIN_*). */
  chains: ChainSettings;
  /** OffChainZKP: authorization requests and proof verification (ZKP_*). */
  zkp: ZkpEnvConfig;
  /** The URL wallets reach this service at (callback URLs); unset = derived from each request's Host. */
  publicBaseUrl?: string;
  /** Execution webhooks (WEBHOOK_*), when WEBHOOK_URL is set. */
  webhook?: WebhookConfig;
  /** Execution audit records older than this many days are purged. */
  executionRetentionDays: number;
  /** How often the purge runs. */
  executionPurgeIntervalMs: number;
  /** Server processes (node:cluster) sharing the port; 1 = this process serves alone. */
  workers: number;
}

/** Every module's variables, in README's order, with the heading and the file that declares them. */
export const CONFIG_SECTIONS: readonly ConfigSection[] = [
  { title: 'Service', source: 'src/config/service.ts', schema: serviceEnv },
  { title: 'Callers', source: 'src/config/auth.ts', schema: authEnv },
  { title: 'Store', source: 'src/store/config.ts', schema: storeEnv },
  { title: 'Credential trust', source: 'src/trust/env.ts', schema: trustEnv },
  { title: 'Chains (OnChainZKP)', source: 'src/chain/config.ts', schema: chainEnv },
  { title: 'Zero-knowledge proofs (OffChainZKP)', source: 'src/zkp/env.ts', schema: zkpEnv },
  { title: 'Webhooks', source: 'src/config/webhook.ts', schema: webhookEnv },
];

/** Every variable of the service: the modules' schemas composed (a name declared twice throws here, at import). */
export const configSchema = composeSchemas(serviceEnv, authEnv, storeEnv, trustEnv, chainEnv, zkpEnv, webhookEnv);

/** The configuration of `env` (process.env by default). Throws ConfigError naming the first bad variable. */
export function loadConfig(env: Env = process.env): Config {
  const values = readEnv(configSchema, env);
  const database = databaseConfig(values);
  const zkp = zkpEnvConfig(values);
  const service = serviceSettings(values, database);
  // Wallets get OffChainZKP callback URLs from PUBLIC_BASE_URL, never from a request's Host header (which any caller
  // sets: `Host: evil.example` would send the wallet's proof elsewhere).
  if (zkp.verifierDid !== undefined && service.publicBaseUrl === undefined) {
    throw new ConfigError('PUBLIC_BASE_URL is required where OffChainZKP is configured (ZKP_VERIFIER_DID is set): the URL wallets send their proofs to');
  }
  return {
    ...service,
    database,
    ...authSettings(values),
    trust: trustOptions(values),
    chains: chainSettings(values),
    zkp,
    webhook: webhookConfig(values),
  };
}
