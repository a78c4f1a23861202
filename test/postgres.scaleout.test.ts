/**
 * Several stateless instances on one PostgreSQL database: two real server processes, driven at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADDRESS, credential, scenario } from './helpers.js';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from './pg.js';
import { build, call, killAll, start, type Server } from './server-process.js';

const TOKEN = 'scaleout-token-0123456789';
const REVIEWER = 'scaleout-reviewer-0123456789';
const schema = freshSchema('scaleout');
// Synthetic credentials: verification off (test/trust.routes.test.ts covers it).
// A generous connect timeout: on a loaded test machine a new connection can take seconds.
const env = {
  DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema, API_TOKENS: `${TOKEN},${REVIEWER}`, CREDENTIAL_VERIFICATION: 'off',
  DATABASE_CONNECT_TIMEOUT_MS: '10000', SCENARIO_APPROVAL_PROJECTS: 'governed',
};
let a: Server;
let b: Server;

beforeAll(async () => {
  if (!pgAvailable) return;
  build();
  // Both start at once: their migrations must serialise on the advisory lock.
  [a, b] = await Promise.all([start(env), start(env)]);
}, 120_000);

afterAll(async () => {
  killAll();
  if (pgAvailable) await dropSchema(schema);
});

describe.skipIf(!pgAvailable)('two instances on one PostgreSQL', () => {
  it('both migrated and are ready', async () => {
    expect((await fetch(`${a.url}/health/ready`)).status).toBe(200);
    expect((await fetch(`${b.url}/health/ready`)).status).toBe(200);
  });

  it('lets exactly one of many concurrent PATCHes with the same If-Match win, across both', async () => {
    const created = await call(a, TOKEN, 'POST', '/compliance/scenarios', { id: 'race', input: scenario() });
    expect(created.status).toBe(201);
    const etag = created.headers.get('etag')!;
    const replies = await Promise.all(Array.from({ length: 16 }, (_, i) =>
      call(i % 2 ? a : b, TOKEN, 'PATCH', '/compliance/scenarios/race', { input: { name: `writer ${i}` } }, { 'if-match': etag })));
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 412)).toHaveLength(15);
    const winner = replies.find((r) => r.status === 200)!.body.input.name;
    const read = await call(b, TOKEN, 'GET', '/compliance/scenarios/race');
    expect(read.body.revision).toBe(2);
    expect(read.body.input.name).toBe(winner);
  });

  it('lets every one of many concurrent PATCHes without If-Match across both succeed, each its own revision', async () => {
    await call(a, TOKEN, 'POST', '/compliance/scenarios', { id: 'merge', input: scenario() });
    const n = 40;
    const replies = await Promise.all(Array.from({ length: n }, (_, i) =>
      call(i % 2 ? a : b, TOKEN, 'PATCH', '/compliance/scenarios/merge', { input: { description: `d${i}` } })));
    // The two instances' compare-and-set retries back off at random, so neither gives up with 409.
    expect(replies.map((r) => r.status)).toEqual(Array.from({ length: n }, () => 200));
    const read = await call(a, TOKEN, 'GET', '/compliance/scenarios/merge');
    // Every acknowledged PATCH produced its own revision.
    expect(read.body.revision).toBe(1 + n);
  });

  it('lets every one of many concurrent PATCHes without If-Match through one instance succeed: they queue per scenario', async () => {
    await call(a, TOKEN, 'POST', '/compliance/scenarios', { id: 'queue', input: scenario() });
    const replies = await Promise.all(Array.from({ length: 24 }, (_, i) =>
      call(a, TOKEN, 'PATCH', '/compliance/scenarios/queue', { input: { description: `d${i}` } })));
    expect(replies.map((r) => r.status)).toEqual(Array.from({ length: 24 }, () => 200));
    // ETags are "seq.revision": each PATCH got its own revision, 2..25.
    const revisions = replies.map((r) => Number(/\.(\d+)"$/.exec(r.headers.get('etag') ?? '')?.[1] ?? NaN));
    expect([...revisions].sort((x, y) => x - y)).toEqual(Array.from({ length: 24 }, (_, i) => i + 2));
    const read = await call(b, TOKEN, 'GET', '/compliance/scenarios/queue');
    expect(read.body.revision).toBe(25);
    expect(read.body.input.description).toBe(`d${revisions.indexOf(25)}`);
  });

  it('gives every concurrent execute its own executionId, each recorded and readable from the other instance', async () => {
    await call(a, TOKEN, 'POST', '/compliance/scenarios', { id: 'exec', input: scenario() });
    const replies = await Promise.all(Array.from({ length: 40 }, (_, i) =>
      call(i % 2 ? a : b, TOKEN, 'POST', '/compliance/scenarios/execute', { address: ADDRESS, credentials: [credential()], scenarioId: 'exec' })));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    const ids = replies.map((r) => r.body[0].executionId);
    expect(new Set(ids).size).toBe(40);
    for (const [i, id] of ids.entries()) {
      const other = i % 2 ? b : a;
      expect((await call(other, TOKEN, 'GET', `/compliance/executions/${id}`)).status).toBe(200);
    }
  });

  it('sees a PATCH through one instance at once in an execute through the other', async () => {
    await call(a, TOKEN, 'POST', '/compliance/scenarios', { id: 'raw', input: scenario() });
    // Warm b's plan cache at revision 1.
    let results = await call(b, TOKEN, 'POST', '/compliance/scenarios/execute', { address: ADDRESS, credentials: [credential()], scenarioId: 'raw' });
    expect(results.body.map((r: any) => r.result.status)).toEqual(['valid', 'valid']);
    for (let age = 40; age < 45; age++) {
      const patched = await call(a, TOKEN, 'PATCH', '/compliance/scenarios/raw', {
        input: { queryConfigurations: [{ id: 'q-age', query: { type: 'IDInformation', attribute: 'personalData.age', value: age, operator: '$gte' } }] },
      });
      expect(patched.status).toBe(200);
      results = await call(b, TOKEN, 'POST', '/compliance/scenarios/execute', { address: ADDRESS, credentials: [credential()], scenarioId: 'raw' });
      expect(results.body).toHaveLength(1);
      expect(results.body[0].result.query.value).toBe(age);
      expect(results.body[0].result.status).toBe('not-valid');
    }
  });

  it('never executes a proposal on either instance before it is approved, and executes it on both after', async () => {
    await call(a, TOKEN, 'POST', '/compliance/scenarios', { id: 'governed', input: scenario({ projectId: 'governed' }) });
    const names = async () => Promise.all([a, b].map(async (server) => {
      const results = await call(server, TOKEN, 'POST', '/compliance/scenarios/execute', { address: ADDRESS, credentials: [credential()], scenarioId: 'governed' });
      return results.body[0].name;
    }));
    expect(await names()).toEqual(['Adult KYC', 'Adult KYC']);
    const proposed = await call(a, TOKEN, 'PATCH', '/compliance/scenarios/governed', { input: { name: 'Proposed' } });
    expect(proposed.status).toBe(202);
    expect(await names()).toEqual(['Adult KYC', 'Adult KYC']);
    expect((await call(b, TOKEN, 'POST', '/compliance/scenarios/governed/revisions/2/approve')).status).toBe(403);
    expect(await names()).toEqual(['Adult KYC', 'Adult KYC']);
    expect((await call(b, REVIEWER, 'POST', '/compliance/scenarios/governed/revisions/2/approve')).status).toBe(200);
    expect(await names()).toEqual(['Proposed', 'Proposed']);
  });

  it('keeps an acknowledged write through kill -9 of the instance that took it', async () => {
    await call(a, TOKEN, 'POST', '/compliance/scenarios', { id: 'durable', input: scenario() });
    const patched = await call(a, TOKEN, 'PATCH', '/compliance/scenarios/durable', { input: { name: 'Survives' } });
    expect(patched.status).toBe(200);
    const executed = await call(a, TOKEN, 'POST', '/compliance/scenarios/execute', { address: ADDRESS, credentials: [], scenarioId: 'durable' });
    expect(executed.status).toBe(200);
    a.proc.kill('SIGKILL');
    await a.exited;
    a = await start(env);
    expect((await call(a, TOKEN, 'GET', '/compliance/scenarios/durable')).body.input.name).toBe('Survives');
    expect((await call(a, TOKEN, 'GET', `/compliance/executions/${executed.body[0].executionId}`)).status).toBe(200);
  });
});
