import path from 'node:path';

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
  /** Accepted bearer tokens; empty when API_TOKENS is unset (then the server makes one at start). */
  apiTokens: string[];
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  bodyLimit: number;
  /** Serve the Swagger UI at /docs. */
  docs: boolean;
  /** How long SIGTERM waits for in-flight requests before the process exits anyway. */
  shutdownTimeoutMs: number;
  /** Execution audit records older than this many days are purged. */
  executionRetentionDays: number;
  /** How often the purge runs. */
  executionPurgeIntervalMs: number;
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

function tokens(env: Env): string[] {
  const raw = env.API_TOKENS;
  if (raw === undefined || raw.trim() === '') return [];
  const list = raw.split(',').map((t) => t.trim()).filter((t) => t.length > 0);
  for (const t of list) {
    if (t.length < 16 || !/^[\x21-\x7e]+$/.test(t)) {
      throw new ConfigError('API_TOKENS must be a comma-separated list of tokens of at least 16 printable characters each');
    }
  }
  return list;
}

export function loadConfig(env: Env = process.env): Config {
  return {
    port: integer(env, 'PORT', 3000, 0, 65535),
    host: env.HOST?.trim() || '0.0.0.0',
    database: database(env),
    apiTokens: tokens(env),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    bodyLimit: integer(env, 'BODY_LIMIT', 1024 * 1024, 1024, 100 * 1024 * 1024),
    docs: bool(env, 'DOCS_ENABLED', true),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    executionRetentionDays: integer(env, 'EXECUTION_RETENTION_DAYS', 90, 1, 36_500),
    executionPurgeIntervalMs: integer(env, 'EXECUTION_PURGE_INTERVAL_MS', 3_600_000, 10, 86_400_000),
  };
}
