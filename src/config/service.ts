import { isIP } from 'node:net';
import os from 'node:os';
import { Type, type Static } from '@sinclair/typebox';
import type { Config } from './types.js';
import type { DatabaseConfig } from '../store/config.js';
import { ConfigError } from './errors.js';
import { flag, httpUrl, integer, oneOf, text } from './variables.js';

/** More processes than this only add memory on any machine we expect to run on. */
const MAX_WORKERS = 64;

export const serviceEnv = Type.Object({
  PORT: integer(0, 65535, { default: 3000, description: 'TCP port (0 picks a free one).' }),
  HOST: text({
    expect: 'a host name or IP address',
    pattern: '^[A-Za-z0-9._:%-]+$',
    default: '0.0.0.0',
    description: 'Address to listen on.',
  }),
  PUBLIC_BASE_URL: Type.Optional(text({
    expect: 'an http(s) URL',
    description: 'The URL wallets reach this service at, for OffChainZKP callback URLs. Required where `ZKP_VERIFIER_DID` is set ' +
      '(the service does not start without it): callback URLs never come from a request\'s `Host` header, which any caller sets.',
  })),
  TRUST_PROXY: Type.Optional(text({
    expect: 'comma-separated IP addresses or CIDRs (`10.0.0.0/8`)',
    docDefault: 'unset: no proxy is trusted',
    description: 'The load balancers or reverse proxies in front of the service: a request from one of them is taken to come from ' +
      'the client address its `X-Forwarded-For` names (Fastify\'s `trustProxy`), and that address is what every per-address ' +
      'limit counts (`RATE_LIMIT_MAX` without a token, `ZKP_RESPONSES_PER_MINUTE`). Unset, `X-Forwarded-For` is ignored: ' +
      'behind a proxy, every client then shares the proxy\'s address and its budgets.',
  })),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, {
    default: 'info',
    description: 'The least severe level logged; `silent` logs nothing.',
  }),
  BODY_LIMIT: integer(1024, 100 * 1024 * 1024, {
    default: 1024 * 1024,
    docDefault: '`1048576` (1 MiB)',
    description: 'Largest request body in bytes; larger ones get 413.',
  }),
  DOCS_ENABLED: flag({ default: true, description: 'Serve the Swagger UI at `/docs`.' }),
  CONSOLE: flag({
    default: true,
    description: 'Serve the compliance officers\' console at `/console` (static files; it signs in with a token the user pastes and calls only the public API).',
  }),
  CORS_ORIGINS: Type.Optional(text({
    expect: 'comma-separated origins such as `https://app.example.com` (scheme, host and port; never `*`)',
    docDefault: 'unset: no CORS, browsers on other origins cannot call',
    description: 'Browser pages on these origins may call the API (CORS: preflight answered, `ETag`, `Retry-After`, `Location`, ' +
      '`Idempotent-Replayed` and `x-request-id` readable). No cookies are used, so no credentials mode. See "From a browser".',
  })),
  SHUTDOWN_TIMEOUT_MS: integer(0, 600_000, {
    default: 10_000,
    description: 'On SIGTERM, how long in-flight requests may take before the process exits anyway.',
  }),
  SHUTDOWN_DELAY_MS: integer(0, 600_000, {
    default: 0,
    description: 'On SIGTERM, how long the service keeps serving before it stops listening: meanwhile `/health/ready` answers 503 ' +
      'and every answer carries `Connection: close`, so load balancers and keep-alive clients move away first. Set it to the ' +
      'time your load balancer or orchestrator takes to stop routing here (e.g. `5000` on Kubernetes). `SHUTDOWN_TIMEOUT_MS` ' +
      'counts after it.',
  }),
  RATE_LIMIT_MAX: integer(0, 100_000_000, {
    default: 6000,
    description: 'Requests per token per window (0 = no limit); past it, 429 with `Retry-After`. A token is one budget however ' +
      'its header (or a JWT\'s signature) is spelled; routes without a token, and requests with no, a malformed or an unknown ' +
      'token (401s included, and a JWT not yet seen to verify), count against the client address. Per instance, and per ' +
      'worker process with `WORKERS`; across them all with `REDIS_URL`.',
  }),
  RATE_LIMIT_WINDOW_MS: integer(1000, 86_400_000, { default: 60_000, description: 'The rate-limit window.' }),
  DRY_RUNS_PER_MINUTE: integer(0, 100_000_000, {
    default: 60,
    description: 'Dry runs (`POST /compliance/scenarios/dry-run`) per token and minute (429 beyond), instead of `RATE_LIMIT_MAX` ' +
      'on that route: a dry run verifies credentials as execute does but leaves no audit record. `0` leaves the route to ' +
      '`RATE_LIMIT_MAX`; `RATE_LIMIT_MAX=0` turns every limit off, this one too. Per instance, and per worker process with `WORKERS`; across them all with `REDIS_URL`.',
  }),
  SUMMARIES_PER_MINUTE: integer(0, 100_000_000, {
    default: 30,
    description: 'Summaries (`GET /compliance/scenarios/{id}/executions/summary`) per token and minute (429 beyond), instead of ' +
      '`RATE_LIMIT_MAX` on that route: a summary reads up to `SUMMARY_MAX_EXECUTIONS` records. `0` leaves the route to `RATE_LIMIT_MAX`; ' +
      '`RATE_LIMIT_MAX=0` turns every limit off, this one too. Per instance, and per worker process with `WORKERS`; across them all with `REDIS_URL`.',
  }),
  SUMMARY_MAX_EXECUTIONS: integer(1, 100_000_000, {
    default: 100_000,
    description: 'The most executions a summary counts: a period holding more is refused (400 naming `from`: narrow the period). ' +
      'Counted first with a LIMIT, so a refused summary reads at most this many index entries.',
  }),
  REDIS_URL: Type.Optional(text({
    expect: 'a redis:// or rediss:// URL',
    docDefault: 'unset: every budget is per process',
    description: 'A Redis server the instances share: `RATE_LIMIT_MAX`, `DRY_RUNS_PER_MINUTE`, `SUMMARIES_PER_MINUTE`, `ZKP_RESPONSES_PER_MINUTE` and ' +
      '`COLD_QUEUE_PER_TOKEN` then hold across every instance and worker instead of per process. Where Redis does not answer ' +
      '(100 ms a command), each process falls back to its own budgets, logs it once and shows it on `/health/ready`; it shares ' +
      'again once a PING (one a second) is answered in time. Issuer-state and revocation answers are shared there too, each ' +
      'for no longer than the instance that fetched it, or the one reading it, keeps it. Use a Redis with a password ' +
      '(`redis://:password@host:6379`, `rediss://` for TLS): a write there can make a revoked credential count as active. ' +
      'See "Budgets: per instance or across instances".',
  })),
  REDIS_KEY_PREFIX: text({
    expect: 'letters, digits and `:._-`, at most 64',
    pattern: '^[A-Za-z0-9:._-]{1,64}$',
    default: 'scs:',
    description: 'Prefix of every key the service writes to `REDIS_URL`\'s Redis (several deployments may share one Redis).',
  }),
  REDIS_COMMAND_TIMEOUT_MS: integer(10, 5000, {
    default: 100,
    description: 'How long a Redis command may take before the budgets fall back to per process for at least a second ' +
      '(one PING a second then decides when they are shared again). Each request waits for it at most once per outage.',
  }),
  SHADOW_QUEUE_LIMIT: integer(0, 10_000, {
    default: 256,
    description: 'Shadow evaluations waiting at once, per process (see "Shadow runs" in docs/governance.md): beyond it an ' +
      'execute\'s comparison with the shadowed revision is skipped and counted (`skipped`), so a shadow never queues without ' +
      'bound. Each waiting evaluation holds its execute\'s credentials in memory until it runs (SHADOW_QUEUE_BYTES bounds ' +
      'them too). `0` skips every comparison.',
  }),
  SHADOW_QUEUE_BYTES: integer(0, 1024 * 1024 * 1024, {
    default: 32 * 1024 * 1024,
    description: 'Execute bodies\' bytes that waiting shadow evaluations hold at once, per process: beyond it a comparison is ' +
      'skipped and counted (`skipped`). The parsed credentials take about 2.7 times their body\'s bytes. `0` skips every comparison.',
  }),
  MAX_EVENT_LOOP_DELAY_MS: integer(0, 60_000, {
    default: 1000,
    description: 'Shed load with 503 + `Retry-After` while the event loop\'s mean delay over a second exceeds this (0 = off).',
  }),
  REQUEST_TIMEOUT_MS: integer(0, 3_600_000, {
    default: 30_000,
    description: 'A request not received and answered within this is cut off (0 = none).',
  }),
  WORKERS: Type.Union([Type.Literal('auto'), Type.Integer({ minimum: 1, maximum: MAX_WORKERS })], {
    default: 1,
    description: 'Server processes sharing the port (node:cluster), or `auto` (one per CPU the process may run on, not a ' +
      'container\'s CPU quota). See "Several processes on one host". Not with an in-memory SQLite database.',
  }),
  DEMO_ISSUER: flag({
    default: false,
    description: 'Also trust the deterministic demo issuer (`node dist/scripts/demo-credentials.js`) and answer its revocation ' +
      'statuses in process. Its key is public: a demo only.',
  }),
  EXECUTION_RETENTION_DAYS: integer(1, 36_500, { default: 90, description: 'Execution audit records older than this are purged.' }),
  EXECUTION_PURGE_INTERVAL_MS: integer(10, 86_400_000, {
    default: 3_600_000,
    description: 'How often the purge runs (also once at start).',
  }),
});

export type ServiceEnv = Static<typeof serviceEnv>;

type ServiceSettings = Pick<Config,
  | 'port' | 'host' | 'publicBaseUrl' | 'trustProxy' | 'logLevel' | 'bodyLimit' | 'docs' | 'console' | 'corsOrigins' | 'shutdownTimeoutMs'
  | 'shutdownDelayMs' | 'rateLimit' | 'dryRunsPerMinute' | 'summariesPerMinute' | 'summaryMaxExecutions' | 'shadowQueueLimit' | 'shadowQueueBytes' | 'redis' | 'maxEventLoopDelayMs'
  | 'requestTimeoutMs' | 'workers' | 'demoIssuer' | 'executionRetentionDays' | 'executionPurgeIntervalMs'>;

/** `auto`: one per usable core. Each has its own store connections, so an in-memory SQLite cannot be shared. */
function workers(value: ServiceEnv['WORKERS'], database: DatabaseConfig): number {
  const n = value === 'auto' ? Math.min(os.availableParallelism(), MAX_WORKERS) : value;
  if (n > 1 && database.kind === 'sqlite' && database.file === ':memory:') {
    throw new ConfigError('WORKERS above 1 needs a database the processes share: an in-memory SQLite database is one per process');
  }
  return n;
}

function trustProxy(raw: string | undefined): string[] {
  if (raw === undefined) return [];
  return raw.split(',').map((e) => e.trim()).filter((e) => e !== '').map((entry, i) => {
    const [address = '', prefix, more] = entry.split('/');
    const family = isIP(address);
    const bits = family === 6 ? 128 : 32;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
    if (family === 0 || !prefixOk || more !== undefined) {
      throw new ConfigError(`TRUST_PROXY must be comma-separated IP addresses or CIDRs (e.g. 10.0.0.0/8); entry ${i + 1} is neither`);
    }
    return entry;
  });
}

function redis(url: string | undefined, prefix: string, commandTimeoutMs: number): Config['redis'] {
  if (url === undefined) return undefined;
  if (!URL.canParse(url) || !/^rediss?:$/.test(new URL(url).protocol)) throw new ConfigError('REDIS_URL must be a redis:// or rediss:// URL');
  return { url, prefix, commandTimeoutMs };
}

/** PUBLIC_BASE_URL: callback URLs are made by appending paths, so it may have a path but no query or fragment. */
function publicBaseUrl(value: string | undefined): string | undefined {
  const url = httpUrl('PUBLIC_BASE_URL', value);
  if (url !== undefined && /[?#]/.test(url)) {
    throw new ConfigError('PUBLIC_BASE_URL must not have a query (?) or fragment (#): callback URLs are made by appending paths to it');
  }
  return url;
}

/**
 * Each exactly as a browser sends `Origin`, so that the comparison is plain string equality. `*` is refused: the list
 * is what a deployment vouches for, and any page on the web calling with a user's token is not that.
 */
function corsOrigins(raw: string | undefined): string[] {
  if (raw === undefined) return [];
  return raw.split(',').map((o) => o.trim()).filter((o) => o.length > 0).map((origin) => {
    if (origin === '*') throw new ConfigError('CORS_ORIGINS must list origins explicitly; `*` is not accepted');
    let parsed: URL | undefined;
    try { parsed = new URL(origin); } catch { /* below */ }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.origin !== origin) {
      throw new ConfigError(`CORS_ORIGINS: "${origin}" is not an origin as browsers send it (e.g. https://app.example.com, lower case, no path or trailing slash)`);
    }
    return origin;
  });
}

/** WORKERS is checked against the database it would share. */
export function serviceSettings(env: ServiceEnv, database: DatabaseConfig): ServiceSettings {
  return {
    port: env.PORT,
    host: env.HOST,
    publicBaseUrl: publicBaseUrl(env.PUBLIC_BASE_URL),
    trustProxy: trustProxy(env.TRUST_PROXY),
    logLevel: env.LOG_LEVEL,
    bodyLimit: env.BODY_LIMIT,
    docs: env.DOCS_ENABLED,
    console: env.CONSOLE,
    corsOrigins: corsOrigins(env.CORS_ORIGINS),
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    shutdownDelayMs: env.SHUTDOWN_DELAY_MS,
    rateLimit: { max: env.RATE_LIMIT_MAX, windowMs: env.RATE_LIMIT_WINDOW_MS },
    dryRunsPerMinute: env.DRY_RUNS_PER_MINUTE,
    summariesPerMinute: env.SUMMARIES_PER_MINUTE,
    summaryMaxExecutions: env.SUMMARY_MAX_EXECUTIONS,
    shadowQueueLimit: env.SHADOW_QUEUE_LIMIT,
    shadowQueueBytes: env.SHADOW_QUEUE_BYTES,
    redis: redis(env.REDIS_URL, env.REDIS_KEY_PREFIX, env.REDIS_COMMAND_TIMEOUT_MS),
    maxEventLoopDelayMs: env.MAX_EVENT_LOOP_DELAY_MS,
    requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
    workers: workers(env.WORKERS, database),
    demoIssuer: env.DEMO_ISSUER,
    executionRetentionDays: env.EXECUTION_RETENTION_DAYS,
    executionPurgeIntervalMs: env.EXECUTION_PURGE_INTERVAL_MS,
  };
}
