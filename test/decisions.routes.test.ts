/**
 * The decisions API on both stores: a scenario's executions narrowed by verdict, address and period (cursor paging
 * under filters), the summary counted by the database (verdicts per bucket, failing rules), the export's same filters,
 * and the 400s naming the parameter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { ExecutionRecord, Store } from '../src/store/types.js';
import { makeApp } from './helpers.js';
import { execution, storeBackends } from './store/contract.js';

const A = 'token-of-project-a-0123456789';
const B = 'token-of-project-b-0123456789';
const AB = 'token-of-projects-a-and-b-0123';
const as = (token: string) => ({ authorization: `Bearer ${token}` });
const ONE = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const TWO = '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359';
/** Minutes and hours after 2026-03-01T00:00Z. */
const at = (hour: number, minute = 0) => new Date(Date.UTC(2026, 2, 1, hour, minute)).toISOString();
const rule = (id: string, status: 'valid' | 'not-valid' | 'error' | 'pending') => ({
  objectType: 'ChallengeQuery' as const, objectId: id, name: 'n', address: ONE, scenarioId: 'kyc', executionId: 'x',
  result: { result: { is_valid: status === 'valid', reasons: status === 'not-valid' ? [`${id} failed`] : [] }, executionId: 'x', status, query: { type: 'T', operator: '$noop' as const } },
});
const passed = [rule('q-kyc', 'valid'), rule('q-age', 'valid')];
const ageFails = [rule('q-kyc', 'valid'), rule('q-age', 'not-valid')];
const bothFail = [rule('q-kyc', 'not-valid'), rule('q-age', 'not-valid')];
const kycErrs = [rule('q-kyc', 'error'), rule('q-age', 'valid')];

describe.each(storeBackends('decisions_routes'))('%s store: the decisions API', (_name, open, available) => {
  let app: FastifyInstance;
  let store: Store;
  const seeded: ExecutionRecord[] = [];
  const get = (url: string, token = A) => app.inject({ method: 'GET', url, headers: as(token) });
  const list = async (query: string, token = A) => {
    const res = await get(`/compliance/scenarios/kyc/executions?${query}`, token);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { items: Array<{ executionId: string; verdict: string; address: string }>; nextCursor: string | null };
  };
  /** Every page, following nextCursor with the same filters; no page holds more items than `pageSize` asks. */
  const all = async (query: string, pageSize: number) => {
    const ids: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await list(`${query}&limit=${pageSize}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.items.slice(pageSize)).toEqual([]); // a count of items, not a time: nothing beyond the page's limit
      ids.push(...page.items.map((x) => x.executionId));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== null && pages < 50);
    return ids;
  };
  const idsOf = (pick: (r: ExecutionRecord) => boolean) => seeded.filter(pick).map((r) => r.executionId).reverse();

  beforeAll(async () => {
    if (!available) return;
    store = await open();
    app = await makeApp({ API_TOKENS: `${A}:projA,${B}:projB,${AB}:projA+projB` }, { store });
    // Project A's scenario kyc over two days (hours 1..26), two addresses; B's kyc and A's aml are not listed.
    const records = [
      execution({ projectId: 'projA', scenarioId: 'kyc', createdAt: at(1), address: ONE, results: passed }),
      execution({ projectId: 'projA', scenarioId: 'kyc', createdAt: at(1, 30), address: TWO, results: ageFails }),
      execution({ projectId: 'projA', scenarioId: 'kyc', createdAt: at(2), address: ONE, results: bothFail }),
      execution({ projectId: 'projA', scenarioId: 'kyc', createdAt: at(2, 10), address: TWO, results: passed }),
      execution({ projectId: 'projA', scenarioId: 'kyc', createdAt: at(5), address: ONE, results: kycErrs }),
      execution({ projectId: 'projA', scenarioId: 'kyc', createdAt: at(25), address: TWO, results: ageFails }),
      execution({ projectId: 'projA', scenarioId: 'kyc', createdAt: at(26), address: ONE, results: passed }),
      execution({ projectId: 'projB', scenarioId: 'kyc', createdAt: at(2), address: ONE, results: ageFails }),
      execution({ projectId: 'projA', scenarioId: 'aml', createdAt: at(2), address: ONE, results: ageFails }),
    ];
    for (const r of records) await store.recordExecution(r);
    seeded.push(...records.slice(0, 7));
  });
  afterAll(async () => {
    await app?.close();
  });

  it.skipIf(!available)('narrows the list by verdict, by address, by period and by all three, newest first', async () => {
    expect((await list('')).items.map((x) => x.executionId)).toEqual(idsOf(() => true));
    const failed = await list('verdict=failed');
    expect(failed.items.map((x) => x.executionId)).toEqual([seeded[5], seeded[2], seeded[1]].map((r) => r!.executionId));
    expect(failed.items.every((x) => x.verdict === 'failed')).toBe(true);
    expect((await list('verdict=error')).items.map((x) => x.executionId)).toEqual([seeded[4]!.executionId]);
    expect((await list(`address=${TWO}`)).items.map((x) => x.executionId)).toEqual(idsOf((r) => r.address === TWO));
    expect((await list(`from=${at(2)}&to=${at(25)}`)).items.map((x) => x.executionId)).toEqual([seeded[4], seeded[3], seeded[2]].map((r) => r!.executionId));
    expect((await list(`verdict=failed&address=${TWO}&from=${at(0)}&to=${at(24)}`)).items.map((x) => x.executionId)).toEqual([seeded[1]!.executionId]);
    expect((await list('verdict=pending')).items).toEqual([]);
    expect((await list(`address=${TWO}`, B)).items).toEqual([]);
  });

  it.skipIf(!available)('pages a filtered list by cursor: nothing lost, nothing repeated, only matching records', async () => {
    for (const limit of [1, 2, 3]) {
      expect(await all(`address=${ONE}`, limit)).toEqual(idsOf((r) => r.address === ONE));
      expect(await all('verdict=passed', limit)).toEqual(idsOf((r) => r.results.every((x) => x.result.status === 'valid')));
      expect(await all(`from=${at(1, 30)}&to=${at(26)}`, limit)).toEqual(idsOf((r) => r.createdAt >= at(1, 30) && r.createdAt < at(26)));
    }
  });

  it.skipIf(!available)('counts verdicts per hour and per day, every bucket listed, and the rules that fail most', async () => {
    const res = await get(`/compliance/scenarios/kyc/executions/summary?from=${at(0, 30)}&to=${at(3)}&bucket=hour`);
    expect(res.statusCode, res.body).toBe(200);
    const zero = { passed: 0, failed: 0, error: 0, pending: 0 };
    expect(res.json()).toEqual({
      from: at(0, 30), to: at(3), bucket: 'hour',
      totals: { ...zero, passed: 2, failed: 2 },
      buckets: [
        { start: at(0), ...zero },
        { start: at(1), ...zero, passed: 1, failed: 1 },
        { start: at(2), ...zero, passed: 1, failed: 1 },
      ],
      rules: [{ id: 'q-age', notValid: 2, error: 0 }, { id: 'q-kyc', notValid: 1, error: 0 }],
    });
    const days = (await get(`/compliance/scenarios/kyc/executions/summary?from=${at(0)}&to=${at(48)}`)).json();
    expect(days.bucket).toBe('day');
    expect(days.buckets).toEqual([{ start: at(0), ...zero, passed: 2, failed: 2, error: 1 }, { start: at(24), ...zero, passed: 1, failed: 1 }]);
    expect(days.rules).toEqual([{ id: 'q-age', notValid: 3, error: 0 }, { id: 'q-kyc', notValid: 1, error: 1 }]);
    const ofTwo = (await get(`/compliance/scenarios/kyc/executions/summary?from=${at(0)}&to=${at(48)}&address=${TWO}&verdict=failed`)).json();
    expect(ofTwo.totals).toEqual({ ...zero, failed: 2 });
    expect(ofTwo.rules).toEqual([{ id: 'q-age', notValid: 2, error: 0 }]);
    const ofB = (await get(`/compliance/scenarios/kyc/executions/summary?from=${at(0)}&to=${at(48)}`, B)).json();
    expect(ofB.totals).toEqual({ ...zero, failed: 1 });
  });

  it.skipIf(!available)('exports the filtered period only: verdict and address as the list takes them, kept in the next part\'s link', async () => {
    const ndjson = (body: string) => body.split('\n').filter(Boolean).map((l) => JSON.parse(l)).slice(0, -1);
    const res = await get(`/compliance/executions/export?from=${at(0)}&to=${at(48)}&scenarioId=kyc&verdict=failed&address=${TWO}`);
    expect(res.statusCode).toBe(200);
    expect(ndjson(res.body).map((r) => r.executionId)).toEqual([seeded[1], seeded[5]].map((r) => r!.executionId));
    const first = await get(`/compliance/executions/export?from=${at(0)}&to=${at(48)}&scenarioId=kyc&verdict=failed&limit=1`);
    const next = /^<([^>]+)>; rel="next"$/.exec(String(first.headers.link))?.[1];
    expect(next).toContain('verdict=failed');
    expect(ndjson((await get(next!)).body).map((r) => r.verdict)).toEqual(['failed']);
    // The address is kept in the next part's link too: the second part is TWO's other failure, not seeded[2] (ONE's).
    const byAddress = await get(`/compliance/executions/export?from=${at(0)}&to=${at(48)}&scenarioId=kyc&verdict=failed&address=${TWO}&limit=1`);
    const nextOfTwo = /^<([^>]+)>; rel="next"$/.exec(String(byAddress.headers.link))?.[1];
    expect(new URL(nextOfTwo!, 'http://x').searchParams.get('address')).toBe(TWO);
    expect(ndjson((await get(nextOfTwo!)).body).map((r) => r.executionId)).toEqual([seeded[5]!.executionId]);
  });

  it.skipIf(!available)('reads from and to with a non-UTC offset as the instant they name', async () => {
    // 03:00+02:00 is 01:00Z and 04:05+02:00 is 02:05Z: the executions of 01:00, 01:30 and 02:00.
    const ids = await all(`from=${encodeURIComponent('2026-03-01T03:00:00+02:00')}&to=${encodeURIComponent('2026-03-01T04:05:00+02:00')}`, 10);
    expect(ids).toEqual(idsOf((r) => r.createdAt >= at(1) && r.createdAt < at(2, 5)));
    expect(ids).toHaveLength(3);
    const res = await get(`/compliance/scenarios/kyc/executions/summary?from=${encodeURIComponent('2026-03-01T03:00:00+02:00')}&to=${encodeURIComponent('2026-03-01T04:05:00+02:00')}&bucket=hour`);
    expect(res.json().from).toBe(at(1));
    expect(res.json().buckets.map((b: { start: string }) => b.start)).toEqual([at(1), at(2)]);
  });

  it.skipIf(!available)('counts by day from a mid-day from: the first bucket is that day, counting only from then', async () => {
    const res = (await get(`/compliance/scenarios/kyc/executions/summary?from=${at(12)}&to=${at(48)}&bucket=day`)).json();
    expect(res.buckets).toEqual([
      { start: at(0), passed: 0, failed: 0, error: 0, pending: 0 },
      { start: at(24), passed: 1, failed: 1, error: 0, pending: 0 },
    ]);
    expect(res.totals).toEqual({ passed: 1, failed: 1, error: 0, pending: 0 });
  });

  it.skipIf(!available)('refuses a bad filter with 400 naming the parameter', async () => {
    const cases: Array<[string, string]> = [
      ['/compliance/scenarios/kyc/executions?verdict=green', 'querystring.verdict'],
      ['/compliance/scenarios/kyc/executions?address=not-an-address', 'querystring.address'],
      ['/compliance/scenarios/kyc/executions?from=yesterday', 'querystring.from'],
      [`/compliance/scenarios/kyc/executions?to=${at(1)}&from=${at(2)}`, 'querystring.to'],
      [`/compliance/scenarios/kyc/executions/summary?to=${at(1)}`, 'querystring.from'],
      [`/compliance/scenarios/kyc/executions/summary?from=${at(0)}&to=${at(1)}&bucket=week`, 'querystring.bucket'],
      [`/compliance/scenarios/kyc/executions/summary?from=${at(0)}&to=2026-05-15T00:00:00Z&bucket=hour`, 'querystring.to'],
      [`/compliance/executions/export?from=${at(0)}&to=${at(1)}&verdict=ok`, 'querystring.verdict'],
      [`/compliance/executions/export?from=${at(0)}&to=${at(1)}&address=%20x`, 'querystring.address'],
    ];
    for (const [url, field] of cases) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json().errors.map((e: { field: string }) => e.field), url).toContain(field);
    }
    const tooMany = await get(`/compliance/scenarios/kyc/executions/summary?from=${at(0)}&to=2026-05-15T00:00:00Z&bucket=hour`);
    expect(tooMany.json().errors[0].message).toMatch(/at most 1000/);
    expect((await get(`/compliance/scenarios/kyc/executions/summary?from=${at(0)}&to=2026-05-15T00:00:00Z&bucket=day`)).statusCode).toBe(200);
  });

  it.skipIf(!available)('narrows the list and the summary to ?projectId= for a token of several projects, as the export', async () => {
    const period = `from=${at(0)}&to=${at(48)}`;
    expect((await list(period, AB)).items).toHaveLength(8);
    expect((await list(`${period}&projectId=projA`, AB)).items.map((x) => x.executionId)).toEqual(idsOf(() => true));
    expect((await list(`${period}&projectId=projB`, AB)).items).toHaveLength(1);
    expect((await list(`${period}&projectId=projB`, A)).items).toEqual([]);
    const summary = async (query: string) => (await get(`/compliance/scenarios/kyc/executions/summary?${period}${query}`, AB)).json().totals;
    expect(await summary('')).toEqual({ passed: 3, failed: 4, error: 1, pending: 0 });
    expect(await summary('&projectId=projB')).toEqual({ passed: 0, failed: 1, error: 0, pending: 0 });
    expect(await summary('&projectId=projA')).toEqual({ passed: 3, failed: 3, error: 1, pending: 0 });
  });

  it.skipIf(!available)('refuses a summary of more than SUMMARY_MAX_EXECUTIONS executions (400 naming from), and more than SUMMARIES_PER_MINUTE a minute (429)', async () => {
    // The store stays the suite's (its afterAll closes it); its March records are kept (no purge at start).
    const bounded = await makeApp({ API_TOKENS: `${A}:projA`, SUMMARY_MAX_EXECUTIONS: '6', SUMMARIES_PER_MINUTE: '3', EXECUTION_RETENTION_DAYS: '36500' }, { store: { ...store, close: async () => {} } });
    try {
      const summary = (to: number) => bounded.inject({ method: 'GET', url: `/compliance/scenarios/kyc/executions/summary?from=${at(0)}&to=${at(to)}`, headers: as(A) });
      // Project A's kyc: 7 executions in two days, 5 in the first.
      const whole = await summary(48);
      expect(whole.statusCode, whole.body).toBe(400);
      expect(whole.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(whole.json().errors).toEqual([expect.objectContaining({ field: 'querystring.from', message: expect.stringMatching(/more than 6 executions.*narrow/) })]);
      const first = await summary(24);
      expect(first.statusCode, first.body).toBe(200);
      expect(first.json().totals).toEqual({ passed: 2, failed: 2, error: 1, pending: 0 });
      expect((await summary(24)).statusCode).toBe(200);
      const limited = await summary(24);
      expect(limited.statusCode).toBe(429);
      expect(limited.json().detail).toMatch(/at most 3 summaries a minute/);
      // The list is not under the summaries' budget.
      expect((await bounded.inject({ method: 'GET', url: '/compliance/scenarios/kyc/executions', headers: as(A) })).statusCode).toBe(200);
    } finally {
      await bounded.close();
    }
  });
});
