import os from 'node:os';
import path from 'node:path';
import type { JwtOptions, StaticToken } from './http/auth.js';
import { ChainConfigError, chainSettingsFromEnv, type ChainSettings } from './chain/config.js';
import type { WebhookConfig } from './domain/webhooks.js';
import { readZkpEnv, type ZkpEnvConfig } from './zkp/env.js';
import { ZkpOptionsError } from './zkp/errors.js';
import { TrustConfigError, trustOptionsFromEnv } from './trust/env.js';
import type { TrustOptions } from './trust/types.js';

export type DatabaseConfig =
  | { kind: 'sqlite'; file: string; synchronous: 'NORMAL' | 'FULL' }
  | {
      kind: 'postgres';
      url: string;
      /** A schema of its own, created when missing; unset = the server's default (public). */
      schema?: string;
      poolSize: number;
      statementTimeoutMs: number;
      connectionTimeoutMs: number;
    };

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

/** A configuration problem, with a one-line message naming the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got ${JSON.stringify(raw)})`);
  }
  return Number(raw);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = raw.trim().toLowerCase();
  const hit = allowed.find((a) => a.toLowerCase() === value);
  if (!hit) throw new ConfigError(`${name} must be one of ${allowed.join(', ')} (got ${JSON.stringify(raw)})`);
  return hit;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw.trim())) return true;
  if (/^(0|false|no|off)$/i.test(raw.trim())) return false;
  throw new ConfigError(`${name} must be true or false (got ${JSON.stringify(raw)})`);
}

/**
 * DATABASE_URL unset: SQLite at DATA_DIR/scenarios.db (DATA_DIR defaults to ./data).
 * sqlite:///abs/path.db is an absolute file, sqlite://relative/path.db one relative to the working directory;
 * postgres:// or postgresql:// selects PostgreSQL.
 */
function database(env: Env): DatabaseConfig {
  const url = env.DATABASE_URL?.trim();
  const synchronous = oneOf(env, 'SQLITE_SYNCHRONOUS', ['NORMAL', 'FULL'] as const, 'NORMAL');
  if (!url) {
    const dir = env.DATA_DIR?.trim() || './data';
    return { kind: 'sqlite', file: path.resolve(dir, 'scenarios.db'), synchronous };
  }
  if (/^postgres(ql)?:\/\//i.test(url)) {
    try {
      new URL(url);
    } catch {
      throw new ConfigError('DATABASE_URL is not a valid postgres:// URL');
    }
    const schema = env.DATABASE_SCHEMA?.trim() || undefined;
    if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
      throw new ConfigError('DATABASE_SCHEMA must be a lowercase SQL identifier (a-z, 0-9, _; at most 63 characters)');
    }
    return {
      kind: 'postgres',
      url,
      schema,
      poolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
      statementTimeoutMs: integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 2000, 10, 600_000),
      connectionTimeoutMs: integer(env, 'DATABASE_CONNECT_TIMEOUT_MS', 2000, 10, 600_000),
    };
  }
  const sqlite = /^sqlite:\/\/(.+)$/i.exec(url);
  if (sqlite) {
    const rest = sqlite[1];
    if (rest === ':memory:' || rest === '/:memory:') return { kind: 'sqlite', file: ':memory:', synchronous };
    return { kind: 'sqlite', file: rest.startsWith('/') ? rest : path.resolve(rest), synchronous };
  }
  throw new ConfigError('DATABASE_URL must start with sqlite:// or postgres:// (see README)');
}

/**
 * API_TOKENS: comma-separated `token`, `token:*` or `token:projA+projB`. A token without projects, or with `*`, is
 * an operator token for every project (so configurations from before tenancy keep working).
 */
function tokens(env: Env): StaticToken[] {
  const raw = env.API_TOKENS;
  if (raw === undefined || raw.trim() === '') return [];
  return raw.split(',').map((t) => t.trim()).filter((t) => t.length > 0).map((entry) => {
    const at = entry.indexOf(':');
    const token = at < 0 ? entry : entry.slice(0, at);
    const scope = at < 0 ? '*' : entry.slice(at + 1);
    if (token.length < 16 || !/^[\x21-\x7e]+$/.test(token)) {
      throw new ConfigError('API_TOKENS must be a comma-separated list of tokens of at least 16 printable characters each (optionally token:projA+projB or token:*)');
    }
    if (scope === '*' || scope === '') return { token, projects: '*' as const };
    const projects = scope.split('+');
    if (projects.some((p) => !/^[A-Za-z0-9_.-]{1,128}$/.test(p))) {
      throw new ConfigError('API_TOKENS: projects after ":" must be ids of [A-Za-z0-9_.-] joined by "+", or "*"');
    }
    return { token, projects };
  });
}

function jwt(env: Env): Config['jwt'] {
  const jwksUrl = env.AUTH_JWKS_URL?.trim();
  if (!jwksUrl) return undefined;
  try {
    const u = new URL(jwksUrl);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error();
  } catch {
    throw new ConfigError('AUTH_JWKS_URL must be an http(s) URL');
  }
  const issuer = env.AUTH_JWT_ISSUER?.trim();
  const audience = env.AUTH_JWT_AUDIENCE?.trim();
  if (!issuer) throw new ConfigError('AUTH_JWT_ISSUER is required when AUTH_JWKS_URL is set');
  if (!audience) throw new ConfigError('AUTH_JWT_AUDIENCE is required when AUTH_JWKS_URL is set');
  return { jwksUrl, issuer, audience, projectsClaim: env.AUTH_JWT_PROJECTS_CLAIM?.trim() || 'projects' };
}

/**
 * A module's own settings reader (trust, chains, ZKP), its settings errors turned into ConfigError: one line at start
 * naming the variable, like every other bad variable.
 */
function moduleSettings<T>(read: (env: Env) => T, env: Env, settingsError: abstract new (...args: never[]) => Error): T {
  try {
    return read(env);
  } catch (err) {
    if (err instanceof settingsError) throw new ConfigError(err.message);
    throw err;
  }
}

/** The most WORKERS may say: more processes than this only add memory on any machine we expect to run on. */
const MAX_WORKERS = 64;

/**
 * WORKERS: how many server processes share the port (node:cluster); `auto` = one per core this process may use.
 * Each has its own store connections, so an in-memory SQLite database (one per process) cannot be shared.
 */
function workers(env: Env, database: DatabaseConfig): number {
  const raw = env.WORKERS?.trim().toLowerCase() ?? '';
  const n = raw === 'auto' ? Math.min(os.availableParallelism(), MAX_WORKERS) : raw === '' ? 1 : /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= MAX_WORKERS)) {
    throw new ConfigError(`WORKERS must be auto or an integer from 1 to ${MAX_WORKERS} (got ${JSON.stringify(env.WORKERS)})`);
  }
  if (n > 1 && database.kind === 'sqlite' && database.file === ':memory:') {
    throw new ConfigError('WORKERS above 1 needs a database the processes share: an in-memory SQLite database is one per process');
  }
  return n;
}

function httpUrl(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  try {
    const u = new URL(raw);
    if (u.protocol === 'http:' || u.protocol === 'https:') return raw.replace(/\/+$/, '');
  } catch { /* below */ }
  throw new ConfigError(`${name} must be an http(s) URL`);
}

function publicBaseUrl(env: Env): string | undefined {
  return httpUrl(env, 'PUBLIC_BASE_URL');
}

function webhook(env: Env): WebhookConfig | undefined {
  const url = httpUrl(env, 'WEBHOOK_URL');
  if (!url) return undefined;
  const secret = env.WEBHOOK_SECRET ?? '';
  if (secret.length < 16) throw new ConfigError('WEBHOOK_SECRET (at least 16 characters) is required when WEBHOOK_URL is set');
  return {
    url,
    secret,
    maxAttempts: integer(env, 'WEBHOOK_MAX_ATTEMPTS', 8, 1, 100),
    retryBaseMs: integer(env, 'WEBHOOK_RETRY_BASE_MS', 1000, 10, 3_600_000),
    timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 5000, 100, 120_000),
    pollMs: integer(env, 'WEBHOOK_POLL_MS', 1000, 10, 60_000),
  };
}


export function loadConfig(env: Env = process.env): Config {
  const db = database(env);
  const zkp = moduleSettings(readZkpEnv, env, ZkpOptionsError);
  const base = publicBaseUrl(env);
  // Wallets get OffChainZKP callback URLs from PUBLIC_BASE_URL, never from a request's Host header (which any caller
  // sets: `Host: evil.example` would send the wallet's proof elsewhere).
  if (zkp.verifierDid !== undefined && base === undefined) {
    throw new ConfigError('PUBLIC_BASE_URL is required where OffChainZKP is configured (ZKP_VERIFIER_DID is set): the URL wallets send their proofs to');
  }
  return {
    port: integer(env, 'PORT', 3000, 0, 65535),
    host: env.HOST?.trim() || '0.0.0.0',
    database: db,
    apiTokens: tokens(env),
    jwt: jwt(env),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    bodyLimit: integer(env, 'BODY_LIMIT', 1024 * 1024, 1024, 100 * 1024 * 1024),
    docs: bool(env, 'DOCS_ENABLED', true),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    rateLimit: {
      max: integer(env, 'RATE_LIMIT_MAX', 6000, 0, 100_000_000),
      windowMs: integer(env, 'RATE_LIMIT_WINDOW_MS', 60_000, 1000, 86_400_000),
    },
    maxEventLoopDelayMs: integer(env, 'MAX_EVENT_LOOP_DELAY_MS', 1000, 0, 60_000),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 0, 3_600_000),
    trust: moduleSettings(trustOptionsFromEnv, env, TrustConfigError),
    demoIssuer: bool(env, 'DEMO_ISSUER', false),
    chains: moduleSettings(chainSettingsFromEnv, env, ChainConfigError),
    zkp,
    publicBaseUrl: base,
    webhook: webhook(env),
    executionRetentionDays: integer(env, 'EXECUTION_RETENTION_DAYS', 90, 1, 36_500),
    executionPurgeIntervalMs: integer(env, 'EXECUTION_PURGE_INTERVAL_MS', 3_600_000, 10, 86_400_000),
    workers: workers(env, db),
  };
}
