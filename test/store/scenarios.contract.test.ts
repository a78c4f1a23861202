/** The contract of the scenario repository, on both stores. */
import { describe, expect, it } from 'vitest';
import { ScenarioIdTaken } from '../../src/store/errors.js';
import { input, now, sharedStore, storeBackends } from './contract.js';

describe.each(storeBackends('contract_scenarios'))('%s store: scenarios', (_name, open, available) => {
  const store = sharedStore(open, available);

  const one = async (id: string, scope?: string[]) => {
    const rows = await store.find(id, scope);
    expect(rows.length).toBeLessThanOrEqual(1);
    return rows[0];
  };

  it.skipIf(!available)('creates at revision 1 and reads back exactly what it wrote', async () => {
    const row = await store.create('a', input({ message: 'ü ✓ "quoted"' }), '2026-01-02T03:04:05.678Z');
    expect(row).toMatchObject({ id: 'a', revision: 1, createdAt: '2026-01-02T03:04:05.678Z', updatedAt: '2026-01-02T03:04:05.678Z' });
    expect((await one('a'))!.input).toEqual(input({ message: 'ü ✓ "quoted"' }));
    expect(await store.heads('a', undefined)).toEqual([{ seq: row!.seq, revision: 1, shadow: null }]);
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
    expect(await store.heads('shared', ['pb'])).toEqual([{ seq: b!.seq, revision: 1, shadow: null }]);
    expect(await store.heads('shared', undefined)).toEqual([{ seq: a!.seq, revision: 1, shadow: null }, { seq: b!.seq, revision: 1, shadow: null }]);
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
});
