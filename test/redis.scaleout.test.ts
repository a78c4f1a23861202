/**
 * Three real server processes on one PostgreSQL and one Redis (REDIS_URL, through a TCP proxy the test stops and
 * starts: the machine's Redis itself is never stopped), requests sent round-robin as a load balancer would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scenario } from './helpers.js';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from './pg.js';
import { deleteUnder, freshPrefix, redisAvailable, redisProxy, type RedisProxy } from './redis.js';
import { build, call, killAll, start, type Server } from './server-process.js';

const LIMIT = 60;
const tokens = Array.from({ length: 10 }, (_, i) => `redis-scaleout-${i}-0123456789`);
const [FIRST, AFTER, READER, STALLED, ...WRITERS] = tokens as [string, string, string, string, ...string[]];
const schema = freshSchema('redisscale');
const prefix = freshPrefix('scaleout');
const available = pgAvailable && redisAvailable;
let proxy: RedisProxy;
let servers: Server[] = [];

beforeAll(async () => {
  if (!available) return;
  build();
  proxy = await redisProxy();
  const env = {
    DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema, DATABASE_CONNECT_TIMEOUT_MS: '10000', API_TOKENS: tokens.join(','),
    CREDENTIAL_VERIFICATION: 'off', REDIS_URL: proxy.url, REDIS_KEY_PREFIX: prefix,
    // The machine runs the rest of the suite meanwhile: a command held up by load is not an outage here.
    REDIS_COMMAND_TIMEOUT_MS: '1000',
    RATE_LIMIT_MAX: String(LIMIT), RATE_LIMIT_WINDOW_MS: '600000',
  };
  servers = await Promise.all([start(env), start(env), start(env)]);
}, 180_000);

afterAll(async () => {
  killAll();
  if (!available) return;
  await proxy.close();
  await dropSchema(schema);
  await deleteUnder(prefix);
});

/** `n` requests of one token, `concurrency` at a time, the i-th to instance i mod 3. */
async function spend(token: string, n: number, concurrency = 6) {
  const replies: { status: number; retryAfter: string | null }[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < n) {
      const i = next++;
      const reply = await call(servers[i % 3]!, token, 'GET', '/compliance/scenarios?limit=1');
      replies.push({ status: reply.status, retryAfter: reply.headers.get('retry-after') });
    }
  }));
  return replies;
}

const budgets = async (server: Server) => {
  const res = await fetch(`${server.url}/health/ready`);
  return { status: res.status, budgets: ((await res.json()) as { details?: { budgets?: string } }).details?.budgets };
};

describe.skipIf(!available)('three instances sharing their budgets through Redis', () => {
  it('serves one token sending 3x its limit its limit across the three (within 5%), every other request 429 with Retry-After', async () => {
    const replies = await spend(FIRST, 3 * LIMIT);
    const served = replies.filter((r) => r.status === 200).length;
    expect(Math.abs(served - LIMIT)).toBeLessThanOrEqual(LIMIT * 0.05);
    const limited = replies.filter((r) => r.status !== 200);
    expect(limited.length).toBe(3 * LIMIT - served);
    expect(limited.every((r) => r.status === 429 && Number(r.retryAfter) > 0)).toBe(true);
  });

  it('loses no acknowledged write and answers no 5xx over 60 s of mixed load with Redis gone in the middle, and shares again within 10 s of it answering', async () => {
    const statuses: number[] = [];
    const created: string[] = [];
    const running = { stop: false };
    let n = 0;
    const load = Promise.all(WRITERS.map(async (token, w) => {
      while (!running.stop) {
        const i = n++;
        const server = servers[i % 3]!;
        const reply = i % 2 === 0
          ? await call(server, token, 'POST', '/compliance/scenarios', { id: `w${w}-${i}`, input: scenario() })
          : await call(server, token, 'GET', '/compliance/scenarios?limit=5');
        statuses.push(reply.status);
        if (reply.status === 201) created.push(`w${w}-${i}`);
        // About one request a second per writer: a writer's LIMIT in its 600 s window is not reached in 60 s.
        await new Promise((resolve) => setTimeout(resolve, 800));
      }
    }));
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    // 60 s in all: 20 s shared, 20 s without Redis, then back (up to 10 s) and the rest shared.
    const began = Date.now();
    await sleep(20_000);
    await proxy.stop();
    await sleep(1000);
    expect(await Promise.all(servers.map(budgets))).toEqual(servers.map(() => ({ status: 200, budgets: 'per-process' })));
    await sleep(19_000);
    await proxy.start();
    const back = Date.now();
    let shared = false;
    while (!shared && Date.now() - back < 10_000) {
      shared = (await Promise.all(servers.map(budgets))).every((b) => b.status === 200 && b.budgets === 'shared');
      if (!shared) await sleep(200);
    }
    const sharedAfterMs = Date.now() - back;
    await sleep(Math.max(2000, 60_000 - (Date.now() - began)));
    running.stop = true;
    await load;

    expect(shared, `budgets shared again ${sharedAfterMs} ms after Redis answered`).toBe(true);
    // Logged once per outage by each instance, and once when shared again (on a loaded machine a command past its
    // 100 ms is an outage of its own too, logged the same way).
    for (const server of servers) {
      const outages = server.stdout().split('Redis does not answer').length - 1;
      expect(outages).toBeGreaterThanOrEqual(1);
      expect(server.stdout().split('Redis answers again').length - 1).toBe(outages);
    }
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(new Set(statuses)).toEqual(new Set([200, 201]));
    expect(created.length).toBeGreaterThan(20);
    // Read back through every instance, a page of 100 at a time (the reader's own budget).
    for (const server of servers) {
      const stored = new Set<string>();
      let cursor = '';
      do {
        const page = await call(server, READER, 'GET', `/compliance/scenarios?limit=100${cursor && `&cursor=${cursor}`}`);
        expect(page.status).toBe(200);
        for (const item of page.body.items) stored.add(item.id);
        cursor = page.body.nextCursor ?? '';
      } while (cursor !== '');
      expect(created.filter((id) => !stored.has(id))).toEqual([]);
    }

    // Shared again: a fresh token gets its limit across the three, not three times it.
    const replies = await spend(AFTER, 3 * LIMIT);
    const served = replies.filter((r) => r.status === 200).length;
    expect(Math.abs(served - LIMIT)).toBeLessThanOrEqual(LIMIT * 0.05);
  });

  it('stops sending to a Redis that stalls without closing the connection (per process, no 5xx), and shares again once it answers', async () => {
    proxy.stall();
    try {
      const first = await spend(STALLED, 30);
      expect(first.filter((r) => r.status !== 200)).toEqual([]);
      expect(await Promise.all(servers.map(budgets))).toEqual(servers.map(() => ({ status: 200, budgets: 'per-process' })));
      // 30 more requests send nothing to it (each would be a ~200-byte script call): only a PING a second per instance.
      const held = proxy.heldBytes;
      const more = await spend(STALLED, 30);
      expect(more.filter((r) => r.status !== 200)).toEqual([]);
      expect(proxy.heldBytes - held).toBeLessThan(30 * 100);
    } finally {
      proxy.resume();
    }
    const back = Date.now();
    let shared = false;
    while (!shared && Date.now() - back < 10_000) {
      shared = (await Promise.all(servers.map(budgets))).every((b) => b.status === 200 && b.budgets === 'shared');
      if (!shared) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(shared).toBe(true);
  });
});
