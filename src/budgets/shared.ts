/**
 * REDIS_URL's budgets across instances. A command Redis does not answer in time falls back to this process's own
 * budget: an outage costs the cross-instance guarantee, never a request.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import { Redis } from 'ioredis';
import type { SharedAnswers } from '../trust/did-resolver.js';
import type { SharedColdBudget } from '../trust/types.js';

const COMMAND_TIMEOUT_MS = 100; // REDIS_COMMAND_TIMEOUT_MS's default
const RECONNECT_MS = 1000;
/** A socket silent this long is destroyed, its sent commands failed (a stalled Redis sends no RST). */
const SOCKET_TIMEOUT_MS = 1000;
/** While down, one PING at most this often; shared again only once one answers in time. */
const PROBE_MS = 1000;
/** Timed-out reservations whose slots are still to be removed (each possibly held 60 s otherwise). */
const MAX_GHOSTS = 1000;
/** An instance killed mid-check frees its cold slots after this. */
const COLD_LEASE_MS = 60_000;

interface Log {
  warn(obj: object, msg: string): void;
  info(msg: string): void;
}

export interface BudgetState {
  budgets: 'shared' | 'per-process';
  since?: string;
}

/** One ZSET entry a slot, scored by its lease's end on Redis's clock (instances' clocks may differ). */
const RESERVE_COLD = `
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZCARD', KEYS[1])
local n = tonumber(ARGV[1])
if held + n > tonumber(ARGV[2]) then return held end
local lease = tonumber(ARGV[3])
for i = 1, n do redis.call('ZADD', KEYS[1], now + lease, ARGV[4] .. ':' .. i) end
redis.call('PEXPIRE', KEYS[1], lease)
return -1
`;

interface RateStore {
  incr(key: string, cb: (err: Error | null, result: { current: number; ttl: number } | null) => void, timeWindow: number, max: number): void;
  child(routeOptions: { routeInfo: { method: string; url: string }; continueExceeding?: boolean; exponentialBackoff?: boolean }): RateStore;
}

// The plugin's own stores (untyped), so counting is exactly the plugin's.
const require = createRequire(import.meta.url);
const LocalStore = require('@fastify/rate-limit/store/LocalStore') as new (continueExceeding: boolean, exponentialBackoff: boolean, cache?: number) => RateStore;
const RedisStore = require('@fastify/rate-limit/store/RedisStore') as new (continueExceeding: boolean, exponentialBackoff: boolean, redis: Redis, key: string) => RateStore;

/** No token, subject or client address is readable from Redis. */
export const hashed = (key: string) => createHash('sha256').update(key).digest('base64url').slice(0, 22);

export class SharedBudgets {
  private readonly redis: Redis;
  private downSince: number | undefined;
  private probing: NodeJS.Timeout | undefined;
  private readonly ghosts = new Map<string, { key: string; members: string[] }>();
  private closed = false;

  constructor(url: string, private readonly prefix: string, private readonly log: Log, private readonly coldLeaseMs = COLD_LEASE_MS, commandTimeoutMs = COMMAND_TIMEOUT_MS) {
    this.redis = new Redis(url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      connectTimeout: commandTimeoutMs * 10,
      commandTimeout: commandTimeoutMs,
      socketTimeout: Math.max(SOCKET_TIMEOUT_MS, commandTimeoutMs * 10),
      maxRetriesPerRequest: 0,
      retryStrategy: () => RECONNECT_MS,
    });
    this.redis.defineCommand('reserveCold', { numberOfKeys: 1, lua: RESERVE_COLD });
    this.redis.on('error', (err: Error) => this.failed(err));
    this.redis.on('ready', () => this.answered());
  }

  async connect(): Promise<void> {
    await this.redis.connect().catch((err: unknown) => this.failed(err));
  }

  state(): BudgetState {
    return this.downSince === undefined ? { budgets: 'shared' } : { budgets: 'per-process', since: new Date(this.downSince).toISOString() };
  }

  /**
   * Open circuit while down: no request waits on a Redis that timed out once. No error event comes between losing the
   * connection and the first failed reconnect.
   */
  private connected(): boolean {
    if (this.downSince !== undefined) return false;
    if (this.redis.status === 'ready') return true;
    this.failed(new Error(`the connection to Redis is ${this.redis.status}`));
    return false;
  }

  private failed(err: unknown): void {
    if (this.downSince !== undefined || this.closed) return;
    this.downSince = Date.now();
    this.log.warn({ err }, 'Redis does not answer: budgets are per process until it does (REDIS_URL)');
    this.probing = setInterval(() => this.probe(), PROBE_MS).unref();
  }

  private probe(): void {
    if (this.redis.status !== 'ready') return;
    this.redis.ping().then(() => this.answered(), () => {});
  }

  private answered(): void {
    if (this.downSince === undefined || this.closed) return;
    this.downSince = undefined;
    clearInterval(this.probing);
    this.log.info('Redis answers again: budgets are shared across instances');
    for (const [id, ghost] of this.ghosts) this.forget(id, ghost);
  }

  /**
   * Removes a timed-out reservation's slots once Redis answers again: it may have run the reservation after the client
   * gave up (even later than a ZREM sent at once: EVALSHA's NOSCRIPT makes ioredis send EVAL after it).
   */
  private forget(id: string, ghost: { key: string; members: string[] }): void {
    this.redis.zrem(ghost.key, ...ghost.members).then(() => this.ghosts.delete(id), () => {});
  }

  rateLimitStore(): FastifyRateLimitStoreCtor {
    const budgets = this;
    const fallback = (redisStore: RateStore, local: RateStore): RateStore => ({
      incr(key, cb, timeWindow, max) {
        if (!budgets.connected()) {
          local.incr(key, cb, timeWindow, max);
          return;
        }
        redisStore.incr(hashed(key), (err, result) => {
          if (err === null && result !== null) {
            budgets.answered();
            cb(null, result);
            return;
          }
          budgets.failed(err);
          local.incr(key, cb, timeWindow, max);
        }, timeWindow, max);
      },
      child(routeOptions) {
        const route = `${budgets.prefix}rl:${hashed(`${routeOptions.routeInfo.method} ${routeOptions.routeInfo.url}`)}:`;
        const continueExceeding = routeOptions.continueExceeding === true;
        const exponentialBackoff = routeOptions.exponentialBackoff === true;
        return fallback(new RedisStore(continueExceeding, exponentialBackoff, budgets.redis, route), new LocalStore(continueExceeding, exponentialBackoff));
      },
    });
    return class {
      constructor(options: { continueExceeding?: boolean; exponentialBackoff?: boolean }) {
        const continueExceeding = options.continueExceeding === true;
        const exponentialBackoff = options.exponentialBackoff === true;
        return fallback(
          new RedisStore(continueExceeding, exponentialBackoff, budgets.redis, `${budgets.prefix}rl:`),
          new LocalStore(continueExceeding, exponentialBackoff),
        );
      }
    } as unknown as FastifyRateLimitStoreCtor;
  }

  coldBudget(): SharedColdBudget {
    return {
      reserve: async (tenant, n, max) => {
        if (!this.connected()) return undefined;
        const key = `${this.prefix}cold:${hashed(tenant)}`;
        const id = randomUUID();
        const members = Array.from({ length: n }, (_, i) => `${id}:${i + 1}`);
        let held: number;
        try {
          held = await (this.redis as Redis & { reserveCold(...args: unknown[]): Promise<number> }).reserveCold(key, n, max, this.coldLeaseMs, id);
        } catch (err) {
          if (this.ghosts.size < MAX_GHOSTS) this.ghosts.set(id, { key, members });
          this.failed(err);
          return undefined;
        }
        this.answered();
        if (held >= 0) return { admitted: false, held };
        return {
          admitted: true,
          release: () => {
            // A release Redis misses is freed by the lease.
            this.redis.zrem(key, ...members).catch(() => {});
          },
        };
      },
    };
  }

  /** Under `namespace`; a failure is a miss, as a cold cache. */
  answers(namespace: string): SharedAnswers {
    const keyOf = (key: string) => `${this.prefix}${namespace}:${hashed(key)}`;
    return {
      get: async (key) => {
        if (!this.connected()) return undefined;
        try {
          const [value, ttlMs] = await this.redis.multi().get(keyOf(key)).pttl(keyOf(key)).exec().then((replies) => replies?.map(([, v]) => v) ?? []);
          this.answered();
          return typeof value === 'string' && typeof ttlMs === 'number' && ttlMs > 0 ? { value, ttlMs } : undefined;
        } catch (err) {
          this.failed(err);
          return undefined;
        }
      },
      set: (key, value, ttlMs, ifAbsent) => {
        if (!this.connected()) return;
        const px = Math.max(1, Math.floor(ttlMs));
        (ifAbsent === true ? this.redis.set(keyOf(key), value, 'PX', px, 'NX') : this.redis.set(keyOf(key), value, 'PX', px))
          .catch((err: unknown) => this.failed(err));
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.probing);
    this.redis.disconnect();
  }
}
