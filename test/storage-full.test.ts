/**
 * A full database on SQLite, without root: PRAGMA max_page_count caps the file (SqliteOptions.maxPages), and a write
 * that would grow it past the cap fails with SQLITE_FULL, the error a full disk gives. Real writes fill it; space is
 * freed by deleting scenarios. The same on a real full filesystem: test/storage-full.fs.test.ts.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { ExecutionResult } from '../src/schemas/execution.js';
import type { Scenario } from '../src/schemas/scenario.js';
import { StorageFull } from '../src/store/errors.js';
import { openSqliteStore } from '../src/store/sqlite.js';
import type { ExecutionRecord } from '../src/store/types.js';
import { ADDRESS, auth, credential, makeApp, scenario, tempDir } from './helpers.js';

/** ~8 KB of text that does not compress: two or three pages of the database each. */
const bulky = (tag: string) => scenario({ name: tag, description: randomBytes(2048).toString('hex'), message: randomBytes(2000).toString('hex') });

/** Free room of the capped database, in pages: a few scenarios, then it is full. */
const ROOM = 80;
/** A lease that outlives the test: a claim stays in progress. */
const LEASE = '2999-01-01T00:00:00.000Z';

const dir = tempDir();
const file = path.join(dir, 'scenarios.db');
let app: FastifyInstance | undefined;
afterAll(async () => {
  await app?.close();
});

async function fullApp(): Promise<FastifyInstance> {
  await openSqliteStore({ file, synchronous: 'NORMAL' }).close(); // the migrations, uncapped
  const pages = new Database(file).pragma('page_count', { simple: true }) as number;
  const store = openSqliteStore({ file, synchronous: 'NORMAL', maxPages: pages + ROOM });
  return makeApp({ DATA_DIR: dir }, { store });
}

const create = (a: FastifyInstance, id: string, key?: string) => a.inject({
  method: 'POST', url: '/compliance/scenarios', headers: { ...auth, ...(key && { 'idempotency-key': key }) }, payload: { id, input: bulky(id) },
});
const execute = (a: FastifyInstance, scenarioId: string) => a.inject({
  method: 'POST', url: '/compliance/scenarios/execute', headers: auth, payload: { address: ADDRESS, credentials: [credential()], scenarioId },
});

function expectStorageFull(res: { statusCode: number; headers: Record<string, unknown>; json: () => unknown }) {
  expect(res.statusCode).toBe(503);
  expect(res.headers['retry-after']).toBe('30');
  expect(res.json()).toMatchObject({ status: 503, code: 'SCS_STORAGE_FULL' });
}

describe('SQLite with its storage full (max_page_count)', () => {
  const acknowledged = new Map<string, string>(); // scenario id -> ETag answered

  it('answers 503 SCS_STORAGE_FULL to every write that does not fit, and acknowledges only what it kept', async () => {
    app = await fullApp();
    expect((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
    let refused;
    for (let i = 0; i < ROOM && refused === undefined; i++) {
      const res = await create(app, `s${i}`);
      if (res.statusCode === 201) acknowledged.set(`s${i}`, String(res.headers.etag));
      else refused = res;
    }
    expect(acknowledged.size).toBeGreaterThan(12);
    expectStorageFull(refused!);

    // PATCH to a larger scenario: refused, and the scenario keeps its revision and ETag.
    const [id, etag] = [...acknowledged][0]!;
    const patched = await app.inject({
      method: 'PATCH', url: `/compliance/scenarios/${id}`, headers: { ...auth, 'if-match': etag },
      payload: { input: { description: randomBytes(2048).toString('hex'), message: randomBytes(2048).toString('hex') } },
    });
    expectStorageFull(patched);
    const read = await app.inject({ method: 'GET', url: `/compliance/scenarios/${id}`, headers: auth });
    expect(read.headers.etag).toBe(etag);

    // Executes: each audit record fits until the executions' last page is full, then 503 (never 500), no verdict.
    let executed;
    for (let i = 0; i < 200 && (executed === undefined || executed.statusCode === 200); i++) executed = await execute(app, id);
    expectStorageFull(executed!);
  });

  it('reports the full storage on /health/ready', async () => {
    const ready = await app!.inject({ method: 'GET', url: '/health/ready' });
    expectStorageFull(ready);
    expect(ready.json()).toMatchObject({ detail: expect.stringMatching(/storage is full/) });
  });

  it('refuses an Idempotency-Key request without keeping the key: its retry does the work once space is freed', async () => {
    expectStorageFull(await create(app!, 'keyed', 'key-1'));
    // A write that still fits (a DELETE) does not make it ready: ~8 KB freed is less than the probe's 64 KiB.
    const first = [...acknowledged.keys()].at(-1)!;
    expect((await app!.inject({ method: 'DELETE', url: `/compliance/scenarios/${first}`, headers: auth })).statusCode).toBe(204);
    acknowledged.delete(first);
    expectStorageFull(await app!.inject({ method: 'GET', url: '/health/ready' }));
    // Deleting scenarios frees pages inside the file (it does not shrink): ten more of ~8 KB make room for the probe.
    const victims = [...acknowledged.keys()].slice(-10);
    for (const v of victims) {
      expect((await app!.inject({ method: 'DELETE', url: `/compliance/scenarios/${v}`, headers: auth })).statusCode).toBe(204);
      acknowledged.delete(v);
    }
    expect((await app!.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
    const retried = await create(app!, 'keyed', 'key-1');
    expect(retried.statusCode).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    acknowledged.set('keyed', String(retried.headers.etag));
  });

  it('keeps every acknowledged write, with the ETag it answered, after a restart without the cap', async () => {
    await app!.close();
    app = await makeApp({ DATA_DIR: dir });
    for (const [id, etag] of acknowledged) {
      const res = await app.inject({ method: 'GET', url: `/compliance/scenarios/${id}`, headers: auth });
      expect([id, res.statusCode, res.headers.etag]).toEqual([id, 200, etag]);
    }
    const list = await app.inject({ method: 'GET', url: '/compliance/scenarios?limit=100', headers: auth });
    expect(list.json().items.map((s: { id: string }) => s.id).sort()).toEqual([...acknowledged.keys()].sort());
  });
});

describe('every write of the SQLite store, on a database with no room left', () => {
  it('rejects with StorageFull and changes nothing', async () => {
    const at = path.join(tempDir(), 'w.db');
    const now = new Date().toISOString();
    const big = randomBytes(48 * 1024).toString('hex'); // 96 KB: pages no database at its cap has free
    const record = (over: Partial<ExecutionRecord> = {}): ExecutionRecord => ({
      executionId: crypto.randomUUID(), scenarioId: 'w', scenarioRevision: 1, projectId: null, address: ADDRESS, state: 'pending',
      results: [], credentials: [], createdAt: now, updatedAt: now, pending: { thid: 't', expiresAt: 1 }, ...over,
    });
    const webhook = (executionId: string) => ({
      id: crypto.randomUUID(), executionId, event: 'execution.completed' as const, payload: '{}', state: 'pending' as const,
      attempts: 0, nextAttemptAt: now, lastStatus: null, lastError: null, createdAt: now, updatedAt: now,
    });
    let store = openSqliteStore({ file: at, synchronous: 'NORMAL' });
    const seeded = await store.create('w', scenario() as unknown as Scenario, now);
    const [pending, delivered] = [record(), record()];
    await Promise.all([store.recordExecution(pending), store.recordExecution(delivered)]);
    const hook = webhook(delivered.executionId);
    await store.completeExecution(delivered.executionId, { state: 'completed', results: [], updatedAt: now, webhook: hook });
    await store.claimIdempotencyKey('k', 'h', now, '2000-01-01T00:00:00.000Z', LEASE);
    // Leased, as a sender holds it when it records an attempt.
    await store.claimWebhooks(now, 10, LEASE, { perTarget: 10, perProject: 10, scan: 10, skipTargets: [], skipProjects: [], targetRooms: {}, projectRooms: {} });
    await store.close();

    const pages = new Database(at).pragma('page_count', { simple: true }) as number;
    store = openSqliteStore({ file: at, synchronous: 'NORMAL', maxPages: pages });
    const refused = (write: Promise<unknown>) => expect(write).rejects.toBeInstanceOf(StorageFull);
    const large = scenario({ description: big.slice(0, 4096), message: big.slice(0, 4096), name: big.slice(0, 256) }) as unknown as Scenario;
    await refused(store.create('x', large, now));
    await refused(store.update(seeded!.seq, large, 1, now));
    await refused(store.recordExecution(record({ address: big })));
    const results = [{ objectType: 'ChallengeQuery', name: big, result: { status: 'valid' } }] as unknown as ExecutionResult[];
    await refused(store.completeExecution(pending.executionId, { state: 'completed', results, updatedAt: now, webhook: webhook(pending.executionId) }));
    await refused(store.updateWebhook({ ...hook, state: 'failed', attempts: 1, lastError: big }, LEASE));
    await refused(store.claimIdempotencyKey('k2', big, now, '2000-01-01T00:00:00.000Z', LEASE));
    await refused(store.completeIdempotencyKey('k', { status: 201, headers: {}, body: big }));
    await refused(store.renewIdempotencyLease('k', big));
    await refused(store.ping()); // readiness: the probe does not fit either

    expect(await store.find('x', undefined)).toEqual([]);
    expect((await store.find('w', undefined))[0]!.revision).toBe(1);
    expect((await store.getExecution(pending.executionId))!.state).toBe('pending');
    expect(await store.webhooksOf(pending.executionId)).toEqual([]);
    expect((await store.webhooksOf(delivered.executionId))[0]).toMatchObject({ state: 'pending', attempts: 0 });
    expect(await store.claimIdempotencyKey('k', 'h', now, '2000-01-01T00:00:00.000Z', LEASE)).toEqual({ claimed: false, requestHash: 'h' });
    await store.close();
  });
});
