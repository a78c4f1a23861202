/** Listings are bounded in bytes as well as in count, on both stores (issue 25: one page of executions was 335 MB). */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite.js';
import { openPostgresStore } from '../../src/store/postgres.js';
import { PAGE_MAX_BYTES } from '../../src/store/rows.js';
import type { ExecutionRecord, Store } from '../../src/store/types.js';
import type { Scenario } from '../../src/schemas/scenario.js';
import { scenario, tempDir } from '../helpers.js';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from '../pg.js';

const schema = freshSchema('listing');
const backends: Array<[string, () => Promise<Store>, boolean]> = [
  ['sqlite', async () => openSqliteStore({ file: path.join(tempDir(), 'l.db'), synchronous: 'NORMAL' }), true],
  ['postgres', async () => openPostgresStore({ url: PG_URL, schema }), pgAvailable],
];
afterAll(async () => {
  if (pgAvailable) await dropSchema(schema);
});

const at = '2026-03-04T05:06:07.089Z';
/** An execution whose one result carries `size` bytes of reason. */
const record = (scenarioId: string, size: number, projectId: string | null = null): ExecutionRecord => {
  const executionId = crypto.randomUUID();
  return {
    executionId, scenarioId, scenarioRevision: 1, projectId, address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', state: 'completed',
    results: [{
      objectType: 'ChallengeQuery', objectId: 'q', name: 'n', address: 'a', scenarioId, executionId,
      result: { result: { is_valid: false, reasons: ['r'.repeat(size)] }, executionId, status: 'not-valid', query: { type: 'T', operator: '$noop' } },
    }],
    credentials: [{ id: 'urn:uuid:1', sha256: 'a'.repeat(64) }],
    createdAt: at, updatedAt: at,
  };
};
const size = (r: unknown) => Buffer.byteLength(JSON.stringify(r));

describe.each(backends)('%s store', (_name, open, available) => {
  let store: Store;
  beforeAll(async () => {
    if (available) store = await open();
  });
  afterAll(async () => {
    await store?.close();
  });

  it.skipIf(!available)(`ends a page of executions at ${PAGE_MAX_BYTES} bytes, with a cursor that walks every record once`, async () => {
    const records = Array.from({ length: 10 }, () => record('big', 300 * 1024));
    for (const r of records) await store.recordExecution(r);
    const pages: ExecutionRecord[][] = [];
    let before: number | undefined;
    do {
      const page = await store.listExecutions('big', 100, before);
      pages.push(page.items);
      before = page.next;
    } while (before !== undefined);
    for (const items of pages) expect(items.length === 1 || size(items) <= PAGE_MAX_BYTES).toBe(true);
    expect(pages.length).toBeGreaterThan(3);
    expect(pages.flat().map((r) => r.executionId)).toEqual(records.map((r) => r.executionId).reverse());
  });

  it.skipIf(!available)('holds one record over the budget alone, and small records up to the limit', async () => {
    const huge = record('mixed', PAGE_MAX_BYTES + 10);
    await store.recordExecution(huge);
    const small = Array.from({ length: 5 }, () => record('mixed', 10));
    for (const r of small) await store.recordExecution(r);
    const first = await store.listExecutions('mixed', 3);
    expect(first.items.map((r) => r.executionId)).toEqual(small.slice(2).map((r) => r.executionId).reverse());
    const second = await store.listExecutions('mixed', 100, first.next);
    expect(second.items.map((r) => r.executionId)).toEqual(small.slice(0, 2).map((r) => r.executionId).reverse());
    const third = await store.listExecutions('mixed', 100, second.next);
    expect(third.items.map((r) => r.executionId)).toEqual([huge.executionId]);
    expect(third.next).toBeUndefined();
  });

  it.skipIf(!available)('bounds a project-filtered page the same way', async () => {
    const mine = Array.from({ length: 6 }, () => record('shared', 300 * 1024, 'p1'));
    for (const r of mine) {
      await store.recordExecution(r);
      await store.recordExecution(record('shared', 300 * 1024, 'p2'));
    }
    const page = await store.listExecutions('shared', 100, undefined, ['p1']);
    expect(page.items.map((r) => r.projectId)).toEqual(['p1', 'p1', 'p1']);
    expect(page.next).toBeDefined();
  });

  it.skipIf(!available)(`ends a page of scenarios at ${PAGE_MAX_BYTES} bytes`, async () => {
    const description = 'd'.repeat(300 * 1024);
    for (let i = 0; i < 5; i++) await store.create(`wide-${i}`, scenario({ description, projectId: 'wide' }) as unknown as Scenario, at);
    const first = await store.list(100, 0, ['wide']);
    expect(first.items.map((r) => r.id)).toEqual(['wide-0', 'wide-1', 'wide-2']);
    const firstPageBytes = size(first.items.map((r) => r.input));
    expect(firstPageBytes).toBeLessThanOrEqual(PAGE_MAX_BYTES);
    const second = await store.list(100, first.next, ['wide']);
    expect(second.items.map((r) => r.id)).toEqual(['wide-3', 'wide-4']);
    expect(second.next).toBeUndefined();
  });
});
