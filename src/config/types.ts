import type { AttestationConfig } from '../domain/attestation.js';
import type { ChainSettings } from '../chain/config.js';
import type { WebhookConfig } from '../domain/webhooks.js';
import type { JwtOptions, StaticToken } from '../domain/auth-settings.js';
import type { DatabaseConfig } from '../store/config.js';
import type { TrustOptions } from '../trust/types.js';
import type { ZkpEnvConfig } from '../zkp/env.js';

export interface Config {
  port: number;
  host: string;
  database: DatabaseConfig;
  apiTokens: StaticToken[];
  jwt?: JwtOptions;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  bodyLimit: number;
  docs: boolean;
  /** Empty: CORS off. */
  corsOrigins: string[];
  shutdownTimeoutMs: number;
  /** On SIGTERM, how long to keep serving (readiness 503, Connection: close) before the listener closes. */
  shutdownDelayMs: number;
  /** max 0: off. */
  rateLimit: { max: number; windowMs: number };
  /** 0: off. */
  maxEventLoopDelayMs: number;
  /** 0: no limit. */
  requestTimeoutMs: number;
  trust: TrustOptions;
  /** A demo, never production. */
  demoIssuer: boolean;
  chains: ChainSettings;
  zkp: ZkpEnvConfig;
  /** Proxies whose X-Forwarded-For names the client; empty: none. */
  trustProxy: string[];
  /** The URL wallets reach this service at; never a request's Host. */
  publicBaseUrl?: string;
  webhook?: WebhookConfig;
  attestation: AttestationConfig;
  executionRetentionDays: number;
  executionPurgeIntervalMs: number;
  /** 1: this process serves alone. */
  workers: number;
}
