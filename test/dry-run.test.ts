/**
 * POST /compliance/scenarios/dry-run: execute's results for the same input, each rule's trace, and nothing stored (no
 * execution, webhook row or idempotency entry), on both stores.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../src/config.js';
import { exampleOffChainScenario } from '../src/schemas/example-offchain.js';
import { DEMO_REVOKED_NONCE, createDemoIssuer } from '../src/trust/demo-issuer.js';
import { ADDRESS, DAY, TOKEN, auth, credential, demoCredential, makeApp, scenario } from './helpers.js';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from './pg.js';

const TOKEN_A = 'token-of-project-a-0123456789';
const SECRET = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
const TABLES = ['executions', 'webhook_deliveries', 'idempotency_keys'] as const;
const schema = freshSchema('dryrun');
const stores: Array<[string, Record<string, string>, boolean]> = [
  ['SQLite', {}, true],
  ['PostgreSQL', { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema }, pgAvailable],
];

/** Values of the credentials below that no trace may quote. */
const PERSONAL = ['Zenobia', 'Quarrington', 'NZL'];
const personal = (extra: Record<string, unknown> = {}) => ({ personalData: { firstName: 'Zenobia', lastName: 'Quarrington', citizenship: 'NZL', ...extra } });

async function revoked() {
  const issuer = await createDemoIssuer({ statusUrl: 'http://127.0.0.1:3000/demo-issuer/status' });
  return issuer.issue({
    subjectId: `did:pkh:eip155:1:${ADDRESS}`, claims: { reviewAnswer: 'GREEN', ...personal({ age: 30 }) }, nonce: DEMO_REVOKED_NONCE,
  });
}

/** Each with the statuses execute gives and the check that decides each rule not valid. */
const CASES: Array<[string, () => Promise<unknown[]>, string[], Array<string | undefined>]> = [
  ['a verified credential that passes', async () => [await demoCredential(personal())], ['valid', 'valid'], [undefined, undefined]],
  ['a credential that fails the age rule', async () => [await demoCredential(personal({ age: 12 }))], ['valid', 'not-valid'], [undefined, 'value']],
  ['a synthetic credential that does not verify', async () => [credential({}, personal())], ['not-valid', 'not-valid'], ['structure', 'structure']],
  ['a revoked credential', async () => [await revoked()], ['not-valid', 'not-valid'], ['revocation', 'revocation']],
  ['an expired credential', async () => [await demoCredential(personal(), { issuanceDate: new Date(Date.now() - 3 * DAY), expirationDate: new Date(Date.now() - DAY) })],
    ['not-valid', 'not-valid'], ['expiry', 'expiry']],
  ['no credential', async () => [], ['not-valid', 'not-valid'], ['presented', 'presented']],
];

/** Results without what differs between runs: the execution id, and the scenario id a draft runs under. */
const comparable = (results: Array<{ executionId: string }>) => {
  const text = JSON.stringify(results);
  const first = results[0];
  return JSON.parse((first ? text.replaceAll(first.executionId, '(id)') : text).replaceAll('"draft"', '"kyc"')) as unknown;
};

afterAll(async () => {
  if (pgAvailable) await dropSchema(schema);
});

describe.each(stores)('dry-run (%s)', (_name, storeEnv, available) => {
  let app: FastifyInstance & { config: Config };
  let client: pg.Client | undefined;

  const post = (payload: unknown, token = TOKEN, headers: Record<string, string> = {}) =>
    app.inject({ method: 'POST', url: '/compliance/scenarios/dry-run', headers: { authorization: `Bearer ${token}`, ...headers }, payload: payload as object });

  async function rows(): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const table of TABLES) {
      if (client) {
        counts[table] = Number((await client.query(`SELECT count(*) AS n FROM ${schema}.${table}`)).rows[0].n);
      } else {
        const { database } = app.config;
        if (database.kind !== 'sqlite') throw new Error('SQLite expected');
        const db = new Database(database.file, { readonly: true });
        counts[table] = (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
        db.close();
      }
    }
    return counts;
  }

  beforeAll(async () => {
    if (!available) return;
    app = await makeApp({
      ...storeEnv,
      API_TOKENS: `${TOKEN},${TOKEN_A}:projA`,
      WEBHOOK_URL: 'https://hooks.example/in',
      WEBHOOK_SECRET: SECRET,
      ZKP_VERIFIER_DID: 'did:polygonid:polygon:mumbai:1125GJqgw6YEsKFwj63GY87MMxPL9kwDKxPUiwMLNZ',
      PUBLIC_BASE_URL: 'https://compliance.example',
      DRY_RUNS_PER_MINUTE: '1000',
    });
    if (storeEnv.DATABASE_URL) {
      client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
    }
    const created = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'kyc', input: scenario() } });
    expect(created.statusCode, created.body).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await client?.end();
    await app?.close();
  });

  for (const [name, credentials, statuses, deciding] of CASES) {
    it.skipIf(!available)(`gives execute's results, each not-valid rule's deciding check and stores nothing: ${name}`, async () => {
      const sent = await credentials();
      const executed = await app.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers: auth, payload: { address: ADDRESS, credentials: sent, scenarioId: 'kyc' } });
      expect(executed.statusCode, executed.body).toBe(200);
      expect(executed.json().map((r: any) => r.result.status)).toEqual(statuses);

      const before = await rows();
      const stored = await post({ scenario: { id: 'kyc' }, address: ADDRESS, credentials: sent }, TOKEN, { 'idempotency-key': `dry-${name}` });
      const draft = await post({ scenario: scenario(), address: ADDRESS, credentials: sent });
      expect(await rows()).toEqual(before);

      for (const answer of [stored, draft]) {
        expect(answer.statusCode, answer.body).toBe(200);
        const { results, trace, verdict } = answer.json();
        expect(comparable(results)).toEqual(comparable(executed.json()));
        expect(verdict).toBe(statuses.includes('not-valid') ? 'failed' : 'passed');
        expect(trace.map((t: any) => t.ruleId)).toEqual(['q-kyc', 'q-age']);
        expect(trace.map((t: any) => t.decidingCheck?.check)).toEqual(deciding);
        for (const value of PERSONAL) expect(JSON.stringify(trace)).not.toContain(value);
        expect((await app.inject({ method: 'GET', url: `/compliance/executions/${results[0].executionId}`, headers: auth })).statusCode).toBe(404);
      }
      expect(stored.json().revision).toBe(1);
      expect(draft.json().revision).toBe(0);
      expect(draft.json().results[0].scenarioId).toBe('draft');
    });
  }

  it.skipIf(!available)('runs a kept revision as its content says, the live one without `revision`, and 404 for one not kept', async () => {
    const id = 'kyc-revised';
    expect((await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id, input: scenario() } })).statusCode).toBe(201);
    const raised = { input: { queryConfigurations: [{ id: 'q-age', query: { type: 'IDInformation', requestId: 2, attribute: 'personalData.age', value: 40, operator: '$gte' } }] } };
    expect((await app.inject({ method: 'PATCH', url: `/compliance/scenarios/${id}`, headers: auth, payload: raised })).statusCode).toBe(200);
    const sent = [await demoCredential(personal({ age: 30 }))];
    const statuses = async (reference: object) => {
      const answer = await post({ scenario: reference, address: ADDRESS, credentials: sent });
      expect(answer.statusCode, answer.body).toBe(200);
      return { revision: answer.json().revision, statuses: answer.json().results.map((r: any) => r.result.status) };
    };
    expect(await statuses({ id, revision: 1 })).toEqual({ revision: 1, statuses: ['valid', 'valid'] });
    expect(await statuses({ id, revision: 2 })).toEqual({ revision: 2, statuses: ['not-valid'] });
    expect(await statuses({ id })).toEqual({ revision: 2, statuses: ['not-valid'] });
    const missing = await post({ scenario: { id, revision: 3 }, address: ADDRESS, credentials: sent });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('SCS_REVISION_NOT_FOUND');
    expect((await post({ scenario: { id, revision: 1 }, address: ADDRESS, credentials: sent }, TOKEN_A)).statusCode).toBe(404);
  });

  it.skipIf(!available)('OffChainZKP: answers the authorization request execute would send, keeps no pending execution', async () => {
    const before = await rows();
    const answer = await post({ scenario: exampleOffChainScenario, address: ADDRESS, credentials: [] });
    expect(answer.statusCode, answer.body).toBe(200);
    const { results, trace, verdict } = answer.json();
    expect(verdict).toBe('pending');
    expect(results[0].result.status).toBe('pending');
    const request = results[0].result.authorizationRequest;
    expect(request.body.callbackUrl).toBe(`https://compliance.example/compliance/executions/${results[0].executionId}/zkp-response`);
    expect(trace[0]).toMatchObject({ status: 'pending', credentials: [], note: expect.stringMatching(/authorization request/) });
    expect(await rows()).toEqual(before);
    const wallet = await app.inject({
      method: 'POST', url: `/compliance/executions/${results[0].executionId}/zkp-response`, headers: { 'content-type': 'text/plain' }, payload: 'eyJ0b2tlbiI6MX0',
    });
    expect(wallet.statusCode).toBe(404);
  });
});

describe('dry-run refusals', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeApp({ API_TOKENS: `${TOKEN},${TOKEN_A}:projA`, DRY_RUNS_PER_MINUTE: '1000' });
    await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'kyc', input: scenario() } });
  });
  afterAll(async () => {
    await app.close();
  });
  const post = (payload: unknown, token = TOKEN) =>
    app.inject({ method: 'POST', url: '/compliance/scenarios/dry-run', headers: { authorization: `Bearer ${token}` }, payload: payload as object });
  const create = (input: unknown, token = TOKEN) => app.inject({ method: 'POST', url: '/compliance/scenarios', headers: { authorization: `Bearer ${token}` }, payload: { input } });

  it('validates a draft as create validates its input, naming the field under body.scenario', async () => {
    const drafts = [
      scenario({ name: undefined, queryConfigurations: [{ id: 'q', query: { type: 'IDInformation', requestId: 1, attribute: 'a', value: 1, operator: '$nope' } }] }),
      scenario({ queryConfigurations: [{ id: 'q', query: { type: 'IDInformation', requestId: 1, attribute: 'personalData.age', value: 'old', operator: '$gte' } }] }),
      scenario({ extra: true }),
    ];
    for (const draft of drafts) {
      const created = await create(draft);
      const tried = await post({ scenario: draft, address: ADDRESS, credentials: [] });
      expect(created.statusCode).toBe(400);
      expect(tried.statusCode).toBe(400);
      const fields = (answer: typeof tried) => answer.json().errors.map((e: any) => [e.field.replace('body.input', 'body.scenario'), e.message]);
      expect(fields(tried)).toEqual(fields(created));
      expect(tried.json().errors[0].field).toMatch(/^body\.scenario\./);
    }
  });

  it('tries a stored scenario sent back whole, its service-written multiRequest included (create refuses to set it)', async () => {
    const multiRequest = { multiRequestId: '7', requestIds: ['1'], groupIds: ['3'], transactions: ['tx-2'] };
    const draft = scenario({ smartContractDeployments: [{ id: 'd1', contractName: 'ScenarioVerifier', multiRequest }] });
    const tried = await post({ scenario: draft, address: ADDRESS, credentials: [] });
    expect(tried.statusCode, tried.body).toBe(200);
    const created = await create(draft);
    expect(created.statusCode).toBe(400);
    expect(created.json().errors[0].field).toBe('body.input.smartContractDeployments.0.multiRequest');
  });

  it('refuses a draft in a project the token does not hold (403) and a stored scenario of another project is not found (404)', async () => {
    await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'b-only', input: scenario({ projectId: 'projB' }) } });
    expect((await post({ scenario: scenario({ projectId: 'projB' }), address: ADDRESS, credentials: [] }, TOKEN_A)).statusCode).toBe(403);
    expect((await post({ scenario: scenario(), address: ADDRESS, credentials: [] }, TOKEN_A)).json().code).toBe('SCS_FORBIDDEN_PROJECT');
    expect((await post({ scenario: { id: 'b-only' }, address: ADDRESS, credentials: [] }, TOKEN_A)).statusCode).toBe(404);
    expect((await post({ scenario: scenario({ projectId: 'projA' }), address: ADDRESS, credentials: [] }, TOKEN_A)).statusCode).toBe(200);
  });

  it('has its own rate limit per token: 429 past DRY_RUNS_PER_MINUTE, execute unaffected', async () => {
    const fresh = await makeApp({ DRY_RUNS_PER_MINUTE: '2', RATE_LIMIT_MAX: '100' });
    try {
      const body = { scenario: scenario(), address: ADDRESS, credentials: [] };
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        statuses.push((await fresh.inject({ method: 'POST', url: '/compliance/scenarios/dry-run', headers: auth, payload: body })).statusCode);
      }
      expect(statuses).toEqual([200, 200, 429]);
      const limited = await fresh.inject({ method: 'POST', url: '/compliance/scenarios/dry-run', headers: auth, payload: body });
      expect(limited.json()).toMatchObject({ code: 'SCS_RATE_LIMITED' });
      expect(limited.headers['retry-after']).toMatch(/^\d+$/);
      expect((await fresh.inject({ method: 'GET', url: '/compliance/scenarios', headers: auth })).statusCode).toBe(200);
    } finally {
      await fresh.close();
    }
  });
});
