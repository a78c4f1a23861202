import type { AttestationConfig } from '../domain/attestation.js';
import type { ChainSettings } from '../chain/config.js';
import type { DeploySettings } from '../chain/deploy-config.js';
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
  approvalProjects: '*' | readonly string[];
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  bodyLimit: number;
  docs: boolean;
  /** The console at /console. */
  console: boolean;
  corsOrigins: string[];
  shutdownTimeoutMs: number;
  /** Serving on with readiness 503 after SIGTERM. */
  shutdownDelayMs: number;
  /** max 0: off. */
  rateLimit: { max: number; windowMs: number };
  dryRunsPerMinute: number;
  summariesPerMinute: number;
  summaryMaxExecutions: number;
  shadowQueueLimit: number;
  shadowQueueBytes: number;
  /** REDIS_URL: budgets shared across instances. */
  redis?: { url: string; prefix: string; commandTimeoutMs: number };
  /** 0: off. */
  maxEventLoopDelayMs: number;
  /** 0: no limit. */
  requestTimeoutMs: number;
  trust: TrustOptions;
  demoIssuer: boolean;
  chains: ChainSettings;
  deploy: DeploySettings;
  zkp: ZkpEnvConfig;
  trustProxy: string[];
  /** The URL wallets reach this service at; never a request's Host. */
  publicBaseUrl?: string;
  webhook?: WebhookConfig;
  attestation: AttestationConfig;
  executionRetentionDays: number;
  executionPurgeIntervalMs: number;
  workers: number;
}
