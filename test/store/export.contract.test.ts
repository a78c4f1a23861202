/** The export repository on both stores: keyset pages by (createdAt, seq), and the service reading them in pages. */
import { describe, expect, it } from 'vitest';
import type { EvidenceRange } from '../../src/store/types.js';
import { accessFor } from '../../src/services/access.js';
import { EvidenceExporter } from '../../src/services/export.js';
import { execution, sharedStore, storeBackends } from './contract.js';

const at = (second: number) => new Date(Date.UTC(2026, 4, 1, 0, 0, second)).toISOString();

describe.each(storeBackends('contract_export'))('%s store: export', (_name, open, available) => {
  const store = sharedStore(open, available);
  const exporter = new EvidenceExporter(store);
  const access = accessFor(new Set(['proj']));

  it.skipIf(!available)('reads a range in (createdAt, seq) order across store pages and request parts, losing and repeating nothing', async () => {
    const scenarioId = `bulk-${Math.random()}`;
    // 700 records over 7 instants, recorded out of time order: many ties, more than two store pages.
    const records = Array.from({ length: 700 }, (_, i) => execution({ scenarioId, createdAt: at((i * 3) % 7) }));
    for (let i = 0; i < records.length; i += 100) await Promise.all(records.slice(i, i + 100).map((r) => store.recordExecution(r)));
    const range: EvidenceRange = { from: at(0), to: at(7), scenarioId, project: 'proj' };
    const whole = await text(exporter.export(access, range, 100_000, 'ndjson'));
    const times = whole.map((r) => r.createdAt);
    expect(times).toEqual([...times].sort());
    expect(new Set(whole.map((r) => r.executionId))).toEqual(new Set(records.map((r) => r.executionId)));
    expect(whole).toHaveLength(700);

    const parts: string[][] = [];
    let after: EvidenceRange['after'];
    for (;;) {
      const part = await exporter.export(access, { ...range, ...(after && { after }) }, 300, 'ndjson');
      parts.push((await text(part)).map((r) => r.executionId));
      if (!part.next) break;
      after = part.next;
    }
    expect(parts.map((p) => p.length)).toEqual([300, 300, 100]);
    expect(parts.flat()).toEqual(whole.map((r) => r.executionId));
  });

  it.skipIf(!available)('keeps to its project (null for none), its period and its bounds', async () => {
    const scenarioId = `scoped-${Math.random()}`;
    const records = [
      execution({ scenarioId, projectId: 'p1', createdAt: at(10) }),
      execution({ scenarioId, projectId: null, createdAt: at(11) }),
      execution({ scenarioId, projectId: 'p2', createdAt: at(12) }),
      execution({ scenarioId, projectId: 'p1', createdAt: at(13) }),
    ];
    for (const r of records) await store.recordExecution(r);
    const range = (over: Partial<EvidenceRange>): EvidenceRange => ({ from: at(10), to: at(14), scenarioId, ...over });
    const ids = async (over: Partial<EvidenceRange>) => (await store.evidencePage(range(over), 10)).map((e) => e.executionId);
    const id = (k: number) => records[k]?.executionId;
    expect(await ids({})).toEqual([id(0), id(1), id(2), id(3)]);
    expect(await ids({ project: 'p1' })).toEqual([id(0), id(3)]);
    expect(await ids({ project: null })).toEqual([id(1)]);
    expect(await ids({ project: '' })).toEqual([]);
    expect(await ids({ from: at(11), to: at(13) })).toEqual([id(1), id(2)]);
    const { key: second, more } = await store.evidenceCut(range({}), 2);
    expect(more).toBe(true);
    expect(second?.createdAt).toBe(at(11));
    expect(await ids({ ...(second && { after: second }) })).toEqual([id(2), id(3)]);
    expect(await ids({ ...(second && { through: second }) })).toEqual([id(0), id(1)]);
    expect(await store.evidenceCut(range({}), 4)).toEqual({ key: expect.objectContaining({ createdAt: at(13) }), more: false });
    expect(await store.evidenceCut(range({}), 5)).toEqual({ more: false });
    const [first] = await store.evidencePage(range({}), 1);
    expect(first).toEqual({
      executionId: id(0), createdAt: at(10), projectId: 'p1', scenarioId, scenarioRevision: 3, scenarioDigest: null, address: records[0]?.address,
      state: 'completed', rules: [{ id: 'q', status: 'not-valid' }], credentials: ['a'.repeat(64)], seq: expect.any(Number),
    });
  });

  it.skipIf(!available)('ends NDJSON with a line counting the records, and a body cut by a failing store page without it', async () => {
    const scenarioId = `cut-${Math.random()}`;
    for (let i = 0; i < 300; i += 100) {
      await Promise.all(Array.from({ length: 100 }, () => execution({ scenarioId, createdAt: at(30) })).map((r) => store.recordExecution(r)));
    }
    const range = { from: at(30), to: at(31), scenarioId };
    expect(await text(exporter.export(access, range, 1000, 'ndjson'))).toHaveLength(300);
    let pages = 0;
    const failing = new EvidenceExporter({
      evidenceCut: (r, n) => store.evidenceCut(r, n),
      evidencePage: async (r, n) => {
        if (++pages === 2) throw new Error('the store went away');
        return store.evidencePage(r, n);
      },
    });
    let body = '';
    await expect((async () => {
      for await (const chunk of (await failing.export(access, range, 1000, 'ndjson')).text) body += chunk;
    })()).rejects.toThrow('the store went away');
    const lines = body.split('\n').filter((line) => line !== '');
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.map((line) => JSON.parse(line) as { end?: boolean }).filter((line) => line.end)).toEqual([]);
  });

  it.skipIf(!available)('defuses in CSV a formula after leading blanks, and quotes a cell holding ;', async () => {
    const scenarioId = `csv-${Math.random()}`;
    const addresses = [' =1+1', '\u00a0@SUM(A1)', 'x;=cmd|\' /C calc\'!A0', '0xabc'];
    for (const [i, address] of addresses.entries()) await store.recordExecution(execution({ scenarioId, address, createdAt: at(40 + i) }));
    let body = '';
    for await (const chunk of (await exporter.export(access, { from: at(40), to: at(44), scenarioId }, 10, 'csv')).text) body += chunk;
    const cells = body.split('\r\n').slice(1, -1).map((row) => row.split(',')[6]);
    expect(cells).toEqual(['\' =1+1', '\'\u00a0@SUM(A1)', '"x;=cmd|\' /C calc\'!A0"', '0xabc']);
  });

  it.skipIf(!available)('gives the executions without a project only to an operator naming them, never to a token holding ""', async () => {
    const scenarioId = `none-${Math.random()}`;
    const record = execution({ scenarioId, projectId: null, createdAt: at(20) });
    await store.recordExecution(record);
    const range = { from: at(20), to: at(21), scenarioId };
    expect(await text(exporter.export(accessFor(new Set(['']), ''), range, 10, 'ndjson'))).toEqual([]);
    expect(await text(exporter.export(accessFor(new Set(['']), undefined), range, 10, 'ndjson'))).toEqual([]);
    expect((await text(exporter.export(accessFor('*', ''), range, 10, 'ndjson'))).map((r) => r.executionId)).toEqual([record.executionId]);
  });
});

async function text(part: Promise<{ text: AsyncIterable<string> }> | { text: AsyncIterable<string> }) {
  let body = '';
  for await (const chunk of (await part).text) body += chunk;
  const lines = body.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { executionId: string; createdAt: string });
  expect(lines.at(-1)).toEqual({ end: true, records: lines.length - 1 });
  return lines.slice(0, -1);
}
