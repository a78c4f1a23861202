/** Scenario revisions on both stores: kept with every write, byte for byte, within the caller's projects, linked from executions. */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { contentDigest } from '../src/domain/canonical-json.js';
import { mergePatch } from '../src/domain/merge-patch.js';
import { openSqliteStore } from '../src/store/sqlite.js';
import { openPostgresStore } from '../src/store/postgres.js';
import type { Revise, Store } from '../src/store/types.js';
import { reviseWith } from '../src/services/revision-drafts.js';
import type { Scenario } from '../src/schemas/scenario.js';
import { ADDRESS, credential, makeApp, scenario, tempDir } from './helpers.js';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from './pg.js';

const A = 'token-of-project-a-0123456789';
const B = 'token-of-project-b-0123456789';
const OP = 'operator-token-0123456789xyz';
const schemas: string[] = [];
const pgSchema = () => {
  const name = freshSchema('revisions');
  schemas.push(name);
  return name;
};
afterAll(async () => {
  for (const name of schemas) await dropSchema(name);
});

const backends = [
  ['SQLite', () => ({}), true],
  ['PostgreSQL', () => ({ DATABASE_URL: PG_URL, DATABASE_SCHEMA: pgSchema() }), pgAvailable],
] as const;

describe.each(backends)('revisions over HTTP (%s)', (_name, storeEnv, available) => {
  let app: FastifyInstance;
  const as = (token: string) => ({ authorization: `Bearer ${token}` });
  const req = (token: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    app.inject({ method, url, headers: as(token), ...(payload && { payload }) });

  beforeAll(async () => {
    if (available) app = await makeApp({ API_TOKENS: `${A}:projA,${B}:projB,${OP}`, CREDENTIAL_VERIFICATION: 'off', ...storeEnv() });
  });
  afterAll(async () => {
    await app?.close();
  });

  it.skipIf(!available)('keeps every revision as its GET answered it, to the byte, with digest, author and patch', async () => {
    const id = 'kept-bytes';
    expect((await req(A, 'POST', '/compliance/scenarios', { id, input: scenario({ projectId: 'projA', message: 'ü ✓ "q"' }) })).statusCode).toBe(201);
    const live = [(await req(A, 'GET', `/compliance/scenarios/${id}`)).body];
    const patches = [
      { description: 'Second', message: null },
      { queryConfigurations: [scenario().queryConfigurations[0]] },
      { name: 'Third name' },
    ];
    for (const input of patches) {
      expect((await req(A, 'PATCH', `/compliance/scenarios/${id}`, { input })).statusCode).toBe(200);
      live.push((await req(A, 'GET', `/compliance/scenarios/${id}`)).body);
    }
    const list = await req(A, 'GET', `/compliance/scenarios/${id}/revisions`);
    expect(list.statusCode).toBe(200);
    const items = list.json().items;
    expect(items.map((r: { revision: number }) => r.revision)).toEqual([1, 2, 3, 4]);
    for (const [k, text] of live.entries()) {
      // The very text, not an equal document: both in the list and in the revision's own answer.
      expect(list.body).toContain(`"content":${text}`);
      const one = await req(A, 'GET', `/compliance/scenarios/${id}/revisions/${k + 1}`);
      expect(one.statusCode).toBe(200);
      expect(one.body.endsWith(`"content":${text}}`)).toBe(true);
      const { input } = JSON.parse(text);
      expect(one.json()).toMatchObject({ scenarioId: id, revision: k + 1, projectId: 'projA', digest: contentDigest(input) });
      expect(one.json().author).toMatch(/^token:[0-9a-f]{12}$/);
    }
    expect(items[0].patch).toBeNull();
    expect(items[1].patch).toEqual({ description: 'Second', message: null });
    // Each patch turns the revision before into its own.
    for (let k = 1; k < items.length; k++) expect(mergePatch(items[k - 1].content.input, items[k].patch)).toEqual(items[k].content.input);
  });

  it.skipIf(!available)('answers 404 to another project\'s token, on the list, a revision and a named incarnation', async () => {
    const id = 'tenancy';
    expect((await req(A, 'POST', '/compliance/scenarios', { id, input: scenario({ projectId: 'projA' }) })).statusCode).toBe(201);
    const own = await req(A, 'GET', `/compliance/scenarios/${id}/revisions/1`);
    expect(own.statusCode).toBe(200);
    const { incarnation } = own.json();
    for (const url of [`/compliance/scenarios/${id}/revisions`, `/compliance/scenarios/${id}/revisions/1`, `/compliance/scenarios/${id}/revisions/1?incarnation=${incarnation}`]) {
      const foreign = await req(B, 'GET', url);
      expect(foreign.statusCode, url).toBe(404);
      expect(foreign.body).not.toContain('projA');
      expect((await req(OP, 'GET', url)).statusCode, url).toBe(200);
      expect((await req(OP, 'GET', `${url}${url.includes('?') ? '&' : '?'}projectId=projB`)).statusCode, url).toBe(404);
    }
    expect((await req(A, 'GET', `/compliance/scenarios/${id}/revisions/2`)).json().code).toBe('SCS_REVISION_NOT_FOUND');
  });

  it.skipIf(!available)('links an execution to the revision it ran, which outlives a delete and a new scenario with its id', async () => {
    const id = 'linked';
    expect((await req(A, 'POST', '/compliance/scenarios', { id, input: scenario({ projectId: 'projA' }) })).statusCode).toBe(201);
    expect((await req(A, 'PATCH', `/compliance/scenarios/${id}`, { input: { name: 'Patched' } })).statusCode).toBe(200);
    const run = await req(A, 'POST', '/compliance/scenarios/execute', { address: ADDRESS, credentials: [credential()], scenarioId: id });
    const executionId = run.json()[0].executionId;
    const ran = (await req(A, 'GET', `/compliance/executions/${executionId}?embed=rules`)).json();
    expect(ran.scenarioRevision).toBe(2);
    expect(ran.rules).toEqual(scenario().queryConfigurations);
    expect(ran.links.revision).toMatch(new RegExp(`^/compliance/scenarios/${id}/revisions/2\\?incarnation=\\d+&projectId=projA$`));
    expect((await req(A, 'GET', `/compliance/executions/${executionId}`)).json().rules).toBeUndefined();

    expect((await req(A, 'DELETE', `/compliance/scenarios/${id}`)).statusCode).toBe(204);
    expect((await req(A, 'GET', `/compliance/scenarios/${id}/revisions`)).statusCode).toBe(404);
    const other = scenario({ projectId: 'projA', name: 'Again', queryConfigurations: [scenario().queryConfigurations[1]] });
    expect((await req(A, 'POST', '/compliance/scenarios', { id, input: other })).statusCode).toBe(201);
    // The list is the new scenario's; the execution's link still names what ran.
    expect((await req(A, 'GET', `/compliance/scenarios/${id}/revisions`)).json().items.map((r: { content: { input: Scenario } }) => r.content.input.name)).toEqual(['Again']);
    const linked = await req(A, 'GET', ran.links.revision);
    expect(linked.statusCode).toBe(200);
    expect(linked.json()).toMatchObject({ revision: 2, content: { input: { name: 'Patched' } } });
    expect((await req(A, 'GET', `/compliance/executions/${executionId}`)).json().links.revision).toBe(ran.links.revision);
    expect((await req(B, 'GET', ran.links.revision)).statusCode).toBe(404);
  });

  it.skipIf(!available)('pages with a cursor', async () => {
    const id = 'paged';
    expect((await req(A, 'POST', '/compliance/scenarios', { id, input: scenario({ projectId: 'projA' }) })).statusCode).toBe(201);
    for (let k = 0; k < 4; k++) await req(A, 'PATCH', `/compliance/scenarios/${id}`, { input: { name: `n${k}` } });
    const seen: number[] = [];
    let url = `/compliance/scenarios/${id}/revisions?limit=2`;
    for (;;) {
      const page = (await req(A, 'GET', url)).json();
      seen.push(...page.items.map((r: { revision: number }) => r.revision));
      if (page.nextCursor === null) break;
      url = `/compliance/scenarios/${id}/revisions?limit=2&cursor=${page.nextCursor}`;
    }
    expect(seen).toEqual([1, 2, 3, 4, 5]);
  });
});

const draft = (text: string): Revise => (row) => ({
  made: { revision: row.revision, projectId: row.input.projectId ?? null, content: text, digest: contentDigest(row.input), patch: null, author: 'me', createdAt: row.updatedAt },
});
const input = (over: Record<string, unknown> = {}) => scenario(over) as unknown as Scenario;
const storeSchema = freshSchema('revisions_store');

describe.each([
  ['SQLite', async () => openSqliteStore({ file: path.join(tempDir(), 's.db'), synchronous: 'NORMAL' }), true],
  ['PostgreSQL', async () => openPostgresStore({ url: PG_URL, schema: storeSchema }), pgAvailable],
] as const)('revision store (%s)', (_name, open, available) => {
  let store: Store;
  beforeAll(async () => {
    if (!available) return;
    store = await open();
    if (_name === 'PostgreSQL') schemas.push(storeSchema);
  });
  afterAll(async () => {
    await store?.close();
  });

  it.skipIf(!available)('writes the scenario and its revision in one transaction: a failing revision leaves neither', async () => {
    const boom: Revise = () => { throw new Error('revision refused'); };
    await expect(store.create('atomic', input(), '2026-01-01T00:00:00.000Z', boom)).rejects.toThrow('revision refused');
    expect(await store.find('atomic', undefined)).toEqual([]);
    const row = await store.create('atomic', input(), '2026-01-01T00:00:00.000Z', draft('{"v":1}'));
    await expect(store.update(row!.seq, input({ name: 'B' }), 1, '2026-01-02T00:00:00.000Z', boom)).rejects.toThrow('revision refused');
    expect((await store.find('atomic', undefined))[0]).toMatchObject({ revision: 1, input: { name: 'Adult KYC' } });
    expect((await store.listRevisions(row!.seq, 10)).items.map((r) => r.content)).toEqual(['{"v":1}']);
  });

  it.skipIf(!available)('keeps the revision a PATCH replaces where it was written before revisions, and never rewrites a kept one', async () => {
    const before = await store.create('older', input(), '2026-01-01T00:00:00.000Z');
    const source = { author: 'me', serialize: (r: { revision: number }) => `{"revision":${r.revision}}` };
    const second = await store.update(before!.seq, input({ name: 'B' }), 1, '2026-01-02T00:00:00.000Z', reviseWith(source, before!));
    await store.update(before!.seq, input({ name: 'C' }), 2, '2026-01-03T00:00:00.000Z', reviseWith({ ...source, author: 'you' }, second!));
    const { items } = await store.listRevisions(before!.seq, 10);
    expect(items.map((r) => [r.revision, r.author, r.patch, r.content, r.createdAt])).toEqual([
      [1, null, null, '{"revision":1}', '2026-01-01T00:00:00.000Z'],
      [2, 'me', '{"name":"B"}', '{"revision":2}', '2026-01-02T00:00:00.000Z'],
      [3, 'you', '{"name":"C"}', '{"revision":3}', '2026-01-03T00:00:00.000Z'],
    ]);
  });

  it.skipIf(!available)('finds the revision an execution ran in the incarnation live when it ran, the same content created again or not', async () => {
    const first = await store.create('again', input({ projectId: 'p' }), '2026-01-01T00:00:00.000Z', draft('{"first":1}'));
    await store.delete(first!.seq);
    const second = await store.create('again', input({ projectId: 'p' }), '2026-01-05T00:00:00.000Z', draft('{"second":1}'));
    const run = { scenarioId: 'again', projectId: 'p', scenarioRevision: 1, scenarioDigest: contentDigest(input({ projectId: 'p' })) };
    expect(await store.revisionRan({ ...run, createdAt: '2026-01-02T00:00:00.000Z' })).toMatchObject({ incarnation: first!.seq });
    expect(await store.revisionRan({ ...run, createdAt: '2026-01-06T00:00:00.000Z' })).toMatchObject({ incarnation: second!.seq });
    expect(await store.revisionRan({ ...run, scenarioDigest: 'f'.repeat(64), createdAt: '2026-01-06T00:00:00.000Z' })).toBeUndefined();
    expect(await store.revisionRan({ ...run, projectId: 'q', createdAt: '2026-01-06T00:00:00.000Z' })).toBeUndefined();
  });

  it.skipIf(!available)('keeps a deleted scenario\'s revisions while an execution ran them, and purges them with it', async () => {
    const ran = await store.create('purged', input({ projectId: 'p' }), '2026-01-01T00:00:00.000Z', draft('{"ran":1}'));
    const idle = await store.create('idle', input({ projectId: 'p' }), '2026-01-01T00:00:00.000Z', draft('{"idle":1}'));
    const live = await store.create('live', input({ projectId: 'p' }), '2026-01-01T00:00:00.000Z', draft('{"live":1}'));
    await store.recordExecution({
      executionId: '3f1c2d9e-7d0c-4a5e-9a55-0b5e2c1e0001', scenarioId: 'purged', scenarioRevision: 1, projectId: 'p', address: ADDRESS,
      state: 'completed', results: [], credentials: [], createdAt: '2026-02-01T00:00:00.000Z', updatedAt: '2026-02-01T00:00:00.000Z',
    });
    await store.delete(ran!.seq);
    await store.delete(idle!.seq);
    await store.purgeExecutions('2026-01-15T00:00:00.000Z');
    expect(await store.getRevision(ran!.seq, 1)).toBeDefined();
    expect(await store.getRevision(idle!.seq, 1)).toBeUndefined();
    expect(await store.revisionRan({ scenarioId: 'purged', projectId: 'p', scenarioRevision: 1, createdAt: '2026-02-01T00:00:00.000Z' }))
      .toMatchObject({ incarnation: ran!.seq, content: '{"ran":1}' });
    await store.purgeExecutions('2026-03-01T00:00:00.000Z');
    expect(await store.getRevision(ran!.seq, 1)).toBeUndefined();
    expect(await store.getRevision(live!.seq, 1)).toMatchObject({ content: '{"live":1}', author: 'me' });
  });
});
