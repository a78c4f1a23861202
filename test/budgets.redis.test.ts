/**
 * REDIS_URL: the budgets held across instances, in-process apps on one real Redis (the real-process tier,
 * test/redis.scaleout.test.ts, runs three servers on PostgreSQL). Each test has a key prefix of its own.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SharedBudgets, hashed } from '../src/budgets/shared.js';
import { createDemoIssuer, nonceFromStatusPath } from '../src/trust/demo-issuer.js';
import { createCredentialVerifier } from '../src/trust/index.js';
import type { Credential } from '../src/schemas/credential.js';
import { trustOptions } from './trust/options.js';
import { startServer } from './trust/servers.js';
import { createStateResolver } from '../src/trust/did-resolver.js';
import { startDidResolver } from './trust/did-resolver-server.js';
import { ADDRESS, TOKEN, auth, demoCredential, makeApp, scenario } from './helpers.js';
import { REDIS_URL, deleteUnder, freshPrefix, keysUnder, redisAvailable, redisProxy, type RedisProxy } from './redis.js';

const quiet = { warn: () => {}, info: () => {} };
const prefixes: string[] = [];
const prefix = (name: string) => {
  const p = freshPrefix(name);
  prefixes.push(p);
  return p;
};
let apps: FastifyInstance[] = [];
// Sharing is what these apps test, not the 100 ms default: a loaded machine held a command longer, opened the breaker
// and served each process's own budget (CI). The breaker has tests of its own below.
const boot = async (n: number, env: Record<string, string>) => {
  apps = await Promise.all(Array.from({ length: n }, () => makeApp({ REDIS_COMMAND_TIMEOUT_MS: '1000', ...env })));
  return apps;
};
const list = (app: FastifyInstance, token = TOKEN) =>
  app.inject({ method: 'GET', url: '/compliance/scenarios', headers: { authorization: `Bearer ${token}` } });

afterEach(async () => {
  await Promise.all(apps.map((app) => app.close()));
  apps = [];
});
afterAll(async () => {
  if (redisAvailable) for (const p of prefixes) await deleteUnder(p);
});

describe.skipIf(!redisAvailable)('budgets shared through Redis', () => {
  it('holds one token to RATE_LIMIT_MAX across three instances, the rest 429 with Retry-After', async () => {
    const [a, b, c] = await boot(3, { REDIS_URL, REDIS_KEY_PREFIX: prefix('rate'), RATE_LIMIT_MAX: '10', RATE_LIMIT_WINDOW_MS: '60000' });
    // Warmed up (another key): a first command slower than 100 ms on this busy machine opens the circuit for 1 s.
    const ready = async (app: FastifyInstance) => (await app.inject({ method: 'GET', url: '/health/ready' })).json().details.budgets;
    for (const app of [a!, b!, c!]) {
      await list(app, 'warm-up-token-that-is-not-configured');
      const start = Date.now();
      while ((await ready(app)) !== 'shared' && Date.now() - start < 5000) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const replies = [];
    for (let i = 0; i < 30; i++) replies.push(await list([a!, b!, c!][i % 3]!));
    expect(replies.filter((r) => r.statusCode === 200)).toHaveLength(10);
    const limited = replies.filter((r) => r.statusCode === 429);
    expect(limited).toHaveLength(20);
    expect(limited.every((r) => Number(r.headers['retry-after']) > 0)).toBe(true);
    for (const app of [a!, b!, c!]) expect(await ready(app)).toBe('shared');
  });

  it('shares the per-route limits too: DRY_RUNS_PER_MINUTE across two instances', async () => {
    const [a, b] = await boot(2, { REDIS_URL, REDIS_KEY_PREFIX: prefix('dry'), DRY_RUNS_PER_MINUTE: '3', CREDENTIAL_VERIFICATION: 'off' });
    const statuses = [];
    for (let i = 0; i < 6; i++) {
      const res = await [a!, b!][i % 2]!.inject({
        method: 'POST', url: '/compliance/scenarios/dry-run', headers: auth, payload: { scenario: scenario(), address: ADDRESS, credentials: [] },
      });
      statuses.push(res.statusCode);
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
  });

  it('names its keys by digests: no token, token fingerprint or client address in Redis', async () => {
    const p = prefix('names');
    const [a] = await boot(1, { REDIS_URL, REDIS_KEY_PREFIX: p, RATE_LIMIT_MAX: '10' });
    expect((await list(a!)).statusCode).toBe(200);
    expect((await a!.inject({ method: 'GET', url: '/compliance/scenarios' })).statusCode).toBe(401);
    const keys = await keysUnder(p);
    expect(keys.length).toBeGreaterThanOrEqual(2);
    const fingerprint = createHash('sha256').update(TOKEN).digest('hex').slice(0, 12);
    for (const key of keys) {
      const name = key.slice(p.length);
      for (const secret of [TOKEN, fingerprint, '127.0.0.1', 'token:', 'ip:']) expect(name).not.toContain(secret);
    }
    expect(keys.some((k) => k.endsWith(hashed(`id:token:${fingerprint}`)))).toBe(true);
  });

  it('refuses a cold credential with 429 while other instances hold the token\'s COLD_QUEUE_PER_TOKEN, and verifies it once they release', async () => {
    const p = prefix('cold');
    const [a] = await boot(1, { REDIS_URL, REDIS_KEY_PREFIX: p, COLD_QUEUE_PER_TOKEN: '2' });
    const subject = `token:${createHash('sha256').update(TOKEN).digest('hex').slice(0, 12)}`;
    // Another instance, mid-check, holding both of the token's slots.
    const other = new SharedBudgets(REDIS_URL, p, quiet, undefined, 1000);
    await other.connect();
    try {
      const held = await other.coldBudget().reserve(subject, 2, 2);
      expect(held?.admitted).toBe(true);
      expect((await a!.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'kyc', input: scenario() } })).statusCode).toBe(201);
      const execute = async () => a!.inject({
        method: 'POST', url: '/compliance/scenarios/execute', headers: auth, payload: { address: ADDRESS, credentials: [await demoCredential()], scenarioId: 'kyc' },
      });
      const refused = await execute();
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toMatchObject({ code: 'SCS_VERIFICATION_BUDGET' });
      expect(refused.json().detail).toMatch(/across the service's instances/);
      if (held?.admitted) held.release();
      const served = await execute();
      expect(served.statusCode).toBe(200);
      expect(served.json().map((r: { result: { status: string } }) => r.result.status)).toEqual(['valid', 'valid']);
      // Released after the check: the token's slots are free again.
      const again = await other.coldBudget().reserve(subject, 2, 2);
      expect(again?.admitted).toBe(true);
      if (again?.admitted) again.release();
    } finally {
      await other.close();
    }
  });

  it('frees the slots of an instance that never releases them (killed mid-check) once their lease ends', async () => {
    const p = prefix('lease');
    const crashed = new SharedBudgets(REDIS_URL, p, quiet, 300, 1000);
    const alive = new SharedBudgets(REDIS_URL, p, quiet, 300, 1000);
    await Promise.all([crashed.connect(), alive.connect()]);
    try {
      expect((await crashed.coldBudget().reserve('t', 3, 3))?.admitted).toBe(true);
      expect(await alive.coldBudget().reserve('t', 1, 3)).toEqual({ admitted: false, held: 3 });
      await crashed.close();
      let admitted = false;
      for (let i = 0; i < 50 && !admitted; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        admitted = (await alive.coldBudget().reserve('t', 3, 3))?.admitted === true;
      }
      expect(admitted).toBe(true);
    } finally {
      await Promise.all([crashed.close(), alive.close()]);
    }
  });
});

describe.skipIf(!redisAvailable)('when Redis does not answer', () => {
  let proxy: RedisProxy;
  beforeAll(async () => {
    proxy = await redisProxy();
  });
  afterAll(async () => proxy.close());

  it('falls back to per-process budgets (never a 5xx), says so on /health/ready, and shares again once Redis answers', async () => {
    const [a, b] = await boot(2, { REDIS_URL: proxy.url, REDIS_KEY_PREFIX: prefix('outage'), RATE_LIMIT_MAX: '4', RATE_LIMIT_WINDOW_MS: '60000' });
    const details = async (app: FastifyInstance) => {
      const res = await app.inject({ method: 'GET', url: '/health/ready' });
      expect(res.statusCode).toBe(200);
      return res.json().details;
    };
    expect(await details(a!)).toEqual({ budgets: 'shared' });

    await proxy.stop();
    const during = [];
    for (let i = 0; i < 12; i++) during.push((await list([a!, b!][i % 2]!, TOKEN)).statusCode);
    expect(during.filter((s) => s >= 500)).toEqual([]);
    // Each instance its own 4.
    expect(during.filter((s) => s === 200)).toHaveLength(8);
    expect(await details(a!)).toMatchObject({ budgets: 'per-process', since: expect.any(String) });

    await proxy.start();
    const back = Date.now();
    let shared = false;
    while (!shared && Date.now() - back < 10_000) {
      shared = (await details(a!)).budgets === 'shared' && (await details(b!)).budgets === 'shared';
      if (!shared) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(shared).toBe(true);
  });

  it('starts while Redis does not answer (per process) and shares once it does', async () => {
    await proxy.stop();
    const budgets = new SharedBudgets(proxy.url, prefix('late'), quiet);
    try {
      await budgets.connect();
      expect(budgets.state()).toMatchObject({ budgets: 'per-process' });
      expect(await budgets.coldBudget().reserve('t', 1, 1)).toBeUndefined();
      await proxy.start();
      let reserved;
      for (let i = 0; i < 100 && reserved === undefined; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        reserved = await budgets.coldBudget().reserve('t', 1, 1);
      }
      expect(reserved?.admitted).toBe(true);
      expect(budgets.state()).toEqual({ budgets: 'shared' });
    } finally {
      await budgets.close();
    }
  });
});

describe.skipIf(!redisAvailable)('issuer-state answers shared through Redis', () => {
  it('lets instance B reuse what A fetched, for no longer than A keeps it: a state published meanwhile is seen as soon as by A alone', async () => {
    const resolver = await startDidResolver();
    const p = prefix('states');
    const [a, b] = [new SharedBudgets(REDIS_URL, p, quiet, undefined, 1000), new SharedBudgets(REDIS_URL, p, quiet, undefined, 1000)];
    await Promise.all([a.connect(), b.connect()]);
    try {
      const issuer = await createDemoIssuer({ seed: 'shared-answers-tests-issuer-0001', statusUrl: 'http://127.0.0.1:9/status' });
      const states = [];
      for (let i = 0; i < 2; i++) states.push((await issuer.advanceState()).state.value);
      resolver.publish(issuer.did, states[0]!);
      const SHORT_MS = 1500;
      const instance = (budgets: SharedBudgets) => createStateResolver({
        resolverUrl: resolver.base, fetch: (u, i) => fetch(u, i), timeoutMs: 5000, publishedCacheMs: 60_000, shortCacheMs: SHORT_MS,
        clock: Date.now, shared: budgets.answers('state'),
      });
      const [onA, onB] = [instance(a), instance(b)];
      const fetches = () => resolver.accepts.length;

      expect(await onA.isPublished(issuer.did, states[0]!)).toBe(true);
      expect(await onA.latestState(issuer.did)).toBe(states[0]);
      expect(fetches()).toBe(2);
      expect(await onB.isPublished(issuer.did, states[0]!)).toBe(true);
      expect(await onB.latestState(issuer.did)).toBe(states[0]);
      expect(fetches()).toBe(2);

      // A keeps its "latest" SHORT_MS, and so does Redis; B, which took it from there, keeps it no longer: once the
      // shared entry is gone, B asks the resolver and sees the state published meanwhile.
      resolver.publish(issuer.did, states[1]!);
      expect(await onB.latestState(issuer.did)).toBe(states[0]);
      const key = `${p}state:${hashed(`l\u0000${issuer.did}`)}`;
      expect(await keysUnder(p)).toContain(key);
      while ((await keysUnder(p)).includes(key)) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await onB.latestState(issuer.did)).toBe(states[1]);
      expect(fetches()).toBe(3);
      expect(await onA.latestState(issuer.did)).toBe(states[1]);
    } finally {
      await Promise.all([a.close(), b.close(), resolver.close()]);
    }
  });
});

describe.skipIf(!redisAvailable)('revocation answers shared through Redis', () => {
  it('lets instance B verify a credential A verified without a second status fetch, and no longer than A keeps the answer', async () => {
    let answer: (nonce: bigint) => Promise<unknown> = async () => undefined;
    const server = await startServer(async (req) => {
      const nonce = nonceFromStatusPath(new URL(req.url ?? '/', 'http://x').pathname);
      return nonce === undefined ? { status: 404 } : { json: await answer(nonce) };
    });
    const p = prefix('revocation');
    const [a, b] = [new SharedBudgets(REDIS_URL, p, quiet, undefined, 1000), new SharedBudgets(REDIS_URL, p, quiet, undefined, 1000)];
    await Promise.all([a.connect(), b.connect()]);
    try {
      const issuer = await createDemoIssuer({ statusUrl: `${server.url}/demo-issuer/status` });
      answer = (nonce) => issuer.status(nonce);
      const credential = (await issuer.issue({ subjectId: `did:pkh:eip155:1:${ADDRESS}`, claims: { reviewAnswer: 'GREEN', personalData: { age: 30, citizenship: 'FRA' } } })) as unknown as Credential;
      const instance = (budgets: SharedBudgets) => createCredentialVerifier(
        trustOptions({ mode: 'strict', trustedIssuers: [issuer.did], timeoutMs: 5000, revocationCacheMs: 1500 }),
        { sharedRevocations: budgets.answers('revocation') },
      );
      const [onA, onB] = [instance(a), instance(b)];
      const ctx = () => ({ address: ADDRESS, now: Date.now() });
      expect(await onA.verify([credential], ctx())).toEqual([{ ok: true }]);
      const fetched = server.hits.length;
      expect(fetched).toBeGreaterThan(0);
      expect(await onB.verify([credential], ctx())).toEqual([{ ok: true }]);
      expect(server.hits.length).toBe(fetched);
      // Once the shared "not revoked" answers are gone from Redis, B has none left either and asks the issuer again.
      expect((await keysUnder(`${p}revocation:`)).length).toBeGreaterThan(0);
      while ((await keysUnder(`${p}revocation:`)).length > 0) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await onB.verify([credential], ctx())).toEqual([{ ok: true }]);
      expect(server.hits.length).toBe(2 * fetched);
      await Promise.all([onA.close(), onB.close()]);
    } finally {
      await Promise.all([a.close(), b.close(), server.close()]);
    }
  });
});

describe.skipIf(!redisAvailable)('when Redis stalls or is slow (no RST)', () => {
  let proxy: RedisProxy;
  beforeAll(async () => {
    proxy = await redisProxy();
  });
  afterAll(async () => proxy.close());
  const until = async (done: () => boolean | Promise<boolean>, ms = 10_000) => {
    const start = Date.now();
    while (!(await done()) && Date.now() - start < ms) await new Promise((resolve) => setTimeout(resolve, 50));
  };

  it('stops sending to a stalled Redis after its first timeout (a PING a second at most), logs one pair per outage, and shares again once it answers', async () => {
    const logs: string[] = [];
    const budgets = new SharedBudgets(proxy.url, prefix('stall'), { warn: (_o, m) => logs.push(`warn ${m}`), info: (m) => logs.push(`info ${m}`) });
    await budgets.connect();
    const answers = budgets.answers('x');
    try {
      answers.set('k', 'v', 60_000);
      expect(await answers.get('k')).toMatchObject({ value: 'v' });
      proxy.stall();
      expect(await answers.get('k')).toBeUndefined();
      expect(budgets.state()).toMatchObject({ budgets: 'per-process' });
      const afterFirst = proxy.heldBytes;
      // 2,000 lookups and reservations meanwhile: none of them sent (each would be ~100 bytes).
      for (let i = 0; i < 1000; i++) {
        expect(await answers.get(`k${i}`)).toBeUndefined();
        expect(await budgets.coldBudget().reserve('t', 1, 5)).toBeUndefined();
      }
      expect(proxy.heldBytes - afterFirst).toBeLessThan(1000);
      // The silent connection is destroyed (socketTimeout), its sent commands failed, and a new one opened.
      const opened = proxy.connections;
      await until(() => proxy.connections > opened);
      expect(proxy.connections).toBeGreaterThan(opened);
      proxy.resume();
      await until(() => budgets.state().budgets === 'shared');
      expect(budgets.state()).toEqual({ budgets: 'shared' });
      expect(await answers.get('k')).toMatchObject({ value: 'v' });
      expect(logs).toEqual([
        'warn Redis does not answer: budgets are per process until it does (REDIS_URL)',
        'info Redis answers again: budgets are shared across instances',
      ]);
    } finally {
      proxy.resume();
      await budgets.close();
    }
  });

  it('removes the slots of a reservation that timed out on the client (Redis 150 ms late) once Redis answers in time', async () => {
    const p = prefix('ghost');
    const slow = new SharedBudgets(proxy.url, p, quiet);
    const direct = new SharedBudgets(REDIS_URL, p, quiet);
    await Promise.all([slow.connect(), direct.connect()]);
    try {
      proxy.delay(150);
      expect(await slow.coldBudget().reserve('t', 2, 2)).toBeUndefined();
      expect(slow.state()).toMatchObject({ budgets: 'per-process' });
      proxy.delay(0);
      await until(() => slow.state().budgets === 'shared');
      expect(slow.state()).toEqual({ budgets: 'shared' });
      let admitted = false;
      // The lease is 60 s: admitted within 10 s only if the timed-out reservation's slots were removed.
      await until(async () => {
        const r = await direct.coldBudget().reserve('t', 2, 2);
        if (r?.admitted === true) r.release();
        admitted = r?.admitted === true;
        return admitted;
      });
      expect(admitted).toBe(true);
    } finally {
      proxy.delay(0);
      await Promise.all([slow.close(), direct.close()]);
    }
  });
});

describe.skipIf(!redisAvailable)('shared answers bounded by this instance', () => {
  it('never lets a "not revoked" replace a "revoked"; a "revoked" replaces a "not revoked"', async () => {
    const budgets = new SharedBudgets(REDIS_URL, prefix('nx'), quiet, undefined, 1000);
    await budgets.connect();
    try {
      const answers = budgets.answers('revocation');
      answers.set('a', '1', 60_000);
      answers.set('a', '0', 60_000, true);
      answers.set('b', '0', 60_000, true);
      answers.set('b', '1', 60_000);
      expect((await answers.get('a'))?.value).toBe('1');
      expect((await answers.get('b'))?.value).toBe('1');
    } finally {
      await budgets.close();
    }
  });

  it('treats a shared "not revoked" with more time left than REVOCATION_CACHE_MS (1 s; 10 days in Redis) as a miss: fetched again after 1 s', async () => {
    const server = await startServer(async (req) => {
      const nonce = nonceFromStatusPath(new URL(req.url ?? '/', 'http://x').pathname);
      return nonce === undefined ? { status: 404 } : { json: await issuer.status(nonce) };
    });
    const issuer = await createDemoIssuer({ statusUrl: `${server.url}/demo-issuer/status` });
    const p = prefix('ttlcap');
    const budgets = new SharedBudgets(REDIS_URL, p, quiet);
    await budgets.connect();
    const writer = new Redis(REDIS_URL);
    try {
      const credential = (await issuer.issue({ subjectId: `did:pkh:eip155:1:${ADDRESS}`, claims: { reviewAnswer: 'GREEN', personalData: { age: 30, citizenship: 'FRA' } } })) as unknown as Credential;
      const verifier = () => createCredentialVerifier(
        trustOptions({ mode: 'strict', trustedIssuers: [issuer.did], timeoutMs: 5000, revocationCacheMs: 1000 }),
        { sharedRevocations: budgets.answers('revocation') },
      );
      const first = verifier();
      const ctx = () => ({ address: ADDRESS, now: Date.now() });
      expect(await first.verify([credential], ctx())).toEqual([{ ok: true }]);
      const fetched = server.hits.length;
      const keys = await keysUnder(`${p}revocation:`);
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) await writer.set(key, '0', 'PX', 10 * 86_400_000);

      const second = verifier();
      expect(await second.verify([credential], ctx())).toEqual([{ ok: true }]);
      expect(server.hits.length).toBe(2 * fetched);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect(await second.verify([credential], ctx())).toEqual([{ ok: true }]);
      expect(server.hits.length).toBe(3 * fetched);
      await Promise.all([first.close(), second.close()]);
    } finally {
      writer.disconnect();
      await Promise.all([budgets.close(), server.close()]);
    }
  });
});
