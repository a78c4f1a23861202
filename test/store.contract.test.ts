/** One contract, run against the SQLite store and the PostgreSQL store. */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../src/store/sqlite.js';
import { openPostgresStore } from '../src/store/postgres.js';
import { ScenarioIdTaken } from '../src/store/errors.js';
import type { ExecutionRecord, Store } from '../src/store/types.js';
import type { Scenario } from '../src/schemas/scenario.js';
import { scenario, tempDir } from './helpers.js';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from './pg.js';

/** A claim that skips nothing and takes up to 100 of one target. */
const fair = { perTarget: 100, scan: 500, skipTargets: [], skipProjects: [] };
const input = (over: Record<string, unknown> = {}) => scenario(over) as unknown as Scenario;
const now = () => new Date().toISOString();

const schema = freshSchema('contract');
const backends: Array<[string, () => Promise<Store>, boolean]> = [
  ['sqlite', async () => openSqliteStore({ file: path.join(tempDir(), 's.db'), synchronous: 'NORMAL' }), true],
  ['postgres', async () => openPostgresStore({ url: PG_URL, schema: `${schema}_${Math.random().toString(36).slice(2, 6)}` }), pgAvailable],
];

afterAll(async () => {
  if (!pgAvailable) return;
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  const { rows } = await client.query<{ nspname: string }>('SELECT nspname FROM pg_namespace WHERE nspname LIKE $1', [`${schema}%`]);
  await client.end();
  for (const r of rows) await dropSchema(r.nspname);
});

describe.each(backends)('%s store', (_name, open, available) => {
  let store: Store;
  beforeAll(async () => {
    if (available) store = await open();
  });
  afterAll(async () => {
    await store?.close();
  });

  const one = async (id: string, scope?: string[]) => {
    const rows = await store.find(id, scope);
    expect(rows.length).toBeLessThanOrEqual(1);
    return rows[0];
  };

  it.skipIf(!available)('creates at revision 1 and reads back exactly what it wrote', async () => {
    const row = await store.create('a', input({ message: 'ü ✓ "quoted"' }), '2026-01-02T03:04:05.678Z');
    expect(row).toMatchObject({ id: 'a', revision: 1, createdAt: '2026-01-02T03:04:05.678Z', updatedAt: '2026-01-02T03:04:05.678Z' });
    expect((await one('a'))!.input).toEqual(input({ message: 'ü ✓ "quoted"' }));
    expect(await store.heads('a', undefined)).toEqual([{ seq: row!.seq, revision: 1 }]);
  });

  it.skipIf(!available)('answers null on an id taken in the same project and leaves the first', async () => {
    await store.create('taken', input(), now());
    expect(await store.create('taken', input({ name: 'Second' }), now())).toBeNull();
    expect((await one('taken'))!.input.name).toBe('Adult KYC');
    await store.create('taken-p', input({ projectId: 'p1' }), now());
    expect(await store.create('taken-p', input({ projectId: 'p1', name: 'Second' }), now())).toBeNull();
    expect((await one('taken-p', ['p1']))!.input.name).toBe('Adult KYC');
  });

  it.skipIf(!available)('keeps ids unique per project: one id in two projects, each found in its own scope only', async () => {
    const a = await store.create('shared', input({ projectId: 'pa', name: 'A' }), now());
    const b = await store.create('shared', input({ projectId: 'pb', name: 'B' }), now());
    const none = await store.create('shared', input({ name: 'No project' }), now());
    expect(a && b && none).toBeTruthy();
    expect((await store.find('shared', ['pa'])).map((r) => r.input.name)).toEqual(['A']);
    expect((await store.find('shared', ['pb', 'pz'])).map((r) => r.input.name)).toEqual(['B']);
    expect(await store.find('shared', ['pz'])).toEqual([]);
    expect(await store.find('shared', [])).toEqual([]);
    // Two of the scope's projects have it: two rows (never more), so the caller can tell it is ambiguous.
    expect((await store.find('shared', ['pa', 'pb'])).map((r) => r.input.name)).toEqual(['A', 'B']);
    expect((await store.find('shared', undefined)).map((r) => r.input.name)).toEqual(['A', 'B']);
    expect(await store.heads('shared', ['pb'])).toEqual([{ seq: b!.seq, revision: 1 }]);
    expect(await store.heads('shared', undefined)).toEqual([{ seq: a!.seq, revision: 1 }, { seq: b!.seq, revision: 1 }]);
  });

  it.skipIf(!available)('refuses to move a scenario into a project that has its id, and changes nothing', async () => {
    const a = await store.create('mover', input({ projectId: 'ma' }), now());
    await store.create('mover', input({ projectId: 'mb', name: 'Resident' }), now());
    await expect(store.update(a!.seq, input({ projectId: 'mb' }), 1, now())).rejects.toBeInstanceOf(ScenarioIdTaken);
    expect((await one('mover', ['ma']))!.revision).toBe(1);
    expect((await one('mover', ['mb']))!.input.name).toBe('Resident');
    const moved = await store.update(a!.seq, input({ projectId: 'mc' }), 1, now());
    expect(moved).toMatchObject({ seq: a!.seq, revision: 2 });
    expect(await store.find('mover', ['ma'])).toEqual([]);
  });

  it.skipIf(!available)('updates only at the expected revision (compare-and-set)', async () => {
    const row = await store.create('cas', input(), now());
    const first = await store.update(row!.seq, input({ name: 'One' }), 1, now());
    expect(first!.revision).toBe(2);
    expect(await store.update(row!.seq, input({ name: 'Stale' }), 1, now())).toBeNull();
    expect((await one('cas'))!.input.name).toBe('One');
    expect(await store.update(987654321, input(), 1, now())).toBeNull();
  });

  it.skipIf(!available)('lets exactly one of many concurrent updates at one revision win', async () => {
    const row = await store.create('race', input(), now());
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.update(row!.seq, input({ name: `w${i}` }), 1, now())));
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    expect((await one('race'))!.revision).toBe(2);
  });

  it.skipIf(!available)('deletes once, and never reuses a seq', async () => {
    const first = await store.create('del', input(), now());
    expect(await store.delete(first!.seq)).toBe(true);
    expect(await store.delete(first!.seq)).toBe(false);
    expect(await store.find('del', undefined)).toEqual([]);
    expect(await store.heads('del', undefined)).toEqual([]);
    const second = await store.create('del', input(), now());
    expect(second!.seq).toBeGreaterThan(first!.seq);
  });

  it.skipIf(!available)('pages in creation order', async () => {
    const fresh = await open();
    try {
      for (const id of ['p3', 'p1', 'p2']) await fresh.create(id, input(), now());
      const one = await fresh.list(2);
      expect(one.items.map((r) => r.id)).toEqual(['p3', 'p1']);
      expect(one.next).toBeDefined();
      const two = await fresh.list(2, one.next);
      expect(two.items.map((r) => r.id)).toEqual(['p2']);
      expect(two.next).toBeUndefined();
    } finally {
      await fresh.close();
    }
  });

  it.skipIf(!available)('answers ping while open', async () => {
    await expect(store.ping()).resolves.toBeUndefined();
  });

  const execution = (over: Partial<ExecutionRecord> = {}): ExecutionRecord => ({
    executionId: crypto.randomUUID(),
    scenarioId: 'audited',
    scenarioRevision: 3,
    projectId: 'proj',
    address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    state: 'completed',
    results: [{
      objectType: 'ChallengeQuery', objectId: 'q', name: 'n', address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      scenarioId: 'audited', executionId: 'x',
      result: { result: { is_valid: false, reasons: ['r1', 'r2'] }, executionId: 'x', status: 'not-valid', query: { type: 'T', operator: '$noop' } },
    }],
    credentials: [{ id: 'urn:uuid:1', sha256: 'a'.repeat(64) }],
    createdAt: '2026-03-04T05:06:07.089Z',
    updatedAt: '2026-03-04T05:06:07.089Z',
    ...over,
  });

  it.skipIf(!available)('records an execution and reads it back exactly', async () => {
    const e = execution();
    await store.recordExecution(e);
    const read = await store.getExecution(e.executionId);
    expect(read).toMatchObject(e);
    expect(await store.getExecution(crypto.randomUUID())).toBeUndefined();
    expect(await store.getExecution('not-a-uuid')).toBeUndefined();
  });

  it.skipIf(!available)('commits many concurrent records, each once (group commit)', async () => {
    const scenarioId = `burst-${Math.random()}`;
    const records = Array.from({ length: 300 }, () => execution({ scenarioId }));
    await Promise.all(records.map((r) => store.recordExecution(r)));
    let all: ExecutionRecord[] = [];
    let before: number | undefined;
    do {
      const page = await store.listExecutions(scenarioId, 100, before);
      all = all.concat(page.items);
      before = page.next;
    } while (before !== undefined);
    expect(all).toHaveLength(300);
    expect(new Set(all.map((r) => r.executionId)).size).toBe(300);
  });

  it.skipIf(!available)('fails only the record the database refuses: the others of its batch commit', async () => {
    const first = execution();
    await store.recordExecution(first);
    const scenarioId = `batch-${Math.random()}`;
    const others = Array.from({ length: 6 }, () => execution({ scenarioId }));
    // Sent together, so that they share a batch: one repeats an executionId already stored.
    const results = await Promise.allSettled([...others.slice(0, 3), { ...first, scenarioId }, ...others.slice(3)].map((r) => store.recordExecution(r)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
    const page = await store.listExecutions(scenarioId, 100);
    expect(page.items.map((r) => r.executionId).sort()).toEqual(others.map((r) => r.executionId).sort());
  });

  it.skipIf(!available)('refuses a second record with the same executionId and keeps the first', async () => {
    const e = execution();
    await store.recordExecution(e);
    await expect(store.recordExecution({ ...e, address: 'other' })).rejects.toThrow();
    expect((await store.getExecution(e.executionId))!.address).toBe(e.address);
  });

  it.skipIf(!available)('lists a scenario\'s executions newest first, page by page', async () => {
    const scenarioId = `list-${Math.random()}`;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const e = execution({ scenarioId });
      ids.push(e.executionId);
      await store.recordExecution(e);
    }
    await store.recordExecution(execution({ scenarioId: 'someone-else' }));
    const first = await store.listExecutions(scenarioId, 3);
    const second = await store.listExecutions(scenarioId, 3, first.next);
    expect([...first.items, ...second.items].map((r) => r.executionId)).toEqual(ids.reverse());
    expect(second.next).toBeUndefined();
  });

  it.skipIf(!available)('purges only executions created before the cut-off', async () => {
    const scenarioId = `purge-${Math.random()}`;
    const old = execution({ scenarioId, createdAt: '2000-01-01T00:00:00.000Z', updatedAt: '2000-01-01T00:00:00.000Z' });
    const recent = execution({ scenarioId, createdAt: '2099-01-01T00:00:00.000Z', updatedAt: '2099-01-01T00:00:00.000Z' });
    await store.recordExecution(old);
    await store.recordExecution(recent);
    expect(await store.purgeExecutions('2001-01-01T00:00:00.000Z')).toBeGreaterThanOrEqual(1);
    expect(await store.getExecution(old.executionId)).toBeUndefined();
    expect(await store.getExecution(recent.executionId)).toBeDefined();
  });

  it.skipIf(!available)('purges an execution\'s webhook deliveries with it (one that ended after the cut-off too), and keeps a recent one\'s', async () => {
    const at = (year: number) => `${year}-01-01T00:00:00.000Z`;
    const hooked = (e: ExecutionRecord, createdAt: string): ExecutionRecord => ({
      ...e,
      webhook: {
        id: crypto.randomUUID(), executionId: e.executionId, event: 'execution.completed', payload: '{"data":{"address":"0x1"}}', state: 'pending',
        attempts: 0, nextAttemptAt: createdAt, lastStatus: null, lastError: null, createdAt, updatedAt: createdAt,
      },
    });
    const old = hooked(execution({ createdAt: at(2000), updatedAt: at(2000) }), at(2000));
    // An OffChainZKP execution started before the cut-off and answered after it: its delivery is recent, it goes too.
    const answeredLate = hooked(execution({ createdAt: at(2000), updatedAt: at(2099) }), at(2099));
    const recent = hooked(execution({ createdAt: at(2099), updatedAt: at(2099) }), at(2099));
    await Promise.all([old, answeredLate, recent].map((e) => store.recordExecution(e)));
    expect(await store.purgeExecutions(at(2001))).toBeGreaterThanOrEqual(2);
    expect(await store.webhooksOf(old.executionId)).toEqual([]);
    expect(await store.webhooksOf(answeredLate.executionId)).toEqual([]);
    expect((await store.webhooksOf(recent.executionId)).map((w) => w.id)).toEqual([recent.webhook!.id]);
  });

  it.skipIf(!available)('completes a pending execution once (compare-and-set) and queues its webhook in the same step', async () => {
    const e = execution({ state: 'pending', pending: { thid: 't', expiresAt: 1 }, expiresAt: '2000-01-01T00:00:00.000Z' });
    await store.recordExecution(e);
    expect((await store.getExecution(e.executionId))!.pending).toEqual({ thid: 't', expiresAt: 1 });
    const now = new Date().toISOString();
    const webhook = {
      id: crypto.randomUUID(), executionId: e.executionId, event: 'execution.completed' as const, payload: '{"x":1}', state: 'pending' as const,
      attempts: 0, nextAttemptAt: now, lastStatus: null, lastError: null, createdAt: now, updatedAt: now,
    };
    const results = e.results.map((r) => ({ ...r, result: { ...r.result, status: 'valid' as const } }));
    const [a, b] = await Promise.all([
      store.completeExecution(e.executionId, { state: 'completed', results, updatedAt: now, webhook }),
      store.completeExecution(e.executionId, { state: 'failed', results, updatedAt: now, webhook: { ...webhook, id: crypto.randomUUID() } }),
    ]);
    expect([a, b].filter(Boolean)).toHaveLength(1);
    const read = await store.getExecution(e.executionId);
    expect(read!.state).toBe(a ? 'completed' : 'failed');
    expect(await store.webhooksOf(e.executionId)).toHaveLength(1);
  });

  it.skipIf(!available)('writes an execution\'s webhook in its record\'s commit: with it, or not at all; replays a delivery', async () => {
    const at = now();
    const withHook = (e: ExecutionRecord): ExecutionRecord => ({
      ...e,
      webhook: {
        id: crypto.randomUUID(), executionId: e.executionId, event: 'execution.completed', url: 'https://hooks.example/own', payload: '{"x":1}',
        state: 'pending', attempts: 0, nextAttemptAt: at, lastStatus: null, lastError: null, createdAt: at, updatedAt: at,
      },
    });
    // Concurrent records share a group commit; each keeps its own delivery, and a record without one gets none.
    const batch = [withHook(execution()), withHook(execution()), execution()];
    await Promise.all(batch.map((e) => store.recordExecution(e)));
    for (const e of batch) {
      expect((await store.webhooksOf(e.executionId)).map((w) => [w.id, w.url])).toEqual(e.webhook ? [[e.webhook.id, 'https://hooks.example/own']] : []);
    }
    // A record the database refuses (its id taken) takes its delivery with it.
    const again = withHook(batch[2]!);
    await expect(store.recordExecution(again)).rejects.toThrow();
    expect(await store.webhooksOf(again.executionId)).toEqual([]);

    const delivery = batch[0]!.webhook!;
    const lease = new Date(Date.now() + 60_000).toISOString();
    expect((await store.claimWebhooks(at, 1000, lease, fair)).map((d) => d.id)).toContain(delivery.id);
    await store.updateWebhook({ id: delivery.id, state: 'failed', attempts: 3, nextAttemptAt: at, lastStatus: 500, lastError: 'answered 500', updatedAt: at }, lease);
    const later = new Date(Date.now() + 1000).toISOString();
    expect(await store.replayWebhook(batch[0]!.executionId, delivery.id, later))
      .toMatchObject({ id: delivery.id, state: 'pending', attempts: 0, nextAttemptAt: later, lastStatus: 500 });
    expect(await store.replayWebhook(batch[1]!.executionId, delivery.id, later)).toBeUndefined();
    expect(await store.replayWebhook(batch[0]!.executionId, crypto.randomUUID(), later)).toBeUndefined();
  });

  it.skipIf(!available)('lists expired pending executions only', async () => {
    const expired = execution({ state: 'pending', pending: { thid: 'a', expiresAt: 1 }, expiresAt: '2001-01-01T00:00:00.000Z' });
    const later = execution({ state: 'pending', pending: { thid: 'b', expiresAt: 2 }, expiresAt: '2999-01-01T00:00:00.000Z' });
    await store.recordExecution(expired);
    await store.recordExecution(later);
    const ids = (await store.expiredPendingExecutions('2500-01-01T00:00:00.000Z', 1000)).map((r) => r.executionId);
    expect(ids).toContain(expired.executionId);
    expect(ids).not.toContain(later.executionId);
  });

  it.skipIf(!available)('leases due webhooks so that two pollers never take the same one, and records attempts', async () => {
    const e = execution({ state: 'pending', pending: { thid: 'w', expiresAt: 1 } });
    await store.recordExecution(e);
    const now = new Date().toISOString();
    const id = crypto.randomUUID();
    await store.completeExecution(e.executionId, {
      state: 'completed', results: e.results, updatedAt: now,
      webhook: { id, executionId: e.executionId, event: 'execution.completed', payload: '{}', state: 'pending', attempts: 0, nextAttemptAt: now, lastStatus: null, lastError: null, createdAt: now, updatedAt: now },
    });
    const far = new Date(Date.now() + 60_000).toISOString();
    const [first, second] = await Promise.all([store.claimWebhooks(far, 100, far, fair), store.claimWebhooks(far, 100, far, fair)]);
    const taken = [...first, ...second].filter((d) => d.id === id);
    expect(taken).toHaveLength(1);
    // An attempt recorded under a lease that is not the one held is not recorded.
    await store.updateWebhook({ id, state: 'failed', attempts: 1, nextAttemptAt: now, lastStatus: 500, lastError: 'x', updatedAt: now }, now);
    expect((await store.webhooksOf(e.executionId))[0]).toMatchObject({ state: 'pending', attempts: 0 });
    await store.updateWebhook({ id, state: 'delivered', attempts: 1, nextAttemptAt: now, lastStatus: 200, lastError: null, updatedAt: now }, far);
    expect((await store.webhooksOf(e.executionId))[0]).toMatchObject({ state: 'delivered', attempts: 1, lastStatus: 200 });
    expect((await store.claimWebhooks(far, 100, far, fair)).filter((d) => d.id === id)).toHaveLength(0);
  });

  it.skipIf(!available)('keeps a replay asked during an attempt: the attempt\'s end does not overwrite it, and it is due once the attempt ends', async () => {
    const e = execution();
    const at = now();
    const id = crypto.randomUUID();
    await store.recordExecution({
      ...e,
      webhook: { id, executionId: e.executionId, event: 'execution.completed', url: `https://replay.example/${id}`, payload: '{}', state: 'pending', attempts: 0, nextAttemptAt: at, lastStatus: null, lastError: null, createdAt: at, updatedAt: at },
    });
    const lease = new Date(Date.now() + 60_000).toISOString();
    const mine = (claimed: Awaited<ReturnType<Store['claimWebhooks']>>) => claimed.filter((d) => d.id === id);
    expect(mine(await store.claimWebhooks(at, 1000, lease, fair))).toHaveLength(1);
    // The replay, while the attempt is in flight: not taken by another poller meanwhile.
    expect(await store.replayWebhook(e.executionId, id, now())).toMatchObject({ state: 'pending', attempts: 0 });
    expect(mine(await store.claimWebhooks(now(), 1000, lease, fair))).toEqual([]);
    await store.updateWebhook({ id, state: 'delivered', attempts: 1, nextAttemptAt: now(), lastStatus: 200, lastError: null, updatedAt: now() }, lease);
    expect((await store.webhooksOf(e.executionId))[0]).toMatchObject({ state: 'pending', attempts: 0 });
    const again = mine(await store.claimWebhooks(new Date(Date.now() + 1000).toISOString(), 1000, lease, fair));
    expect(again).toHaveLength(1);
  });

  it.skipIf(!available)('claims fairly: at most perTarget of one target, none of a skipped target or project, and takes released ones again', async () => {
    const at = '2026-03-01T00:00:00.000Z';
    const delivery = (executionId: string, url: string, k: number) => ({
      id: crypto.randomUUID(), executionId, event: 'execution.completed' as const, url, payload: '{}', state: 'pending' as const, attempts: 0,
      // The hanging target's deliveries are all due before the other's.
      nextAttemptAt: new Date(Date.parse(at) + k).toISOString(), lastStatus: null, lastError: null, createdAt: at, updatedAt: at,
    });
    const tag = crypto.randomUUID();
    // One target: the origin, whatever the path.
    const hanging = `https://${tag}.b.example`;
    const other = `https://${tag}.a.example/a`;
    const records = [
      ...Array.from({ length: 6 }, () => execution({ projectId: `b-${tag}`, createdAt: at, updatedAt: at })).map((e, k) => ({ ...e, webhook: delivery(e.executionId, `${hanging}/${k}`, k) })),
      ...[execution({ projectId: `a-${tag}`, createdAt: at, updatedAt: at })].map((e) => ({ ...e, webhook: delivery(e.executionId, other, 100) })),
    ];
    await Promise.all(records.map((r) => store.recordExecution(r)));
    const ours = (claimed: Awaited<ReturnType<Store['claimWebhooks']>>) => claimed.filter((d) => d.url?.includes(tag));
    const due = new Date(Date.parse(at) + 1000).toISOString();
    const lease = new Date(Date.now() + 60_000).toISOString();

    const first = ours(await store.claimWebhooks(due, 100, lease, { ...fair, perTarget: 2 }));
    // Projects in turn: A's only delivery before B's second, though B's are all due first.
    expect(first.map((d) => d.id)).toEqual([records[0]!.webhook.id, records[6]!.webhook.id, records[1]!.webhook.id]);
    expect(first.map((d) => d.projectId)).toEqual([`b-${tag}`, `a-${tag}`, `b-${tag}`]);
    // Skipped targets and projects are left alone, leased ones are not taken twice.
    expect(ours(await store.claimWebhooks(due, 100, lease, { ...fair, skipTargets: [hanging] }))).toEqual([]);
    expect(ours(await store.claimWebhooks(due, 100, lease, { ...fair, perTarget: 1, skipProjects: [`a-${tag}`] })).map((d) => d.id)).toEqual([records[2]!.webhook.id]);
    // Given back, a delivery is taken again.
    await store.releaseWebhooks([records[6]!.webhook.id, records[2]!.webhook.id], lease);
    expect(ours(await store.claimWebhooks(due, 100, lease, { ...fair, perTarget: 1 })).map((d) => d.id)).toEqual([records[2]!.webhook.id, records[6]!.webhook.id]);
  });

  it.skipIf(!available)('claims projects in turn: each project\'s earliest due delivery before any project\'s next', async () => {
    const at = '2026-02-01T00:00:00.000Z';
    const tag = crypto.randomUUID();
    // Project A's backlog is all due before B's, and B's before C's; each delivery to its own origin.
    const records = (['a', 'b', 'c'] as const).flatMap((p, pi) => Array.from({ length: 3 }, (_, k) => {
      const e = execution({ projectId: `${p}-${tag}`, createdAt: at, updatedAt: at });
      const t = new Date(Date.parse(at) + pi * 100 + k).toISOString();
      return {
        ...e,
        webhook: {
          id: crypto.randomUUID(), executionId: e.executionId, event: 'execution.completed' as const, url: `https://${p}${k}.${tag}.example/`, payload: '{}',
          state: 'pending' as const, attempts: 0, nextAttemptAt: t, lastStatus: null, lastError: null, createdAt: at, updatedAt: at,
        },
      };
    }));
    await Promise.all(records.map((r) => store.recordExecution(r)));
    const due = new Date(Date.parse(at) + 1000).toISOString();
    const lease = new Date(Date.now() + 60_000).toISOString();
    const claimed = (await store.claimWebhooks(due, 100, lease, fair)).filter((d) => d.url?.includes(tag));
    expect(claimed.map((d) => d.projectId?.slice(0, 1))).toEqual(['a', 'b', 'c', 'a', 'b', 'c', 'a', 'b', 'c']);
    // With room for three, each project gets one.
    await store.releaseWebhooks(claimed.map((d) => d.id), lease);
    const three = await store.claimWebhooks(due, 3, lease, fair);
    expect(three.map((d) => d.projectId)).toEqual([`a-${tag}`, `b-${tag}`, `c-${tag}`]);
  });

  it.skipIf(!available)('leases idempotency claims: held while renewed, free once the lease runs out, never once completed', async () => {
    const at = (s: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, s)).toISOString();
    const old = '2029-12-01T00:00:00.000Z';
    const key = `lease-${Math.random().toString(36).slice(2)}`;
    expect(await store.claimIdempotencyKey(key, 'h', at(0), old, at(30))).toEqual({ claimed: true });
    await store.renewIdempotencyLease(key, at(50));
    expect(await store.claimIdempotencyKey(key, 'h', at(40), old, at(70))).toEqual({ claimed: false, requestHash: 'h' });
    // Its owner stopped renewing at 50 s: the key is free for the next request.
    expect(await store.claimIdempotencyKey(key, 'h2', at(51), old, at(81))).toEqual({ claimed: true });
    await store.completeIdempotencyKey(key, { status: 200, headers: {}, body: '[]' });
    await store.renewIdempotencyLease(key, at(500));
    const done = await store.claimIdempotencyKey(key, 'h2', at(200), old, at(230));
    expect(done).toMatchObject({ claimed: false, response: { status: 200, body: '[]' } });
  });

  it.skipIf(!available)('counts OffChainZKP answers per execution up to a budget, atomically', async () => {
    const e = execution({ state: 'pending', pending: { thid: 'n', expiresAt: 1 } });
    await store.recordExecution(e);
    const counts = await Promise.all(Array.from({ length: 5 }, () => store.countAnswer(e.executionId, 3)));
    expect(counts.filter((c) => c !== undefined).sort()).toEqual([1, 2, 3]);
    expect(await store.countAnswer(e.executionId, 4)).toBe(4);
    expect(await store.countAnswer(crypto.randomUUID(), 3)).toBeUndefined();
    expect(await store.countAnswer('not-a-uuid', 3)).toBeUndefined();
  });
});
