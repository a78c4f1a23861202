/** The contract of the execution repository, on both stores. */
import { describe, expect, it } from 'vitest';
import type { ExecutionRecord } from '../../src/store/types.js';
import { execution, now, sharedStore, storeBackends } from './contract.js';

describe.each(storeBackends('contract_executions'))('%s store: executions', (_name, open, available) => {
  const store = sharedStore(open, available);

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

  it.skipIf(!available)('keeps the verdict with the results: a pending execution answered is found by its new verdict', async () => {
    const scenarioId = `verdict-${Math.random()}`;
    const pendingResults = execution().results.map((r) => ({ ...r, result: { ...r.result, status: 'pending' as const } }));
    const e = execution({ scenarioId, state: 'pending', results: pendingResults, pending: { thid: 'v', expiresAt: 1 } });
    await store.recordExecution(e);
    const ids = async (verdict: 'pending' | 'passed') => (await store.listExecutions(scenarioId, 10, undefined, undefined, { verdict })).items.map((r) => r.executionId);
    expect(await ids('pending')).toEqual([e.executionId]);
    const results = e.results.map((r) => ({ ...r, result: { ...r.result, status: 'valid' as const } }));
    expect(await store.completeExecution(e.executionId, { state: 'completed', results, updatedAt: now() })).toBe(true);
    expect(await ids('pending')).toEqual([]);
    expect(await ids('passed')).toEqual([e.executionId]);
    const counts = (await store.countExecutions(scenarioId, { from: '2000-01-01T00:00:00.000Z', to: '2100-01-01T00:00:00.000Z' }, 'day'))!;
    expect(counts.buckets).toEqual([{ bucket: e.createdAt.slice(0, 10), verdict: 'passed', n: 1 }]);
    expect(counts.rules).toEqual([]);
    // SUMMARY_MAX_EXECUTIONS: more than `max` executions in the period count nothing.
    const period = { from: '2000-01-01T00:00:00.000Z', to: '2100-01-01T00:00:00.000Z' };
    expect(await store.countExecutions(scenarioId, period, 'day', undefined, 0)).toBeUndefined();
    expect((await store.countExecutions(scenarioId, period, 'day', undefined, 1))!.buckets).toHaveLength(1);
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
