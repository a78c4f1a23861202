/** GET /compliance/executions/export on both stores: content, filters, cursor paging, tenancy, validation, CSV safety. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import type { FastifyInstance } from 'fastify';
import type { ExecutionRecord, Store } from '../src/store/types.js';
import { ADDRESS, demoCredential, makeApp, scenario } from './helpers.js';
import { execution, storeBackends } from './store/contract.js';

const A = 'token-of-project-a-0123456789';
const B = 'token-of-project-b-0123456789';
const OP = 'operator-token-0123456789xyz';
const ISSUER = 'https://issuer.test/';
const as = (token: string) => ({ authorization: `Bearer ${token}` });

const at = (minute: number) => new Date(Date.UTC(2026, 2, 1, 0, minute)).toISOString();
const rule = (id: string, status: 'valid' | 'not-valid', reasons: string[] = []) => ({
  objectType: 'ChallengeQuery' as const, objectId: id, name: 'n', address: ADDRESS, scenarioId: 's', executionId: 'x',
  result: { result: { is_valid: status === 'valid', reasons }, executionId: 'x', status, query: { type: 'T', operator: '$noop' as const } },
});

describe.each(storeBackends('export_routes'))('%s store: evidence export', (_name, open, available) => {
  let app: FastifyInstance;
  let store: Store;
  let jwks: http.Server | undefined;
  let signProjects: (projects: string[]) => Promise<string>;
  const seeded: ExecutionRecord[] = [];
  const get = async (token: string, query: string) => app.inject({ method: 'GET', url: `/compliance/executions/export?${query}`, headers: as(token) });
  /** The records, after checking the closing line that counts them. */
  const ndjson = (body: string) => {
    const lines = body.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line));
    expect(lines.at(-1)).toEqual({ end: true, records: lines.length - 1 });
    return lines.slice(0, -1);
  };
  const PERIOD = `from=${at(0)}&to=${at(60)}`;

  beforeAll(async () => {
    if (!available) return;
    store = await open();
    const pair = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    const keys = http.createServer((_req, res) => res.setHeader('content-type', 'application/json').end(JSON.stringify({ keys: [jwk] })));
    jwks = keys;
    await new Promise<void>((r) => keys.listen(0, '127.0.0.1', r));
    signProjects = (projects) => new SignJWT({ scope: 'scenarios:read', projects }).setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(ISSUER).setAudience('scs').setSubject('u').setIssuedAt().setExpirationTime('5m').sign(pair.privateKey);
    const jwksUrl = `http://127.0.0.1:${(keys.address() as AddressInfo).port}/jwks.json`;
    app = await makeApp({ API_TOKENS: `${A}:projA,${B}:projB,${OP}`, AUTH_JWKS_URL: jwksUrl, AUTH_JWT_ISSUER: ISSUER, AUTH_JWT_AUDIENCE: 'scs' }, { store });
    // Six in project A (two at the same instant), two in B, one without a project, one outside the period.
    const records = [
      execution({ projectId: 'projA', scenarioId: 'kyc', createdAt: at(1), results: [rule('q-kyc', 'valid'), rule('q-age', 'valid')] }),
      execution({ projectId: 'projA', scenarioId: 'kyc', createdAt: at(2), results: [rule('q-kyc', 'valid'), rule('q-age', 'not-valid', ['Zebulon is 17'])] }),
      execution({ projectId: 'projA', scenarioId: 'aml', createdAt: at(3), scenarioDigest: 'd'.repeat(64) }),
      execution({ projectId: 'projA', scenarioId: 'kyc', createdAt: at(3) }),
      execution({ projectId: 'projA', scenarioId: 'kyc', createdAt: at(4), address: '=HYPERLINK("http://evil.example","x")' }),
      execution({ projectId: 'projA', scenarioId: 'kyc', createdAt: at(5), results: [rule('-q', 'valid')] }),
      execution({ projectId: 'projB', scenarioId: 'kyc', createdAt: at(2) }),
      execution({ projectId: 'projB', scenarioId: 'kyc', createdAt: at(6) }),
      execution({ projectId: null, scenarioId: 'kyc', createdAt: at(7) }),
      execution({ projectId: 'projA', scenarioId: 'kyc', createdAt: at(61) }),
    ];
    for (const r of records) await store.recordExecution(r);
    seeded.push(...records);
  });
  afterAll(async () => {
    await app?.close();
    jwks?.close();
  });

  it.skipIf(!available)('streams NDJSON: one record a line with ids, revision, digest, verdict, rule statuses and credential digests', async () => {
    const res = await get(A, `${PERIOD}&scenarioId=kyc`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(res.headers.link).toBeUndefined();
    const records = ndjson(res.body);
    expect(records.map((r) => r.createdAt)).toEqual([at(1), at(2), at(3), at(4), at(5)]);
    expect(records[1]).toEqual({
      executionId: seeded[1]?.executionId, createdAt: at(2), projectId: 'projA', scenarioId: 'kyc', scenarioRevision: 3, scenarioDigest: null,
      address: ADDRESS, state: 'completed', verdict: 'failed', rules: [{ id: 'q-kyc', status: 'valid' }, { id: 'q-age', status: 'not-valid' }],
      credentials: ['a'.repeat(64)],
    });
    expect(records[0].verdict).toBe('passed');
    // Reasons are free text that may quote data; credential ids name credentials: neither is exported.
    expect(res.body).not.toContain('Zebulon');
    expect(res.body).not.toContain('urn:uuid:1');
  });

  it.skipIf(!available)('filters by period and scenario, and orders by time then record order', async () => {
    const aml = ndjson((await get(A, `${PERIOD}&scenarioId=aml`)).body);
    expect(aml.map((r) => r.executionId)).toEqual([seeded[2]?.executionId]);
    expect(aml[0].scenarioDigest).toBe('d'.repeat(64));
    const window = ndjson((await get(A, `from=${at(2)}&to=${at(4)}`)).body);
    expect(window.map((r) => r.executionId)).toEqual([seeded[1], seeded[2], seeded[3]].map((r) => r?.executionId));
    const offset = ndjson((await get(A, `from=${encodeURIComponent('2026-03-01T01:02:00+01:00')}&to=${at(3)}`)).body);
    expect(offset.map((r) => r.createdAt)).toEqual([at(2)]);
  });

  it.skipIf(!available)('pages by cursor: following Link rel=next loses and repeats nothing, ties included', async () => {
    for (const limit of [1, 2, 3, 5]) {
      const ids: string[] = [];
      let url: string | undefined = `/compliance/executions/export?${PERIOD}&limit=${limit}`;
      let parts = 0;
      while (url !== undefined) {
        const res: { statusCode: number; body: string; headers: Record<string, unknown> } = await app.inject({ method: 'GET', url, headers: as(A) });
        expect(res.statusCode).toBe(200);
        const part = ndjson(res.body);
        expect(part.length).toBeLessThanOrEqual(limit);
        ids.push(...part.map((r) => r.executionId));
        url = /^<([^>]+)>; rel="next"$/.exec(String(res.headers.link ?? ''))?.[1];
        parts++;
      }
      expect(ids).toEqual(seeded.slice(0, 6).map((r) => r.executionId));
      expect(parts).toBe(Math.ceil(6 / limit));
    }
  });

  it.skipIf(!available)('exports only the token\'s projects, like GET /compliance/executions/{id}', async () => {
    const ofB = ndjson((await get(B, PERIOD)).body);
    expect(ofB.map((r) => r.executionId)).toEqual([seeded[6], seeded[7]].map((r) => r?.executionId));
    expect(ndjson((await get(B, `${PERIOD}&projectId=projA`)).body)).toEqual([]);
    expect(ndjson((await get(A, `${PERIOD}&projectId=projB`)).body)).toEqual([]);
    expect(ndjson((await get(A, `${PERIOD}&projectId=`)).body)).toEqual([]);
    expect(ndjson((await get(OP, PERIOD)).body)).toHaveLength(9);
    expect(ndjson((await get(OP, `${PERIOD}&projectId=`)).body).map((r) => r.executionId)).toEqual([seeded[8]?.executionId]);
    expect(ndjson((await get(OP, `${PERIOD}&projectId=projB`)).body)).toHaveLength(2);
  });

  it.skipIf(!available)('exports nothing without a project to a JWT whose projects claim holds ""', async () => {
    const res = await get(await signProjects(['', 'projB']), PERIOD);
    expect(res.statusCode).toBe(200);
    expect(ndjson(res.body).map((r) => r.projectId)).toEqual(['projB', 'projB']);
    expect(ndjson((await get(await signProjects(['']), `${PERIOD}&projectId=`)).body)).toEqual([]);
  });

  it.skipIf(!available)('asks a token holding several projects to name one with projectId', async () => {
    const token = await signProjects(['projA', 'projB']);
    const res = await get(token, PERIOD);
    expect(res.statusCode).toBe(400);
    expect(res.json().errors.map((e: { field: string }) => e.field)).toEqual(['querystring.projectId']);
    expect(ndjson((await get(token, `${PERIOD}&projectId=projB`)).body)).toHaveLength(2);
  });

  it.skipIf(!available)('writes CSV by RFC 4180 with a header row, and defuses cells a spreadsheet would run as formulas', async () => {
    const res = await get(A, `${PERIOD}&format=csv&scenarioId=kyc`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8; header=present');
    const rows = res.body.split('\r\n');
    expect(rows[0]).toBe('executionId,createdAt,projectId,scenarioId,scenarioRevision,scenarioDigest,address,state,verdict,rules,credentials');
    expect(rows[2]).toBe(`${seeded[1]?.executionId},${at(2)},projA,kyc,3,,${ADDRESS},completed,failed,q-kyc=valid q-age=not-valid,${'a'.repeat(64)}`);
    expect(rows[4]).toContain(',"\'=HYPERLINK(""http://evil.example"",""x"")",');
    expect(rows[5]).toContain(',\'-q=valid,');
    expect(rows.at(-1)).toBe('');
    expect(rows).toHaveLength(7);
  });

  it.skipIf(!available)('refuses a bad query with 400 naming the field', async () => {
    const cases: Array<[string, string]> = [
      ['to=2026-03-02T00:00:00Z', 'querystring.from'],
      [`from=yesterday&to=${at(1)}`, 'querystring.from'],
      [`from=2026-02-30T00:00:00Z&to=${at(1)}`, 'querystring.from'],
      [`from=${at(0)}&to=2026-03-01`, 'querystring.to'],
      [`from=${at(5)}&to=${at(5)}`, 'querystring.to'],
      [`${PERIOD}&format=xlsx`, 'querystring.format'],
      [`${PERIOD}&limit=0`, 'querystring.limit'],
      [`${PERIOD}&limit=100001`, 'querystring.limit'],
      [`${PERIOD}&cursor=bm9wZQ`, 'querystring.cursor'],
      [`${PERIOD}&other=1`, 'querystring.other'],
    ];
    for (const [query, field] of cases) {
      const res = await get(A, query);
      expect(res.statusCode, query).toBe(400);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.json().errors.map((e: { field: string }) => e.field), query).toContain(field);
    }
  });

  it.skipIf(!available)('is not taken for an execution id, and needs a token', async () => {
    expect((await app.inject({ method: 'GET', url: `/compliance/executions/export?${PERIOD}` })).statusCode).toBe(401);
    const res = await get(A, PERIOD);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-disposition']).toBe('attachment; filename="executions-2026-03-01.ndjson"');
  });

  it.skipIf(!available)('exports an execution that ran with no credential content in it', async () => {
    await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: as(A), payload: { id: 'live', input: scenario({ projectId: 'projA' }) } });
    const cred = await demoCredential({ personalData: { firstName: 'Zebulon', age: 30 } });
    const ran = await app.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers: as(A), payload: { address: ADDRESS, credentials: [cred], scenarioId: 'live' } });
    expect(ran.statusCode).toBe(200);
    const now = Date.now();
    const res = await get(A, `from=${new Date(now - 60_000).toISOString()}&to=${new Date(now + 60_000).toISOString()}&scenarioId=live`);
    const [record] = ndjson(res.body);
    expect(record.executionId).toBe(ran.json()[0].executionId);
    expect(record.verdict).toBe('passed');
    expect(record.scenarioDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(record.rules).toEqual([{ id: 'q-kyc', status: 'valid' }, { id: 'q-age', status: 'valid' }]);
    expect(record.credentials).toEqual([expect.stringMatching(/^[0-9a-f]{64}$/)]);
    for (const text of ['Zebulon', String(cred.id), 'personalData', 'proof', cred.issuer]) expect(res.body).not.toContain(text);
  });
});
