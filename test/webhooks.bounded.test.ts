/**
 * Webhook deliveries bounded end to end (issue 36), against real receivers on 127.0.0.1: a receiver that sends its
 * headers and never ends its body keeps no socket past WEBHOOK_TIMEOUT_MS and its deliveries are retried; a tenant
 * whose receiver hangs (or two, each on many paths of one host) does not hold back another tenant's deliveries; a replay asked while an attempt is in flight
 * is sent after it.
 */
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { TARGET_SLOTS, TARGET_SLOTS_MAX } from '../src/domain/webhook-slots.js';
import { openSqliteStore } from '../src/store/sqlite.js';
import type { Store } from '../src/store/types.js';
import { auth, executeOnce, makeApp, scenario, tempDir } from './helpers.js';

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

interface Receiver { base: string; open: Set<Socket>; requests: string[]; close: () => Promise<void> }

/** A receiver whose `answer` decides what each request gets; it counts the sockets open on its side. */
async function receiver(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<Receiver> {
  const open = new Set<Socket>();
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      requests.push(body);
      answer(req, res);
    });
  });
  server.on('connection', (socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    open,
    requests,
    close: () => new Promise<void>((r) => {
      for (const s of open) s.destroy();
      server.close(() => r());
    }),
  };
}

/** Headers (200) and the start of a body, then nothing: the body never ends. */
const stallAfterHeaders = (_req: http.IncomingMessage, res: http.ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.write('ok');
};

describe('webhook deliveries bounded end to end', () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  const read = async (app: FastifyInstance, executionId: string) =>
    (await app.inject({ url: `/compliance/executions/${executionId}`, headers: auth })).json();

  it('closes the socket of a receiver that sends headers and never ends its body, and retries the delivery', async () => {
    const hook = await receiver(stallAfterHeaders);
    cleanup.push(hook.close);
    const app = await makeApp({
      WEBHOOK_URL: `${hook.base}/stall`, WEBHOOK_SECRET: SECRET, WEBHOOK_TIMEOUT_MS: '300', WEBHOOK_POLL_MS: '20', RATE_LIMIT_MAX: '0',
      // One attempt each in this test: the retry is due long after it ends.
      WEBHOOK_RETRY_BASE_MS: '3600000', WEBHOOK_MAX_ATTEMPTS: '3',
    });
    cleanup.push(() => app.close());
    expect((await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'kyc', input: scenario() } })).statusCode).toBe(201);
    const executions: string[] = [];
    for (let i = 0; i < 20; i++) executions.push((await executeOnce(app, 'kyc'))[0]!.executionId);

    // The receiver stops getting deliveries once it is backed off; each one it got is a failed attempt, retried later.
    await expect.poll(() => hook.requests.length, { timeout: 60_000, interval: 50 }).toBeGreaterThan(0);
    const attempted = async () => {
      const logs = await Promise.all(executions.map(async (e) => (await read(app, e)).webhooks[0]));
      return logs.filter((w) => w.attempts > 0);
    };
    await expect.poll(async () => (await attempted()).length, { timeout: 60_000, interval: 250 }).toBe(hook.requests.length);
    for (const w of await attempted()) {
      expect(w).toMatchObject({ state: 'pending', attempts: 1, lastStatus: null, lastError: 'no complete answer within 300 ms' });
    }
    // And no socket of those deliveries is left open on the receiver's side.
    await expect.poll(() => hook.open.size, { timeout: 30_000, interval: 50 }).toBe(0);
  });

  it('delivers another tenant\'s webhooks while one tenant\'s receiver hangs with a backlog', async () => {
    // B's receiver takes every request and never answers; A's answers at once.
    const hanging = await receiver(() => {});
    const answering = await receiver((_req, res) => res.end());
    // The receivers close first: their sockets end, so the deliveries still in flight end before the app closes.
    const app = await makeApp({
      API_TOKENS: 'operator-token-0123456789', RATE_LIMIT_MAX: '0', WEBHOOK_SECRET: SECRET, WEBHOOK_ALLOW_PRIVATE_TARGETS: '1', WEBHOOK_POLL_MS: '20',
      // B's receiver holds each delivery longer than this test waits; none is retried meanwhile.
      WEBHOOK_TIMEOUT_MS: '60000', WEBHOOK_RETRY_BASE_MS: '3600000',
    });
    cleanup.push(() => app.close(), hanging.close, answering.close);
    const operator = { authorization: 'Bearer operator-token-0123456789' };
    for (const [id, projectId, url] of [['b', 'tenant-b', hanging.base], ['a', 'tenant-a', answering.base]] as const) {
      const res = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: operator, payload: { id, input: scenario({ projectId, webhookUrl: `${url}/${id}` }) } });
      expect(res.statusCode, res.body).toBe(201);
    }
    const execute = async (id: string) => {
      const res = await app.inject({
        method: 'POST', url: '/compliance/scenarios/execute', headers: operator,
        payload: { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', credentials: [], scenarioId: id },
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json()[0].executionId as string;
    };
    // B's backlog is queued first, so every one of its deliveries is due before any of A's.
    const ofB: string[] = [];
    for (let i = 0; i < 60; i++) ofB.push(await execute('b'));
    const ofA: string[] = [];
    for (let i = 0; i < 5; i++) ofA.push(await execute('a'));
    const readAs = async (executionId: string) =>
      (await app.inject({ url: `/compliance/executions/${executionId}`, headers: operator })).json().webhooks?.[0];

    for (const executionId of ofA) {
      await expect.poll(async () => (await readAs(executionId))?.state, { timeout: 30_000, interval: 50 }).toBe('delivered');
    }
    expect(answering.requests).toHaveLength(5);
    // B's deliveries are all still pending, and its receiver holds no more of them than one target's slots.
    for (const executionId of ofB) expect((await readAs(executionId))?.state).toBe('pending');
    expect(hanging.requests.length).toBeLessThanOrEqual(TARGET_SLOTS);
  });

  it('delivers a third project\'s webhooks while two projects\' receivers hang on many paths of one host each, with a backlog', async () => {
    // Each hanging tenant names its one host under a path per scenario: as many targets as paths if targets were URLs.
    const hangingB = await receiver(() => {});
    const hangingC = await receiver(() => {});
    const answering = await receiver((_req, res) => res.end());
    const app = await makeApp({
      API_TOKENS: 'operator-token-0123456789', RATE_LIMIT_MAX: '0', WEBHOOK_SECRET: SECRET, WEBHOOK_ALLOW_PRIVATE_TARGETS: '1', WEBHOOK_POLL_MS: '20',
      // Short enough that a claim keeping to the queue's order reaches A's deliveries within the test's wait; no retries.
      WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_RETRY_BASE_MS: '3600000',
    });
    cleanup.push(() => app.close(), hangingB.close, hangingC.close, answering.close);
    const operator = { authorization: 'Bearer operator-token-0123456789' };
    const create = async (id: string, projectId: string, webhookUrl: string) => {
      const res = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: operator, payload: { id, input: scenario({ projectId, webhookUrl }) } });
      expect(res.statusCode, res.body).toBe(201);
    };
    const execute = async (id: string, projectId: string) => {
      const res = await app.inject({
        method: 'POST', url: `/compliance/scenarios/execute?projectId=${projectId}`, headers: operator,
        payload: { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', credentials: [], scenarioId: id },
      });
      expect(res.statusCode, res.body).toBe(200);
    };
    const BACKLOG = 24;
    // B's and C's backlogs are queued first: every one of their deliveries is due before any of A's.
    for (const [project, hook] of [['tenant-b', hangingB], ['tenant-c', hangingC]] as const) {
      for (let i = 0; i < BACKLOG; i++) await create(`s${i}`, project, `${hook.base}/${i}`);
    }
    for (let i = 0; i < BACKLOG; i++) {
      for (const project of ['tenant-b', 'tenant-c']) await execute(`s${i}`, project);
    }
    await create('a', 'tenant-a', `${answering.base}/a`);
    for (let i = 0; i < 5; i++) await execute('a', 'tenant-a');

    // A's deliveries all arrive (the wait is generous: this is not a timing assertion) ...
    await expect.poll(() => answering.requests.length, { timeout: 60_000, interval: 50 }).toBe(5);
    // ... while most of B's and C's have not been sent yet: each hanging host holds at most one target's slots.
    expect(hangingB.requests.length).toBeLessThanOrEqual(TARGET_SLOTS);
    expect(hangingC.requests.length).toBeLessThanOrEqual(TARGET_SLOTS);
  });

  /**
   * An app whose clock moves on by `claimTakesMs` during its first claim that finds a delivery (a claim that slow),
   * on a real SQLite store; `leases`: the lease of each claim that found one.
   */
  async function slowFirstClaim(claimTakesMs: number, env: Record<string, string>) {
    let skew = 0;
    let slowed = false;
    const clock = () => Date.now() + skew;
    const store = openSqliteStore({ file: path.join(tempDir(), 'w.db'), synchronous: 'NORMAL' });
    const leases: string[] = [];
    const slow: Store = {
      ...store,
      claimWebhooks: async (now, limit, leaseUntil, fair) => {
        const claimed = await store.claimWebhooks(now, limit, leaseUntil, fair);
        if (claimed.length > 0) {
          leases.push(leaseUntil);
          if (!slowed) skew += claimTakesMs;
          slowed = true;
        }
        return claimed;
      },
    };
    const app = await makeApp({ WEBHOOK_SECRET: SECRET, WEBHOOK_POLL_MS: '20', RATE_LIMIT_MAX: '0', WEBHOOK_RETRY_BASE_MS: '3600000', ...env }, { store: slow, now: clock });
    cleanup.push(() => app.close());
    expect((await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'kyc', input: scenario() } })).statusCode).toBe(201);
    return { app, clock, leases };
  }

  it('starts no POST on a lease that ran out during its claim: gives the delivery back and sends it under a new lease', async () => {
    const arrivedAt: number[] = [];
    let clock = Date.now;
    const hook = await receiver((_req, res) => {
      arrivedAt.push(clock());
      res.end();
    });
    cleanup.push(hook.close);
    // The claim takes longer than the lease it took (2 × 1 s and the margin): another instance could take it meanwhile.
    const slow = await slowFirstClaim(4000, { WEBHOOK_URL: `${hook.base}/lease`, WEBHOOK_TIMEOUT_MS: '1000' });
    clock = slow.clock;
    const executionId = (await executeOnce(slow.app, 'kyc'))[0]!.executionId;
    await expect.poll(async () => (await read(slow.app, executionId)).webhooks[0], { timeout: 30_000, interval: 50 })
      .toMatchObject({ state: 'delivered', attempts: 1 });
    // Sent once, under a lease claimed after the slow one, and while that lease ran.
    expect(arrivedAt).toHaveLength(1);
    expect(slow.leases.length).toBeGreaterThanOrEqual(2);
    expect(arrivedAt[0]).toBeLessThan(Date.parse(slow.leases.at(-1)!));
  });

  it('gives a POST no more time than is left of its lease', async () => {
    const hanging = await receiver(() => {});
    cleanup.push(hanging.close);
    // The claim takes 1.25 s of the lease's 3 s: 0.75 s is left before the margin, less than WEBHOOK_TIMEOUT_MS.
    const slow = await slowFirstClaim(1250, { WEBHOOK_URL: `${hanging.base}/lease`, WEBHOOK_TIMEOUT_MS: '1000' });
    const executionId = (await executeOnce(slow.app, 'kyc'))[0]!.executionId;
    await expect.poll(async () => (await read(slow.app, executionId)).webhooks[0].attempts, { timeout: 30_000, interval: 50 }).toBe(1);
    const lastError = (await read(slow.app, executionId)).webhooks[0].lastError as string;
    const allowed = Number(/^no complete answer within (\d+) ms$/.exec(lastError)?.[1]);
    expect(allowed, lastError).toBeGreaterThanOrEqual(500);
    expect(allowed, lastError).toBeLessThan(1000);
  });

  it('sends a replay asked while an attempt is in flight once that attempt ends, instead of dropping it', async () => {
    // The first request waits until the test lets it answer; the later ones are answered at once.
    const held: Array<() => void> = [];
    let released = false;
    const whileHeld: number[] = [];
    const hook = await receiver((_req, res) => {
      if (held.length === 0) {
        held.push(() => {
          released = true;
          res.end();
        });
      } else {
        if (!released) whileHeld.push(hook.requests.length);
        res.end();
      }
    });
    const app = await makeApp({ WEBHOOK_URL: `${hook.base}/replay`, WEBHOOK_SECRET: SECRET, WEBHOOK_POLL_MS: '20', RATE_LIMIT_MAX: '0' });
    cleanup.push(() => app.close(), hook.close);
    expect((await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'kyc', input: scenario() } })).statusCode).toBe(201);
    const executionId = (await executeOnce(app, 'kyc'))[0]!.executionId;
    await expect.poll(() => held.length, { timeout: 30_000, interval: 20 }).toBe(1);

    const deliveryId = (await read(app, executionId)).webhooks[0].id as string;
    const replay = await app.inject({ method: 'POST', url: `/compliance/executions/${executionId}/webhooks/${deliveryId}/replay`, headers: auth });
    expect(replay.statusCode, replay.body).toBe(202);
    // Many polls' time for a sender that would not wait for the attempt to end (not a timing assertion: it gives the
    // wrong behaviour room to show).
    await new Promise((r) => setTimeout(r, 300));
    held[0]!();
    // The replay is sent after the attempt, and the log shows the replay's round.
    await expect.poll(() => hook.requests.length, { timeout: 30_000, interval: 20 }).toBe(2);
    await expect.poll(async () => (await read(app, executionId)).webhooks[0], { timeout: 30_000, interval: 100 })
      .toMatchObject({ state: 'delivered', attempts: 1, lastStatus: 200 });
    expect(whileHeld).toEqual([]);
  });

  /** An app sending every execution's event to WEBHOOK_URL at `hook`, with `backlog` executions queued at once. */
  async function backlogTo(hook: Receiver, backlog: number, env: Record<string, string>) {
    const app = await makeApp({ WEBHOOK_URL: `${hook.base}/window`, WEBHOOK_SECRET: SECRET, WEBHOOK_POLL_MS: '20', RATE_LIMIT_MAX: '0', ...env });
    cleanup.push(() => app.close(), hook.close);
    expect((await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'kyc', input: scenario() } })).statusCode).toBe(201);
    await Promise.all(Array.from({ length: backlog }, () => executeOnce(app, 'kyc')));
    return app;
  }

  it('widens the window of a target that answers fast: more than TARGET_SLOTS of its deliveries in flight at once', async () => {
    // The first 48 requests are answered at once (fast: well within the timeout); later ones are held until released.
    const held: Array<() => void> = [];
    let mostHeld = 0;
    const hook = await receiver((_req, res) => {
      if (hook.requests.length <= 48) {
        res.end();
        return;
      }
      held.push(() => res.end());
      mostHeld = Math.max(mostHeld, held.length);
    });
    await backlogTo(hook, 120, { WEBHOOK_TIMEOUT_MS: '60000' });
    // Not a timing assertion: the wait only bounds a test that would otherwise hang.
    await expect.poll(() => mostHeld, { timeout: 60_000, interval: 20 }).toBeGreaterThan(TARGET_SLOTS);
    // Within the one project's share of the slots.
    expect(mostHeld).toBeLessThanOrEqual(TARGET_SLOTS_MAX / 2);
    for (const release of held.splice(0)) release();
  });

  it('drops a widened target that stops answering to one delivery at a time', async () => {
    // The first 48 requests are answered at once, every later one never: each times out.
    const open = new Set<http.ServerResponse>();
    let mostOpen = 0;
    let afterFirstWave = -1;
    const hook = await receiver((_req, res) => {
      if (hook.requests.length <= 48) {
        res.end();
        return;
      }
      open.add(res);
      res.on('close', () => {
        open.delete(res);
        // The first wave (every delivery in flight when it stopped answering) has ended: from now on, one at a time.
        if (open.size === 0 && afterFirstWave === -1) afterFirstWave = 0;
      });
      if (afterFirstWave >= 0) {
        afterFirstWave += 1;
        mostOpen = Math.max(mostOpen, open.size);
      }
    });
    await backlogTo(hook, 120, { WEBHOOK_TIMEOUT_MS: '500', WEBHOOK_RETRY_BASE_MS: '50', WEBHOOK_MAX_ATTEMPTS: '100' });
    await expect.poll(() => afterFirstWave, { timeout: 60_000, interval: 20 }).toBeGreaterThanOrEqual(3);
    expect(mostOpen).toBe(1);
  });
});
