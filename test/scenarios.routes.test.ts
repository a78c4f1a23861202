import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { TOKEN, auth, makeApp, scenario, tempDir } from './helpers.js';

let app: FastifyInstance;
beforeEach(async () => {
  app = await makeApp();
});
afterEach(async () => {
  await app.close();
});

const create = (body: unknown, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: '/compliance/scenarios', headers: { ...auth, ...headers }, payload: body as object });
const get = (id: string) => app.inject({ method: 'GET', url: `/compliance/scenarios/${id}`, headers: auth });
const patch = (id: string, body: unknown, headers: Record<string, string> = {}) =>
  app.inject({
    method: 'PATCH', url: `/compliance/scenarios/${id}`,
    headers: { ...auth, 'content-type': 'application/json', ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });

function expectProblem(res: { statusCode: number; headers: Record<string, unknown>; json(): any }, status: number) {
  expect(res.statusCode).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.json();
  expect(body.status).toBe(status);
  expect(typeof body.title).toBe('string');
  expect(typeof body.type).toBe('string');
  expect(JSON.stringify(body)).not.toMatch(/at .*\.(ts|js):\d+/); // no stack trace
  return body;
}

describe('authentication', () => {
  it('answers 401 problem+json with WWW-Authenticate when the token is missing', async () => {
    const res = await app.inject({ method: 'GET', url: '/compliance/scenarios' });
    expectProblem(res, 401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  it('answers 401 for a wrong token, a token of another scheme and a malformed header', async () => {
    for (const authorization of [`Bearer ${TOKEN}x`, `Basic ${TOKEN}`, 'Bearer', `Bearer ${TOKEN.slice(1)}`]) {
      const res = await app.inject({ method: 'GET', url: '/compliance/scenarios', headers: { authorization } });
      expectProblem(res, 401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    }
  });

  it('requires the token on PATCH too, and writes nothing without it', async () => {
    await create({ id: 's1', input: scenario() });
    const res = await app.inject({
      method: 'PATCH', url: '/compliance/scenarios/s1', headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ input: { name: 'hijacked' } }),
    });
    expectProblem(res, 401);
    expect((await get('s1')).json().input.name).toBe('Adult KYC');
  });

  it('leaves health checks open', async () => {
    expect((await app.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
  });
});

describe('POST /compliance/scenarios', () => {
  it('creates with a client id: 201, Location, ETag, revision 1', async () => {
    const res = await create({ id: 'adult-kyc', input: scenario() });
    expect(res.statusCode).toBe(201);
    expect(res.headers.location).toBe('/compliance/scenarios/adult-kyc');
    expect(res.headers.etag).toMatch(/^"\d+\.1"$/);
    const body = res.json();
    expect(body).toEqual({
      id: 'adult-kyc', input: scenario(), revision: 1, createdAt: expect.any(String), updatedAt: expect.any(String),
    });
    expect(body.createdAt).toBe(body.updatedAt);
    expect(new Date(body.createdAt).toISOString()).toBe(body.createdAt);
  });

  it('generates a UUID when no id is given', async () => {
    const res = await create({ input: scenario() });
    expect(res.statusCode).toBe(201);
    expect(res.json().id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(res.headers.location).toBe(`/compliance/scenarios/${res.json().id}`);
  });

  it('answers 409 when the id is taken, and keeps the first scenario', async () => {
    await create({ id: 'dup', input: scenario() });
    const res = await create({ id: 'dup', input: scenario({ name: 'Other' }) });
    expectProblem(res, 409);
    expect((await get('dup')).json().input.name).toBe('Adult KYC');
  });

  it('refuses ids outside 1..128 of [A-Za-z0-9_.:-] naming body.id', async () => {
    for (const id of ['', 'a b', 'x'.repeat(129), 'é', 'a/b']) {
      const body = expectProblem(await create({ id, input: scenario() }), 400);
      expect(body.errors.map((e: any) => e.field)).toContain('body.id');
    }
    expect((await create({ id: 'A-z_0.9:x', input: scenario() })).statusCode).toBe(201);
  });

  it('names each missing required field of the scenario', async () => {
    const { name: _n, type: _t, ...rest } = scenario();
    const body = expectProblem(await create({ input: rest }), 400);
    const fields = body.errors.map((e: any) => e.field);
    expect(fields).toContain('body.input.name');
    expect(fields).toContain('body.input.type');
  });

  it('refuses unknown fields instead of dropping them', async () => {
    const body = expectProblem(await create({ input: { ...scenario(), colour: 'red' } }), 400);
    expect(body.errors).toContainEqual(expect.objectContaining({ field: 'body.input.colour', message: 'is not allowed here' }));
  });

  it('does not coerce types: "true" is not a boolean', async () => {
    const body = expectProblem(await create({ input: { ...scenario(), isIdentityWidgetScenario: 'true' } }), 400);
    expect(body.errors.map((e: any) => e.field)).toContain('body.input.isIdentityWidgetScenario');
  });

  it('refuses an unknown scenario type and an unknown operator', async () => {
    let body = expectProblem(await create({ input: scenario({ type: 'Magic' }) }), 400);
    expect(body.errors.map((e: any) => e.field)).toContain('body.input.type');
    body = expectProblem(await create({
      input: scenario({ queryConfigurations: [{ id: 'q', query: { type: 'IDInformation', attribute: 'reviewAnswer', value: 1, operator: '$like' } }] }),
    }), 400);
    expect(body.errors.map((e: any) => e.field)).toContain('body.input.queryConfigurations.0.query.operator');
  });

  it('answers a value outside a fixed list with one error listing the allowed values', async () => {
    const query = { type: 'IDInformation', requestId: 1, attribute: 'reviewAnswer', value: 1, operator: '$eq' };
    const cases: [Record<string, unknown>, string, string][] = [
      [{ type: 'Magic' }, '/input/type', 'must be one of ChallengeQuery, OnChainZKP, OffChainZKP'],
      [
        { queryConfigurations: [{ id: 'q', query: { ...query, operator: '$like' } }] },
        '/input/queryConfigurations/0/query/operator',
        'must be one of $noop, $eq, $ne, $lt, $lte, $gt, $gte, $in, $nin, $exists, $between, $nonbetween, $sd',
      ],
      [
        { type: 'OffChainZKP', queryConfigurations: [{ id: 'q', query: { ...query, circuitId: 'groth16' } }] },
        '/input/queryConfigurations/0/query/circuitId',
        'must be one of credentialAtomicQuerySigV2, credentialAtomicQueryMTPV2, credentialAtomicQueryV3, linkedMultiQuery',
      ],
    ];
    for (const [overrides, pointer, message] of cases) {
      const body = expectProblem(await create({ input: scenario(overrides) }), 400);
      expect(body.errors).toEqual([{ field: `body${pointer.replace(/\//g, '.')}`, pointer, message }]);
    }
  });

  it('refuses a value that does not fit its operator, at creation, naming the value', async () => {
    const bad = [
      { type: 'IDInformation', attribute: 'personalData.age', value: [1, 2], operator: '$lt' },
      { type: 'IDInformation', attribute: 'personalData.citizenship', value: 'FRA', operator: '$in' },
      { type: 'IDInformation', attribute: 'personalData.age', value: [1, 2, 3], operator: '$between' },
    ];
    for (const query of bad) {
      const body = expectProblem(await create({ input: scenario({ queryConfigurations: [{ id: 'q', query }] }) }), 400);
      expect(body.errors.map((e: any) => e.field)).toContain('body.input.queryConfigurations.0.query.value');
    }
  });

  it('refuses two query configurations with one id', async () => {
    const q = { type: 'IDInformation', operator: '$noop' };
    const res = await create({ input: scenario({ queryConfigurations: [{ id: 'q', query: q }, { id: 'q', query: q }] }) });
    const body = expectProblem(res, 400);
    expect(body.errors.map((e: any) => e.field)).toContain('body.input.queryConfigurations.1.id');
  });

  it('answers 415 for a body that is not JSON, 400 for broken JSON', async () => {
    expectProblem(await app.inject({
      method: 'POST', url: '/compliance/scenarios', headers: { ...auth, 'content-type': 'text/plain' }, payload: 'hello',
    }), 415);
    expectProblem(await app.inject({
      method: 'POST', url: '/compliance/scenarios', headers: { ...auth, 'content-type': 'application/merge-patch+json' }, payload: '{}',
    }), 415);
    const large = await app.inject({
      method: 'POST', url: '/compliance/scenarios', headers: { ...auth, 'content-type': 'application/merge-patch+json' }, payload: `{"a":"${'x'.repeat(2 * 1024 * 1024)}"}`,
    });
    expect(expectProblem(large, 415).code).toBe('SCS_UNSUPPORTED_MEDIA_TYPE');
    expectProblem(await app.inject({
      method: 'POST', url: '/compliance/scenarios', headers: { ...auth, 'content-type': 'application/json' }, payload: '{"input":',
    }), 400);
  });

  it('answers 400 for a prototype-poisoning body', async () => {
    const res = await app.inject({
      method: 'POST', url: '/compliance/scenarios', headers: { ...auth, 'content-type': 'application/json' },
      payload: `{"input": ${JSON.stringify(scenario())}, "__proto__": {"x": 1}}`,
    });
    expectProblem(res, 400);
  });
});

describe('BODY_LIMIT', () => {
  it('answers 413 over the limit and stores nothing', async () => {
    const small = await makeApp({ BODY_LIMIT: '2048' });
    try {
      const input = scenario({ description: 'x'.repeat(3000) });
      const res = await small.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'big', input } });
      expectProblem(res, 413);
      expect((await small.inject({ method: 'GET', url: '/compliance/scenarios/big', headers: auth })).statusCode).toBe(404);
    } finally {
      await small.close();
    }
  });
});

describe('GET and DELETE', () => {
  it('reads a scenario with its ETag, 404 problem for an unknown id', async () => {
    const created = await create({ id: 'r1', input: scenario() });
    const res = await get('r1');
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe(created.headers.etag);
    expect(res.json()).toEqual(created.json());
    const body = expectProblem(await get('nope'), 404);
    expect(body.code).toBe('SCS_SCENARIO_NOT_FOUND');
  });

  it('lists in creation order with a cursor, nextCursor null on the last page', async () => {
    for (const id of ['c', 'a', 'b', 'e', 'd']) await create({ id, input: scenario() });
    const seen: string[] = [];
    let cursor: string | null | undefined;
    let pages = 0;
    do {
      const url = `/compliance/scenarios?limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await app.inject({ method: 'GET', url, headers: auth });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      const listed = body.items.length; // a page of at most `limit` scenarios
      expect(listed).toBeLessThanOrEqual(2);
      seen.push(...body.items.map((i: any) => i.id));
      cursor = body.nextCursor;
      pages++;
    } while (cursor);
    expect(seen).toEqual(['c', 'a', 'b', 'e', 'd']);
    expect(pages).toBe(3);
  });

  it('refuses a bad limit or cursor naming the query parameter', async () => {
    for (const [q, field] of [['limit=0', 'querystring.limit'], ['limit=101', 'querystring.limit'], ['limit=x', 'querystring.limit'], ['cursor=zzz', 'querystring.cursor']]) {
      const body = expectProblem(await app.inject({ method: 'GET', url: `/compliance/scenarios?${q}`, headers: auth }), 400);
      expect(body.errors.map((e: any) => e.field)).toContain(field);
    }
  });

  it('deletes: 204, then 404 on read, delete and patch', async () => {
    await create({ id: 'gone', input: scenario() });
    const res = await app.inject({ method: 'DELETE', url: '/compliance/scenarios/gone', headers: auth });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expectProblem(await get('gone'), 404);
    expectProblem(await app.inject({ method: 'DELETE', url: '/compliance/scenarios/gone', headers: auth }), 404);
    expectProblem(await patch('gone', { input: { name: 'x' } }), 404);
  });

  it('refuses a DELETE whose JSON body could not be stored, and deletes nothing', async () => {
    await create({ id: 'kept', input: scenario() });
    for (const payload of ['{"n":1e400}', '{"n":"\\u0000"}']) {
      const res = await app.inject({ method: 'DELETE', url: '/compliance/scenarios/kept', headers: { ...auth, 'content-type': 'application/json' }, payload });
      expect(expectProblem(res, 400).code).toBe('SCS_VALIDATION');
    }
    expect((await get('kept')).statusCode).toBe(200);
  });

  it('gives a recreated scenario a new ETag', async () => {
    const first = await create({ id: 'again', input: scenario() });
    await app.inject({ method: 'DELETE', url: '/compliance/scenarios/again', headers: auth });
    const second = await create({ id: 'again', input: scenario() });
    expect(second.headers.etag).not.toBe(first.headers.etag);
  });

  it('answers 404 problem+json for an unknown route', async () => {
    expectProblem(await app.inject({ method: 'GET', url: '/nowhere', headers: auth }), 404);
    for (const [method, url] of [['PUT', '/compliance/scenarios/d1'], ['POST', '/nope']] as const) {
      const res = await app.inject({ method, url, headers: { ...auth, 'content-type': 'application/merge-patch+json' }, payload: '{}' });
      expect(expectProblem(res, 404).code).toBe('SCS_ROUTE_NOT_FOUND');
    }
  });
});

describe('PATCH /compliance/scenarios/{scenarioId}', () => {
  beforeEach(async () => {
    await create({ id: 's', input: scenario({ message: 'hello', vcsIncluded: ['IDInformation'], isIdentityWidgetScenario: true }) });
  });

  it('merges: absent fields unchanged, the response is exactly { input } with a new ETag', async () => {
    const before = await get('s');
    const res = await patch('s', { input: { name: 'Renamed' } });
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json())).toEqual(['input']);
    expect(res.json().input).toEqual({ ...before.json().input, name: 'Renamed' });
    expect(res.headers.etag).toMatch(/^"\d+\.2"$/);
    const after = await get('s');
    expect(after.json().revision).toBe(2);
    expect(after.headers.etag).toBe(res.headers.etag);
    expect(after.json().createdAt).toBe(before.json().createdAt);
  });

  it('null clears a nullable field', async () => {
    const res = await patch('s', { input: { message: null, vcsIncluded: null, isIdentityWidgetScenario: null } });
    expect(res.statusCode).toBe(200);
    const input = res.json().input;
    expect(input).not.toHaveProperty('message');
    expect(input).not.toHaveProperty('vcsIncluded');
    expect(input).not.toHaveProperty('isIdentityWidgetScenario');
  });

  it('null on a required field is 400 naming it, and nothing is written', async () => {
    for (const field of ['name', 'type', 'queryConfigurations', 'smartContractDeployments']) {
      const body = expectProblem(await patch('s', { input: { [field]: null } }), 400);
      expect(body.errors.map((e: any) => e.field)).toContain(`body.input.${field}`);
    }
    expect((await get('s')).json().revision).toBe(1);
  });

  it('replaces arrays whole', async () => {
    const queryConfigurations = [{ id: 'only', query: { type: 'IDInformation', operator: '$noop' } }];
    const res = await patch('s', { input: { queryConfigurations } });
    expect(res.json().input.queryConfigurations).toEqual(queryConfigurations);
  });

  it('accepts application/merge-patch+json', async () => {
    const res = await patch('s', { input: { name: 'Merge' } }, { 'content-type': 'application/merge-patch+json' });
    expect(res.statusCode).toBe(200);
    expect(res.json().input.name).toBe('Merge');
  });

  it('refuses a patch whose result breaks the rules, with the field, and writes nothing', async () => {
    const res = await patch('s', { input: { queryConfigurations: [{ id: 'q', query: { type: 'IDInformation', attribute: 'reviewAnswer', operator: '$in', value: 5 } }] } });
    const body = expectProblem(res, 400);
    expect(body.errors.map((e: any) => e.field)).toContain('body.input.queryConfigurations.0.query.value');
    expect((await get('s')).json().revision).toBe(1);
  });

  it('refuses unknown fields and wrong types in the patch', async () => {
    expectProblem(await patch('s', { input: { nmae: 'typo' } }), 400);
    expectProblem(await patch('s', { input: { name: 5 } }), 400);
    expectProblem(await patch('s', { name: 'no input wrapper' }), 400);
  });

  it('answers a bad value in a nullable field with one error naming it and what it must be, no "must be null"', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ message: 5 }, '/input/message', 'must be string'],
      [{ isIdentityWidgetScenario: 'yes' }, '/input/isIdentityWidgetScenario', 'must be boolean'],
      [{ vcsIncluded: 'IDInformation' }, '/input/vcsIncluded', 'must be array'],
      [{ projectId: '' }, '/input/projectId', 'must NOT have fewer than 1 characters'],
      [{ type: 'Magic' }, '/input/type', 'must be one of ChallengeQuery, OnChainZKP, OffChainZKP'],
      [
        { queryConfigurations: [{ id: 'q', query: { type: 'IDInformation', operator: '$like' } }] },
        '/input/queryConfigurations/0/query/operator',
        'must be one of $noop, $eq, $ne, $lt, $lte, $gt, $gte, $in, $nin, $exists, $between, $nonbetween, $sd',
      ],
      [{ smartContractDeployments: [{ id: 'd', chain: 1 }] }, '/input/smartContractDeployments/0/chain', 'must be string'],
    ];
    for (const [input, pointer, message] of cases) {
      const body = expectProblem(await patch('s', { input }), 400);
      expect(body.errors, JSON.stringify(input)).toEqual([{ field: `body${pointer.replace(/\//g, '.')}`, pointer, message }]);
    }
    expect((await get('s')).json().revision).toBe(1);
  });

  it('If-Match: current ETag wins, a stale one is 412 and writes nothing', async () => {
    const etag = (await get('s')).headers.etag as string;
    const ok = await patch('s', { input: { name: 'First' } }, { 'if-match': etag });
    expect(ok.statusCode).toBe(200);
    const stale = await patch('s', { input: { name: 'Second' } }, { 'if-match': etag });
    expectProblem(stale, 412);
    expect((await get('s')).json().input.name).toBe('First');
    expect((await patch('s', { input: { name: 'Any' } }, { 'if-match': '*' })).statusCode).toBe(200);
    expectProblem(await patch('s', { input: { name: 'Weak' } }, { 'if-match': `W/${ok.headers.etag}` }), 412);
  });

  it('says in a 412 what was sent, the current ETag, and how to send it: quoted, without W/', async () => {
    const current = (await get('s')).headers.etag as string;
    expect(current).toMatch(/^"\d+\.\d+"$/);
    const unquoted = current.slice(1, -1);
    for (const sent of [`W/${current}`, unquoted, '"1.999"']) {
      const body = expectProblem(await patch('s', { input: { name: 'Never' } }, { 'if-match': sent }), 412);
      expect(body.code).toBe('SCS_PRECONDITION_FAILED');
      expect(body.detail, sent).toBe(
        `If-Match ${sent} does not match the current ETag ${current} of the scenario; send If-Match: ${current} as the ETag ` +
        'header gives it (quotes included, no W/ prefix: If-Match compares strong tags)',
      );
    }
    expect((await patch('s', { input: { name: 'Quoted' } }, { 'if-match': current })).statusCode).toBe(200);
  });

  it('answers 415 for other content types', async () => {
    expectProblem(await patch('s', 'name=x', { 'content-type': 'application/x-www-form-urlencoded' }), 415);
  });
});

describe('numbers JSON cannot carry exactly', () => {
  const body = (value: string) =>
    '{"id":"n","input":{"name":"N","description":"d","type":"ChallengeQuery","smartContractDeployments":[],"queryConfigurations":[' +
    `{"id":"q","query":{"type":"IDInformation","requestId":1,"attribute":"personalData.age","operator":"$gte","value":${value}}}]}}`;
  const post = (text: string) => app.inject({ method: 'POST', url: '/compliance/scenarios', headers: { ...auth, 'content-type': 'application/json' }, payload: text });

  it('refuses 2^64, 1e-400, -0, 1e400 and a 17-digit integer with a 400 naming the field, and stores nothing', async () => {
    for (const value of ['18446744073709551616', '1e-400', '-0', '-0.0', '1e400', '12345678901234567', '0.10000000000000000001']) {
      const res = await post(body(value));
      const problem = expectProblem(res, 400);
      expect(problem.errors, value).toEqual([expect.objectContaining({ field: 'body.input.queryConfigurations.0.query.value', pointer: '/input/queryConfigurations/0/query/value' })]);
      expect((await get('n')).statusCode, value).toBe(404);
    }
  });

  it('keeps numbers a double holds as written: 18, 0.1, 1.50, 1e2, -5, 9007199254740991', async () => {
    for (const [i, value] of ['18', '0.1', '1.50', '1e2', '-5', '9007199254740991'].entries()) {
      const res = await post(body(value).replace('"id":"n"', `"id":"n${i}"`));
      expect(res.statusCode, `${value}: ${res.body}`).toBe(201);
      expect((await get(`n${i}`)).json().input.queryConfigurations[0].query.value).toBe(Number(value));
    }
  });

  it('refuses such a number in a PATCH too (JSON and merge-patch), leaving the scenario as it was', async () => {
    expect((await post(body('18'))).statusCode).toBe(201);
    for (const type of ['application/json', 'application/merge-patch+json']) {
      const res = await patch('n', '{"input":{"queryConfigurations":[{"id":"q","query":{"type":"IDInformation","requestId":1,"attribute":"personalData.age","operator":"$gte","value":18446744073709551616}}]}}', { 'content-type': type });
      expect(expectProblem(res, 400).errors[0].field).toBe('body.input.queryConfigurations.0.query.value');
    }
    const after = (await get('n')).json();
    expect(after.revision).toBe(1);
    expect(after.input.queryConfigurations[0].query.value).toBe(18);
  });
});

describe('requestId of OnChainZKP rules: any uint256, as a JSON integer or a decimal string', () => {
  const TYPE_ONE = '1766847064778387718112045955079886503624711098445418933835811865445692516';
  const onChain = (requestId: unknown, type = 'OnChainZKP') => scenario({
    type,
    queryConfigurations: [{ id: 'q', query: { type: 'KYCAgeCredential', requestId, attribute: 'birthday', operator: '$lt', value: 20020101 } }],
  });

  it('accepts a 64-bit id, a type-1 256-bit id and 2^256-1 as strings, and 2^53-1 as a number; echoes them unchanged', async () => {
    for (const [i, rid] of [String(2n ** 63n + 7n), TYPE_ONE, String(2n ** 256n - 1n), Number.MAX_SAFE_INTEGER].entries()) {
      const res = await create({ id: `big-${i}`, input: onChain(rid) });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().input.queryConfigurations[0].query.requestId).toBe(rid);
    }
  });

  it('refuses 2^256, a number above 2^53-1, and non-decimal strings, naming the field', async () => {
    for (const rid of [String(2n ** 256n), 2 ** 53 + 2, '0x10', '007', '-1', '']) {
      const body = expectProblem(await create({ input: onChain(rid) }), 400);
      expect(body.errors.map((e: { pointer: string }) => e.pointer), JSON.stringify(rid)).toContain('/input/queryConfigurations/0/query/requestId');
    }
  });

  it('keeps the old limit in ChallengeQuery scenarios', async () => {
    const body = expectProblem(await create({ input: onChain(TYPE_ONE, 'ChallengeQuery') }), 400);
    expect(body.errors).toEqual([expect.objectContaining({
      pointer: '/input/queryConfigurations/0/query/requestId',
      message: expect.stringMatching(/integer from 0 to 4294967295 in ChallengeQuery/),
    })]);
  });

  it('treats 7 and "7" as the same request (duplicate)', async () => {
    const input = scenario({
      type: 'OnChainZKP',
      queryConfigurations: [
        { id: 'a', query: { type: 'T', requestId: 7, operator: '$noop' } },
        { id: 'b', query: { type: 'T', requestId: '7', operator: '$noop' } },
      ],
    });
    const body = expectProblem(await create({ input }), 400);
    expect(body.errors[0].message).toMatch(/duplicate requestId 7/);
  });
});

describe('rules checked against the credential types the service knows', () => {
  const rule = (query: Record<string, unknown>) => scenario({ queryConfigurations: [{ id: 'q', query: { requestId: 1, operator: '$eq', value: 1, ...query } }] });
  const only = (res: Parameters<typeof expectProblem>[0]) => {
    const body = expectProblem(res, 400);
    expect(body.code).toBe('SCS_VALIDATION');
    expect(body.errors).toHaveLength(1);
    return body.errors[0];
  };

  it('refuses a type near a held one, naming the field and the nearest type', async () => {
    const e = only(await create({ id: 's', input: rule({ type: 'IDInfo', attribute: 'personalData.age' }) }));
    expect(e).toMatchObject({ field: 'body.input.queryConfigurations.0.query.type', pointer: '/input/queryConfigurations/0/query/type' });
    expect(e.message).toMatch(/IDInfo is not a credential type the service knows; did you mean IDInformation\?/);
    expect((await get('s')).statusCode).toBe(404);
  });

  it('refuses an unknown attribute of a held type with the nearest known name, nested paths included', async () => {
    const cases: Array<[string, RegExp]> = [
      ['personalData.agee', /did you mean personalData\.age\?/],
      ['reviewAnswr', /did you mean reviewAnswer\?/],
      ['personalData.age.years', /personalData\.age is a plain value in IDInformation/],
    ];
    for (const [attribute, message] of cases) {
      const e = only(await create({ input: rule({ type: 'IDInformation', attribute }) }));
      expect(e.field).toBe('body.input.queryConfigurations.0.query.attribute');
      expect(e.message).toMatch(message);
    }
  });

  it('accepts known-good rules and types whose context the service does not hold', async () => {
    expect((await create({ id: 'good', input: scenario() })).statusCode).toBe(201);
    expect((await create({ id: 'por', input: rule({ type: 'ProofOfResidence', attribute: 'address.country' }) })).statusCode).toBe(201);
  });

  it('refuses the same on PATCH, and writes nothing', async () => {
    expect((await create({ id: 's', input: scenario() })).statusCode).toBe(201);
    const e = only(await patch('s', { input: { queryConfigurations: [{ id: 'q', query: { type: 'IDInformation', attribute: 'personalData.agee', operator: '$gte', value: 18 } }] } }));
    expect(e.field).toBe('body.input.queryConfigurations.0.query.attribute');
    expect(e.message).toMatch(/did you mean personalData\.age\?/);
    expect((await get('s')).json().revision).toBe(1);
  });

  it('knows the types of JSONLD_DOCUMENTS_FILE', async () => {
    const file = path.join(tempDir(), 'documents.json');
    fs.writeFileSync(file, JSON.stringify({
      'https://example.com/por.jsonld': { '@context': [{ ProofOfResidence: { '@id': 'urn:por', '@context': { country: { '@id': 'urn:c', '@type': 'xsd:string' } } } }] },
    }));
    const withFile = await makeApp({ JSONLD_DOCUMENTS_FILE: file });
    try {
      const post = (input: unknown) => withFile.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { input } });
      expect((await post(rule({ type: 'ProofOfResidence', attribute: 'country' }))).statusCode).toBe(201);
      const e = only(await post(rule({ type: 'ProofOfResidence', attribute: 'contry' })));
      expect(e.message).toMatch(/did you mean country\?/);
    } finally {
      await withFile.close();
    }
  });
});
