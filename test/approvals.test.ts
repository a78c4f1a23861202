/** Four eyes on both stores: a PATCH in a project that requires approval is a proposal, live once another approves it. */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ADDRESS, credential, makeApp, scenario, tempDir } from './helpers.js';
import pg from 'pg';
import { JWT_ISSUER as ISSUER, localJwks, type LocalJwks } from './jwks.js';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from './pg.js';

const AUTHOR = 'author-token-of-project-a-0123';
const REVIEWER = 'reviewer-token-of-project-a-01';
const B = 'token-of-project-b-0123456789';
const schemas: string[] = [];
let jwks: LocalJwks;
const jwt = (sub: string, scope: string) => jwks.sign({ scope, projects: ['projA'] }, sub);

beforeAll(async () => {
  jwks = await localJwks();
});
afterAll(async () => {
  jwks.close();
  for (const name of schemas) await dropSchema(name);
});

const backends = [
  ['SQLite', () => ({ DATABASE_URL: `sqlite://${path.join(tempDir(), 'shared.db')}` }), true],
  ['PostgreSQL', () => {
    const schema = freshSchema('approvals');
    schemas.push(schema);
    return { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema };
  }, pgAvailable],
] as const;

describe.each(backends)('approval (%s)', (_name, storeEnv, available) => {
  // Two instances on one database, each with its own plan cache.
  let one: FastifyInstance;
  let two: FastifyInstance;
  let env: Record<string, string> = {};
  const req = (app: FastifyInstance, token: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload && { payload }) });
  const execute = async (app: FastifyInstance, id: string) => {
    const res = await req(app, REVIEWER, 'POST', '/compliance/scenarios/execute', { address: ADDRESS, credentials: [credential()], scenarioId: id });
    expect(res.statusCode).toBe(200);
    const results: { name: string; executionId: string }[] = res.json();
    const record = (await req(app, REVIEWER, 'GET', `/compliance/executions/${results[0]?.executionId}`)).json();
    return { name: results[0]?.name, revision: record.scenarioRevision };
  };
  const create = async (id: string, projectId: string, token = AUTHOR) =>
    expect((await req(one, token, 'POST', '/compliance/scenarios', { id, input: scenario({ projectId }) })).statusCode).toBe(201);
  const propose = async (id: string, input: object, token = AUTHOR, app = one) => {
    const res = await req(app, token, 'PATCH', `/compliance/scenarios/${id}`, { input });
    expect(res.statusCode, res.body).toBe(202);
    return res;
  };
  const decide = (app: FastifyInstance, token: string, id: string, n: number, verdict: 'approve' | 'reject') =>
    req(app, token, 'POST', `/compliance/scenarios/${id}/revisions/${n}/${verdict}`);

  beforeAll(async () => {
    if (!available) return;
    env = {
      ...storeEnv(), API_TOKENS: `${AUTHOR}:projA,${REVIEWER}:projA,${B}:projB`, SCENARIO_APPROVAL_PROJECTS: 'projA',
      CREDENTIAL_VERIFICATION: 'off', ...jwks.env,
    };
    one = await makeApp(env);
    two = await makeApp(env);
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
  });

  it.skipIf(!available)('answers a PATCH with 202, the proposed scenario and its revision; the live scenario is unchanged', async () => {
    await create('proposed', 'projA');
    const before = await req(one, AUTHOR, 'GET', '/compliance/scenarios/proposed');
    const res = await propose('proposed', { name: 'Proposed name' });
    expect(res.json().input.name).toBe('Proposed name');
    expect(res.headers.etag).toBeUndefined();
    const location = String(res.headers.location);
    expect(location).toMatch(/^\/compliance\/scenarios\/proposed\/revisions\/2\?incarnation=\d+&projectId=projA$/);
    expect((await req(one, AUTHOR, 'GET', '/compliance/scenarios/proposed')).body).toBe(before.body);
    const revision = (await req(two, AUTHOR, 'GET', location)).json();
    expect(revision).toMatchObject({ revision: 2, state: 'proposed', baseRevision: 1, decidedBy: null, decidedAt: null });
    expect(revision.author).toMatch(/^token:[0-9a-f]{12}$/);
    expect(revision.content.input.name).toBe('Proposed name');
    expect(revision.patch).toEqual({ name: 'Proposed name' });
    const list = (await req(one, AUTHOR, 'GET', '/compliance/scenarios/proposed/revisions')).json();
    expect(list.items.map((r: { state: string }) => r.state)).toEqual(['live', 'proposed']);
  });

  it.skipIf(!available)('refuses to delete a scenario of an approval project, so its id cannot come back with unreviewed rules', async () => {
    await create('kept', 'projA');
    const refused = await req(one, AUTHOR, 'DELETE', '/compliance/scenarios/kept');
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ code: 'SCS_APPROVAL_REQUIRED', status: 409 });
    const again = await req(one, AUTHOR, 'POST', '/compliance/scenarios', { id: 'kept', input: scenario({ projectId: 'projA', name: 'Unreviewed' }) });
    expect(again.statusCode).toBe(409);
    expect((await execute(two, 'kept')).name).toBe(scenario().name);
    await create('free', 'projB', B);
    expect((await req(one, B, 'DELETE', '/compliance/scenarios/free')).statusCode).toBe(204);
  });

  it.skipIf(!available || _name !== 'PostgreSQL')('numbers a direct PATCH after a proposal committed while it waited for the row (PostgreSQL)', async () => {
    await create('race', 'projB', B);
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      await client.query(`SET search_path TO ${env.DATABASE_SCHEMA}`);
      const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
      await client.query('BEGIN');
      const { rows: [row] } = await client.query<{ seq: string }>("SELECT seq FROM scenarios WHERE id = 'race' FOR UPDATE");
      const patched = req(one, B, 'PATCH', '/compliance/scenarios/race', { input: { name: 'Direct' } });
      // Until the PATCH waits for the lock this transaction holds.
      for (;;) {
        const { rows: [waiting] } = await client.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [pid]);
        if (Number(waiting?.n) > 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      // What a proposal by another instance commits meanwhile: revision 2, proposed, from revision 1.
      await client.query(`INSERT INTO scenario_revisions SELECT scenario_seq, 2, scenario_id, project_id, content, digest, patch, 'token:other',
        created_at, 'proposed', 1, NULL, NULL FROM scenario_revisions WHERE scenario_seq = $1 AND revision = 1`, [row?.seq]);
      await client.query('COMMIT');
      const res = await patched;
      expect(res.statusCode, res.body).toBe(200);
      const { rows } = await client.query<{ revision: number; state: string }>(
        'SELECT revision, state FROM scenario_revisions WHERE scenario_seq = $1 ORDER BY revision', [row?.seq]);
      expect(rows).toEqual([{ revision: 1, state: 'live' }, { revision: 2, state: 'proposed' }, { revision: 3, state: 'live' }]);
      expect((await req(one, B, 'GET', '/compliance/scenarios/race')).json().revision).toBe(3);
    } finally {
      await client.end();
    }
  });

  it.skipIf(!available)('never lets a static token approve its own proposal; another token of the project may', async () => {
    await create('static', 'projA');
    await propose('static', { name: 'By the author' });
    const self = await decide(two, AUTHOR, 'static', 2, 'approve');
    expect(self.statusCode).toBe(403);
    expect(self.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(self.json()).toMatchObject({ code: 'SCS_SELF_APPROVAL', status: 403 });
    expect((await req(one, AUTHOR, 'GET', '/compliance/scenarios/static')).json().revision).toBe(1);
    const approved = await decide(two, REVIEWER, 'static', 2, 'approve');
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json()).toMatchObject({ state: 'approved', revision: 2 });
    expect(approved.json().decidedBy).not.toBe(approved.json().author);
    const live = await req(one, AUTHOR, 'GET', '/compliance/scenarios/static');
    expect(live.json()).toMatchObject({ revision: 2, input: { name: 'By the author' } });
    expect(approved.json().content).toEqual(live.json());
    expect(live.headers.etag).toMatch(/\.2"$/);
  });

  it.skipIf(!available)('never lets a JWT approve its own proposal, whatever scopes it holds; another subject may', async () => {
    await create('jwt', 'projA');
    const author = await jwt('alice', 'scenarios:read scenarios:write scenarios:approve');
    const res = await propose('jwt', { name: 'By Alice' }, author);
    expect((await req(one, author, 'GET', String(res.headers.location))).json().author).toBe(`jwt:${ISSUER}:alice`);
    const self = await decide(one, await jwt('alice', 'scenarios:approve'), 'jwt', 2, 'approve');
    expect(self.statusCode).toBe(403);
    expect(self.json().code).toBe('SCS_SELF_APPROVAL');
    const unscoped = await decide(one, await jwt('bob', 'scenarios:read scenarios:write'), 'jwt', 2, 'approve');
    expect(unscoped.statusCode).toBe(403);
    expect(unscoped.json().code).toBe('SCS_FORBIDDEN');
    const approved = await decide(two, await jwt('bob', 'scenarios:approve'), 'jwt', 2, 'approve');
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json()).toMatchObject({ state: 'approved', author: `jwt:${ISSUER}:alice`, decidedBy: `jwt:${ISSUER}:bob` });
  });

  it.skipIf(!available)('refuses approval by a JWT without sub (all such tokens of an issuer share one subject); a named one approves', async () => {
    await create('unnamed', 'projA');
    const res = await propose('unnamed', { name: 'By Alice' }, await jwt('alice', 'scenarios:read scenarios:write'));
    const n = Number(/revisions\/(\d+)/.exec(String(res.headers.location))?.[1]);
    const unnamed = await decide(one, await jwt('', 'scenarios:approve'), 'unnamed', n, 'approve');
    expect(unnamed.statusCode).toBe(403);
    expect(unnamed.json().code).toBe('SCS_APPROVER_UNNAMED');
    expect((await req(one, AUTHOR, 'GET', '/compliance/scenarios/unnamed')).json().revision).toBe(1);
    // Two sub-less tokens would be one subject: had the author had none, no sub-less token could approve it either.
    const approved = await decide(two, await jwt('bob', 'scenarios:approve'), 'unnamed', n, 'approve');
    expect(approved.statusCode, approved.body).toBe(200);
  });

  it.skipIf(!available)('executes the live revision on both instances until the proposal is approved, then the proposal on both', async () => {
    await create('exec', 'projA');
    // Both instances have compiled and cached revision 1.
    expect(await execute(one, 'exec')).toEqual({ name: 'Adult KYC', revision: 1 });
    expect(await execute(two, 'exec')).toEqual({ name: 'Adult KYC', revision: 1 });
    await propose('exec', { name: 'Proposed' }, AUTHOR, two);
    expect(await execute(one, 'exec')).toEqual({ name: 'Adult KYC', revision: 1 });
    expect(await execute(two, 'exec')).toEqual({ name: 'Adult KYC', revision: 1 });
    expect((await decide(one, REVIEWER, 'exec', 2, 'approve')).statusCode).toBe(200);
    expect(await execute(two, 'exec')).toEqual({ name: 'Proposed', revision: 2 });
    expect(await execute(one, 'exec')).toEqual({ name: 'Proposed', revision: 2 });
  });

  it.skipIf(!available)('refuses a stale proposal with 409 until it is proposed again against the live revision', async () => {
    await create('stale', 'projA');
    await propose('stale', { name: 'First' });
    await propose('stale', { description: 'Second' });
    expect((await decide(one, REVIEWER, 'stale', 3, 'approve')).statusCode).toBe(200);
    const stale = await decide(two, REVIEWER, 'stale', 2, 'approve');
    expect(stale.statusCode).toBe(409);
    expect(stale.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(stale.json()).toMatchObject({ code: 'SCS_PROPOSAL_STALE' });
    expect(stale.json().detail).toContain('PATCH');
    const live = (await req(one, AUTHOR, 'GET', '/compliance/scenarios/stale')).json();
    expect(live).toMatchObject({ revision: 3, input: { name: 'Adult KYC', description: 'Second' } });
    // Rebased: the same change, proposed against the live revision.
    const again = await propose('stale', { name: 'First' });
    expect(String(again.headers.location)).toContain('/revisions/4?');
    expect((await decide(two, REVIEWER, 'stale', 4, 'approve')).statusCode).toBe(200);
    expect((await req(one, AUTHOR, 'GET', '/compliance/scenarios/stale')).json()).toMatchObject({
      revision: 4, input: { name: 'First', description: 'Second' },
    });
  });

  it.skipIf(!available)('makes one of two proposals from one revision live when both are approved at once on two instances', async () => {
    await create('race', 'projA');
    await propose('race', { name: 'Left' });
    await propose('race', { name: 'Right' }, AUTHOR, two);
    const answers = await Promise.all([decide(one, REVIEWER, 'race', 2, 'approve'), decide(two, REVIEWER, 'race', 3, 'approve')]);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 409]);
    const won = answers.find((a) => a.statusCode === 200)!.json();
    expect(answers.find((a) => a.statusCode === 409)!.json().code).toBe('SCS_PROPOSAL_STALE');
    expect((await req(one, AUTHOR, 'GET', '/compliance/scenarios/race')).json()).toMatchObject({ revision: won.revision, input: { name: won.content.input.name } });
    const states = (await req(two, AUTHOR, 'GET', '/compliance/scenarios/race/revisions')).json().items.map((r: { state: string }) => r.state);
    expect(states.sort()).toEqual(['approved', 'live', 'proposed']);
  });

  it.skipIf(!available)('closes a rejected proposal: never live, never approvable, said by whom', async () => {
    await create('rejected', 'projA');
    await propose('rejected', { name: 'Rejected' });
    const rejected = await decide(two, REVIEWER, 'rejected', 2, 'reject');
    expect(rejected.statusCode).toBe(200);
    expect(rejected.json()).toMatchObject({ state: 'rejected', decidedBy: expect.stringMatching(/^token:/) });
    expect(rejected.json().decidedAt).toEqual(expect.any(String));
    const late = await decide(one, REVIEWER, 'rejected', 2, 'approve');
    expect(late.statusCode).toBe(409);
    expect(late.json().code).toBe('SCS_REVISION_NOT_PROPOSED');
    expect((await decide(one, REVIEWER, 'rejected', 1, 'reject')).json().code).toBe('SCS_REVISION_NOT_PROPOSED');
    expect((await req(one, AUTHOR, 'GET', '/compliance/scenarios/rejected')).json()).toMatchObject({ revision: 1, input: { name: 'Adult KYC' } });
    expect((await execute(two, 'rejected')).name).toBe('Adult KYC');
  });

  it.skipIf(!available)('writes a PATCH at once in a project without the setting, after any proposal\'s number', async () => {
    await create('plain', 'projB', B);
    const res = await req(one, B, 'PATCH', '/compliance/scenarios/plain', { input: { name: 'Live at once' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toMatch(/\.2"$/);
    expect(res.json().input.name).toBe('Live at once');
    const list = (await req(two, B, 'GET', '/compliance/scenarios/plain/revisions')).json();
    expect(list.items.map((r: { state: string; baseRevision: null }) => [r.state, r.baseRevision])).toEqual([['live', null], ['live', null]]);
  });

  it.skipIf(!available)('numbers a write after the proposals kept, where the setting was turned off meanwhile', async () => {
    await create('toggled', 'projA');
    await propose('toggled', { name: 'Proposed before' });
    const off = await makeApp({ ...env, SCENARIO_APPROVAL_PROJECTS: '' });
    try {
      const res = await req(off, AUTHOR, 'PATCH', '/compliance/scenarios/toggled', { input: { description: 'Live at once' } });
      expect(res.statusCode).toBe(200);
      expect(res.headers.etag).toMatch(/\.3"$/);
    } finally {
      await off.close();
    }
    const list = (await req(two, AUTHOR, 'GET', '/compliance/scenarios/toggled/revisions')).json();
    expect(list.items.map((r: { revision: number; state: string }) => [r.revision, r.state])).toEqual([[1, 'live'], [2, 'proposed'], [3, 'live']]);
    expect((await decide(one, REVIEWER, 'toggled', 2, 'approve')).json().code).toBe('SCS_PROPOSAL_STALE');
  });

  it.skipIf(!available)('answers 404 to another project\'s token on approve and reject, as for an id never used', async () => {
    await create('foreign', 'projA');
    await propose('foreign', { name: 'Foreign' });
    for (const verdict of ['approve', 'reject'] as const) {
      const res = await decide(one, B, 'foreign', 2, verdict);
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('SCS_SCENARIO_NOT_FOUND');
    }
    expect((await req(one, REVIEWER, 'GET', '/compliance/scenarios/foreign/revisions/2')).json().state).toBe('proposed');
  });
});
