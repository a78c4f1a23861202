import type { AttestationConfig } from '../domain/attestation.js';
import type { ChainSettings } from '../chain/config.js';
import type { WebhookConfig } from '../domain/webhooks.js';
import type { JwtOptions, StaticToken } from '../domain/auth-settings.js';
import type { DatabaseConfig } from '../store/config.js';
import type { TrustOptions } from '../trust/types.js';
import type { ZkpEnvConfig } from '../zkp/env.js';

/** The service's configuration, read once at start by loadConfig (src/config.ts). */
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
  /** Origins whose browser pages may call the API (CORS); empty = CORS off. */
  corsOrigins: string[];
  /** How long SIGTERM waits for in-flight requests before the process exits anyway. */
  shutdownTimeoutMs: number;
  /** On SIGTERM, how long to keep serving (readiness 503, Connection: close) before the listener closes. */
  shutdownDelayMs: number;
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
  /** Proxies (addresses, CIDRs) whose X-Forwarded-For names the client address; empty = none. */
  trustProxy: string[];
  /** The URL wallets reach this service at (callback URLs); required where ZKP_VERIFIER_DID is set, never a request's Host. */
  publicBaseUrl?: string;
  /** Execution webhooks (WEBHOOK_*), when WEBHOOK_SECRET is set. */
  webhook?: WebhookConfig;
  /** Signed attestations of executions' verdicts (ATTESTATION_*). */
  attestation: AttestationConfig;
  /** Execution audit records older than this many days are purged. */
  executionRetentionDays: number;
  /** How often the purge runs. */
  executionPurgeIntervalMs: number;
  /** Server processes (node:cluster) sharing the port; 1 = this process serves alone. */
  workers: number;
}
