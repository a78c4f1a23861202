/** Shadow runs on both stores: a proposed revision evaluated beside every live execute, its differences counted. */
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ADDRESS, credential, demoCredential, makeApp, scenario, tempDir } from './helpers.js';
import { localJwks, type LocalJwks } from './jwks.js';
import { openSqliteStore } from '../src/store/sqlite.js';
import { openPostgresStore } from '../src/store/postgres.js';
import type { ShadowComparison } from '../src/store/types.js';
import { PlanCache } from '../src/domain/plan-cache.js';
import { ShadowRunner } from '../src/services/shadows.js';
import type { ShadowJob } from '../src/services/executions.js';
import { TYPES } from './engine/factories.js';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from './pg.js';
import { haveIden3Documents } from './shared-fixtures.js';

const AUTHOR = 'author-token-of-project-a-0123';
const REVIEWER = 'reviewer-token-of-project-a-01';
const B = 'token-of-project-b-0123456789';
/** In no credential the tests send but the ones whose rows are searched for it. */
const SECRET_NAME = 'Zenobia-Quillfeather-7731';
const schemas: string[] = [];
let jwks: LocalJwks;

beforeAll(async () => {
  jwks = await localJwks();
});
afterAll(async () => {
  jwks.close();
  for (const name of schemas) await dropSchema(name);
});

const backends = [
  ['SQLite', () => {
    const file = path.join(tempDir(), 'shared.db');
    return { env: { DATABASE_URL: `sqlite://${file}` }, file, schema: '' };
  }, true],
  ['PostgreSQL', () => {
    const schema = freshSchema('shadow');
    schemas.push(schema);
    return { env: { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema }, file: '', schema };
  }, pgAvailable],
] as const;

/** The q-age rule asks 40 and over where the live one asks 18: a holder of 30 flips, one of 50 does not. */
const STRICTER = {
  queryConfigurations: [
    { id: 'q-kyc', query: { type: 'IDInformation', requestId: 1, attribute: 'reviewAnswer', value: 'GREEN', operator: '$eq' } },
    { id: 'q-age', query: { type: 'IDInformation', requestId: 2, attribute: 'personalData.age', value: 40, operator: '$gte' } },
  ],
};

interface ShadowAnswer {
  state: string;
  compared: number;
  flipped: number;
  skipped: number;
  stoppedAt?: string;
  byRule: { ruleId: string; compared: number; differs: number; changes: { live: string | null; shadow: string | null; count: number }[] }[];
  flippedExecutions: string[];
  nextCursor: string | null;
}

describe.each(backends)('shadow runs (%s)', (name, made, available) => {
  // Two instances on one database, each with its own plan cache and shadow queue.
  let one: FastifyInstance;
  let two: FastifyInstance;
  /** Queues nothing: every comparison it is offered is skipped. */
  let none: FastifyInstance;
  /** Queues at most 4 KiB of execute bodies. */
  let small: FastifyInstance;
  /** Purges at its clock's word. */
  let timed: FastifyInstance;
  let clock = Date.now();
  let env: Record<string, string> = {};
  let where: ReturnType<typeof made>;
  const req = (app: FastifyInstance, token: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload && { payload }) });
  const shadow = (app: FastifyInstance, token: string, method: 'GET' | 'POST' | 'DELETE', id: string, n: number, query = '') =>
    req(app, token, method, `/compliance/scenarios/${id}/revisions/${n}/shadow${query}`);
  const create = async (id: string) =>
    expect((await req(one, AUTHOR, 'POST', '/compliance/scenarios', { id, input: scenario({ projectId: 'projA' }) })).statusCode).toBe(201);
  const propose = async (id: string, input: object) => expect((await req(one, AUTHOR, 'PATCH', `/compliance/scenarios/${id}`, { input })).statusCode).toBe(202);
  const execute = async (app: FastifyInstance, id: string, age: number, firstName = 'Alice') => {
    const res = await req(app, REVIEWER, 'POST', '/compliance/scenarios/execute', {
      address: ADDRESS, credentials: [credential({}, { personalData: { firstName, age } })], scenarioId: id,
    });
    expect(res.statusCode, res.body).toBe(200);
    return { body: res.body, executionId: (res.json() as { executionId: string }[])[0]?.executionId ?? '' };
  };
  /** Comparisons are written in batches after the answer: read until `count` are. */
  const compared = async (app: FastifyInstance, id: string, n: number, count: number): Promise<ShadowAnswer> => {
    for (let i = 0; i < 1000; i++) {
      const answer = (await shadow(app, AUTHOR, 'GET', id, n)).json() as ShadowAnswer;
      if (answer.compared + answer.skipped >= count) return answer;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`${count} comparisons of ${id} revision ${n} never written`);
  };
  /** Each query's rows, read straight from the database the apps share. */
  const select = async (queries: readonly [string, unknown[]][]): Promise<unknown[][]> => {
    if (name === 'SQLite') {
      const db = new Database(where.file, { readonly: true });
      try {
        return queries.map(([q, values]) => db.prepare(q).all(Object.fromEntries(values.map((v, k) => [k + 1, v]))));
      } finally {
        db.close();
      }
    }
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      await client.query(`SET search_path TO ${where.schema}`);
      return await Promise.all(queries.map(async ([q, values]) => (await client.query(q, values)).rows));
    } finally {
      await client.end();
    }
  };
  /** Every row of the shadow tables, as text. */
  const rows = async () => JSON.stringify(await select([['SELECT * FROM shadow_comparisons', []], ['SELECT * FROM shadow_runs', []]]));
  const marker = async (id: string) => {
    const [found] = await select([['SELECT shadow_revision FROM scenarios WHERE id = $1', [id]]]);
    return (found?.[0] as { shadow_revision: number | null } | undefined)?.shadow_revision;
  };

  beforeAll(async () => {
    if (!available) return;
    where = made();
    env = {
      ...where.env, API_TOKENS: `${AUTHOR}:projA,${REVIEWER}:projA,${B}:projB`, SCENARIO_APPROVAL_PROJECTS: 'projA',
      // Synthetic credentials: what is compared is the rules' statuses, not the verification.
      CREDENTIAL_VERIFICATION: 'off', ...jwks.env,
    };
    one = await makeApp(env);
    two = await makeApp(env);
    none = await makeApp({ ...env, SHADOW_QUEUE_LIMIT: '0' });
    small = await makeApp({ ...env, SHADOW_QUEUE_BYTES: '4096' });
    timed = await makeApp({ ...env, EXECUTION_RETENTION_DAYS: '1', EXECUTION_PURGE_INTERVAL_MS: '20' }, { now: () => clock });
  });
  afterAll(async () => {
    for (const app of [one, two, none, small, timed]) await app?.close();
  });

  it.skipIf(!available)('starts and stops a proposal\'s shadow; refuses a live revision, a second shadow, other projects and tokens without the scope', async () => {
    await create('lifecycle');
    await propose('lifecycle', STRICTER);
    await propose('lifecycle', { name: 'Another proposal' });
    const never = await shadow(one, AUTHOR, 'GET', 'lifecycle', 2);
    expect(never.statusCode).toBe(404);
    expect(never.json().code).toBe('SCS_SHADOW_NOT_FOUND');
    expect((await shadow(one, B, 'POST', 'lifecycle', 2)).json()).toMatchObject({ status: 404, code: 'SCS_SCENARIO_NOT_FOUND' });
    const reader = await jwks.sign({ scope: 'scenarios:read', projects: ['projA'] }, 'reader');
    expect((await shadow(one, reader, 'POST', 'lifecycle', 2)).json()).toMatchObject({ status: 403, code: 'SCS_FORBIDDEN' });
    expect((await shadow(one, AUTHOR, 'POST', 'lifecycle', 1)).json()).toMatchObject({ status: 409, code: 'SCS_REVISION_NOT_PROPOSED' });
    expect((await shadow(one, AUTHOR, 'POST', 'lifecycle', 9)).json()).toMatchObject({ status: 404, code: 'SCS_REVISION_NOT_FOUND' });

    const started = await shadow(one, AUTHOR, 'POST', 'lifecycle', 2);
    expect(started.statusCode, started.body).toBe(200);
    expect(started.json()).toMatchObject({
      scenarioId: 'lifecycle', revision: 2, state: 'active', compared: 0, flipped: 0, skipped: 0, byRule: [], flippedExecutions: [], nextCursor: null,
    });
    expect(started.json().startedBy).toMatch(/^token:[0-9a-f]{12}$/);
    expect(started.json().stoppedAt).toBeUndefined();
    expect(await marker('lifecycle')).toBe(2);
    const busy = await shadow(two, AUTHOR, 'POST', 'lifecycle', 3);
    expect(busy.json()).toMatchObject({ status: 409, code: 'SCS_SHADOW_BUSY' });
    expect(busy.json().detail).toMatch(/revision 2 in shadow/);
    expect((await shadow(two, reader, 'GET', 'lifecycle', 2)).json()).toMatchObject({ state: 'active' });
    expect((await shadow(two, B, 'GET', 'lifecycle', 2)).statusCode).toBe(404);
    expect((await shadow(two, reader, 'DELETE', 'lifecycle', 2)).statusCode).toBe(403);

    const stopped = await shadow(two, AUTHOR, 'DELETE', 'lifecycle', 2);
    expect(stopped.statusCode, stopped.body).toBe(200);
    expect(stopped.json()).toMatchObject({ state: 'stopped', startedAt: started.json().startedAt });
    expect(stopped.json().stoppedAt).toEqual(expect.any(String));
    expect(await marker('lifecycle')).toBeNull();
    expect((await shadow(one, AUTHOR, 'POST', 'lifecycle', 3)).json()).toMatchObject({ revision: 3, state: 'active' });
    expect((await shadow(one, AUTHOR, 'DELETE', 'lifecycle', 1)).json()).toMatchObject({ status: 404, code: 'SCS_SHADOW_NOT_FOUND' });
  });

  it.skipIf(!available || !haveIden3Documents())('refuses to shadow an OffChainZKP scenario, whose one proof answers the live queries only', async () => {
    const input = scenario({
      projectId: 'projA', type: 'OffChainZKP',
      queryConfigurations: [{ id: 'q', query: { type: 'KYCAgeCredential', requestId: 1, attribute: 'birthday', value: 20000101, operator: '$lt', context: 'https://raw.githubusercontent.com/iden3/claim-schema-vocab/main/schemas/json-ld/kyc-v3.json-ld' } }],
    });
    expect((await req(one, AUTHOR, 'POST', '/compliance/scenarios', { id: 'zkp', input })).statusCode).toBe(201);
    await propose('zkp', { name: 'Proposed' });
    const refused = await shadow(one, AUTHOR, 'POST', 'zkp', 2);
    expect(refused.json()).toMatchObject({ status: 409, code: 'SCS_SHADOW_UNSUPPORTED' });
    expect(refused.json().detail).toMatch(/one authorization request/);
    expect(await marker('zkp')).toBeNull();
  });

  it.skipIf(!available)('flips exactly the executions the stricter rule fails, counts by rule, pages them, and answers execute to the byte as without', async () => {
    await create('flips');
    await propose('flips', STRICTER);
    // Without a shadow first: the answer to compare with.
    const without = await execute(one, 'flips', 30);
    expect((await shadow(one, AUTHOR, 'POST', 'flips', 2)).statusCode).toBe(200);
    const flipping: string[] = [];
    for (let i = 0; i < 3; i++) {
      const run = await execute(one, 'flips', 30, SECRET_NAME);
      flipping.push(run.executionId);
      expect(run.body.replaceAll(run.executionId, 'ID')).toBe(without.body.replaceAll(without.executionId, 'ID'));
    }
    for (let i = 0; i < 2; i++) await execute(one, 'flips', 50);
    const answer = await compared(one, 'flips', 2, 5);
    expect(answer).toMatchObject({ compared: 5, flipped: 3, skipped: 0, state: 'active' });
    expect(answer.byRule).toEqual([
      { ruleId: 'q-age', compared: 5, differs: 3, changes: [{ live: 'valid', shadow: 'not-valid', count: 3 }] },
      { ruleId: 'q-kyc', compared: 5, differs: 0, changes: [] },
    ]);
    expect([...answer.flippedExecutions].sort()).toEqual([...flipping].sort());
    const metrics = (await one.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toContain('compliance_shadow_evaluations_total{outcome="flipped"} 3');
    expect(metrics).toContain('compliance_shadow_evaluations_total{outcome="compared"} 2');
    const first = (await shadow(two, AUTHOR, 'GET', 'flips', 2, '?limit=2')).json() as ShadowAnswer;
    expect(first.flippedExecutions).toEqual(flipping.slice(0, 2));
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = (await shadow(two, AUTHOR, 'GET', 'flips', 2, `?limit=2&cursor=${first.nextCursor}`)).json() as ShadowAnswer;
    expect(second).toMatchObject({ flippedExecutions: flipping.slice(2), nextCursor: null });

    const stored = await rows();
    expect(stored).toContain(flipping[0]);
    expect(stored).not.toContain(SECRET_NAME);
    expect(stored.toLowerCase()).not.toContain(ADDRESS.toLowerCase());
  });

  it.skipIf(!available)('compares on a second instance a shadow started on the first, seen at its next execute', async () => {
    await create('across');
    await propose('across', STRICTER);
    // The second instance has the live plan cached before the shadow starts.
    await execute(two, 'across', 30);
    expect((await shadow(one, AUTHOR, 'POST', 'across', 2)).statusCode).toBe(200);
    const run = await execute(two, 'across', 30);
    await execute(two, 'across', 50);
    const answer = await compared(one, 'across', 2, 2);
    expect(answer).toMatchObject({ compared: 2, flipped: 1, flippedExecutions: [run.executionId] });
    await execute(none, 'across', 30);
    expect(await compared(one, 'across', 2, 3)).toMatchObject({ compared: 2, skipped: 1 });
    expect((await none.inject({ method: 'GET', url: '/metrics' })).body).toContain('compliance_shadow_evaluations_total{outcome="skipped"} 1');
  });

  it.skipIf(!available)('skips the comparison of a body beyond SHADOW_QUEUE_BYTES and compares a smaller one', async () => {
    await create('bytes');
    await propose('bytes', STRICTER);
    expect((await shadow(one, AUTHOR, 'POST', 'bytes', 2)).statusCode).toBe(200);
    await execute(small, 'bytes', 30, 'x'.repeat(5000));
    expect(await compared(one, 'bytes', 2, 1)).toMatchObject({ compared: 0, skipped: 1 });
    const run = await execute(small, 'bytes', 30);
    expect(await compared(one, 'bytes', 2, 2)).toMatchObject({ compared: 1, flipped: 1, skipped: 1, flippedExecutions: [run.executionId] });
  });

  it.skipIf(!available)('stops the shadow when its proposal is approved or rejected, in the same transaction', async () => {
    await create('decided');
    await propose('decided', STRICTER);
    expect((await shadow(one, AUTHOR, 'POST', 'decided', 2)).statusCode).toBe(200);
    await execute(one, 'decided', 30);
    await compared(one, 'decided', 2, 1);
    const approved = await req(two, REVIEWER, 'POST', '/compliance/scenarios/decided/revisions/2/approve');
    expect(approved.statusCode, approved.body).toBe(200);
    expect(await marker('decided')).toBeNull();
    const after = (await shadow(one, AUTHOR, 'GET', 'decided', 2)).json() as ShadowAnswer;
    expect(after).toMatchObject({ state: 'stopped', compared: 1, flipped: 1 });
    expect(after.stoppedAt).toBe(approved.json().decidedAt);
    expect((await shadow(one, AUTHOR, 'POST', 'decided', 2)).json()).toMatchObject({ status: 409, code: 'SCS_REVISION_NOT_PROPOSED' });

    await propose('decided', { name: 'Rejected soon' });
    expect((await shadow(one, AUTHOR, 'POST', 'decided', 3)).statusCode).toBe(200);
    const rejected = await req(one, REVIEWER, 'POST', '/compliance/scenarios/decided/revisions/3/reject');
    expect(rejected.statusCode, rejected.body).toBe(200);
    expect(await marker('decided')).toBeNull();
    expect((await shadow(two, AUTHOR, 'GET', 'decided', 3)).json()).toMatchObject({ state: 'stopped', stoppedAt: rejected.json().decidedAt });
  });

  it.skipIf(!available)('writes what it compared when the app closes right after an execute', async () => {
    await create('closing');
    await propose('closing', STRICTER);
    expect((await shadow(one, AUTHOR, 'POST', 'closing', 2)).statusCode).toBe(200);
    const closing = await makeApp(env);
    const run = await execute(closing, 'closing', 30);
    await closing.close();
    expect((await shadow(one, AUTHOR, 'GET', 'closing', 2)).json()).toMatchObject({ compared: 1, flipped: 1, flippedExecutions: [run.executionId] });
  });

  // Last: it purges every execution the tests above made.
  it.skipIf(!available)('purges a comparison with its execution', async () => {
    await create('purged');
    await propose('purged', STRICTER);
    expect((await shadow(timed, AUTHOR, 'POST', 'purged', 2)).statusCode).toBe(200);
    await execute(timed, 'purged', 30);
    expect(await compared(timed, 'purged', 2, 1)).toMatchObject({ compared: 1, flipped: 1 });
    clock += 2 * 24 * 3600 * 1000;
    for (let i = 0; i < 1000 && (await rows()).includes('"execution_id"'); i++) await new Promise((r) => setTimeout(r, 20));
    expect(await rows()).not.toContain('"execution_id"');
    expect((await shadow(timed, AUTHOR, 'GET', 'purged', 2)).json()).toMatchObject({ state: 'active', compared: 0, flipped: 0, flippedExecutions: [] });
  });
});

describe.each([
  ['SQLite', async () => openSqliteStore({ file: path.join(tempDir(), 's.db'), synchronous: 'NORMAL' }), true],
  ['PostgreSQL', async () => {
    const schema = freshSchema('shadowstore');
    schemas.push(schema);
    return openPostgresStore({ url: PG_URL, schema });
  }, pgAvailable],
] as const)('shadow comparisons in the store (%s)', (_name, open, available) => {
  /** A scenario with revision 2 proposed: its incarnation. */
  const proposed = async (store: Awaited<ReturnType<typeof open>>, id: string) => {
    const created = await store.create(id, scenario() as never, '2026-01-01T00:00:00.000Z');
    await store.propose(created!, scenario({ name: 'Proposed' }) as never, '2026-01-01T00:00:01.000Z', () => ({
      made: { revision: 2, projectId: null, content: '{}', digest: 'd', patch: null, author: 'a', createdAt: '2026-01-01T00:00:01.000Z' },
    }));
    return created?.seq ?? 0;
  };
  it.skipIf(!available)('writes a batch of any size, folds rules in one revision only as differing, and counts skips', async () => {
    const store = await open();
    try {
      const seq = await proposed(store, 'batch');
      expect(await store.startShadow(seq, 2, 'token:abc', '2026-01-01T00:00:02.000Z')).toBe('started');
      // 70: two whole chunks of the SQLite store's multi-row insert and six rows more.
      const comparisons: ShadowComparison[] = Array.from({ length: 70 }, (_, i) => ({
        incarnation: seq, revision: 2, executionId: crypto.randomUUID(), createdAt: new Date(Date.UTC(2026, 0, 2, 0, 0, i)).toISOString(),
        flipped: i % 7 === 0,
        rules: [{ id: 'kept', live: 'valid', shadow: i % 7 === 0 ? 'not-valid' : 'valid' }, { id: 'gone', live: 'valid', shadow: null }],
      }));
      await store.recordComparisons(comparisons, [{ incarnation: seq, revision: 2, count: 3 }]);
      const run = await store.shadowRun(seq, 2, 100);
      expect(run).toMatchObject({ compared: 70, flipped: 10, skipped: 3, active: true, startedBy: 'token:abc' });
      expect(run?.byRule).toEqual([
        { ruleId: 'gone', compared: 70, differs: 70, changes: [{ live: 'valid', shadow: null, count: 70 }] },
        { ruleId: 'kept', compared: 70, differs: 10, changes: [{ live: 'valid', shadow: 'not-valid', count: 10 }] },
      ]);
      const flipped = comparisons.filter((c) => c.flipped).map((c) => c.executionId);
      expect(run?.flippedExecutions).toEqual(flipped);
      const first = await store.shadowRun(seq, 2, 6);
      expect(first?.flippedExecutions).toEqual(flipped.slice(0, 6));
      expect((await store.shadowRun(seq, 2, 6, first?.next))?.flippedExecutions).toEqual(flipped.slice(6));
      expect(await store.purgeExecutions('2026-01-02T00:00:35.000Z')).toBe(0);
      expect(await store.shadowRun(seq, 2, 1)).toMatchObject({ compared: 35, flipped: 5 });
    } finally {
      await store.close();
    }
  });

  it.skipIf(!available)('keeps counts equal to a recount of the kept comparisons after writes from two batches and after a purge', async () => {
    const store = await open();
    try {
      const seq = await proposed(store, 'recount');
      expect(await store.startShadow(seq, 2, null, '2026-01-01T00:00:02.000Z')).toBe('started');
      const statuses = ['valid', 'not-valid', 'error', null] as const;
      const comparisons: ShadowComparison[] = Array.from({ length: 90 }, (_, i) => ({
        incarnation: seq, revision: 2, executionId: crypto.randomUUID(), createdAt: new Date(Date.UTC(2026, 0, 2, 0, 0, i)).toISOString(),
        flipped: i % 5 === 0, undecided: i % 5 === 1,
        rules: [
          { id: 'a', live: 'valid', shadow: statuses[i % 4] ?? null },
          ...(i % 3 === 0 ? [{ id: 'b', live: statuses[i % 2] ?? null, shadow: null }] : []),
        ] as ShadowComparison['rules'],
      }));
      const byChange = (x: { live: string | null; shadow: string | null }, y: { live: string | null; shadow: string | null }) =>
        JSON.stringify([x.live, x.shadow]) < JSON.stringify([y.live, y.shadow]) ? -1 : 1;
      /** The store's counts, each rule's changes in one order. */
      const counts = async () => {
        const run = await store.shadowRun(seq, 2, 100);
        return run && { ...run, byRule: run.byRule.map((r) => ({ ...r, changes: [...r.changes].sort(byChange) })) };
      };
      /** What the counts must be: the kept comparisons counted again, here. */
      const recount = (kept: readonly ShadowComparison[]) => {
        const byRule = new Map<string, Map<string, number>>();
        for (const c of kept) {
          for (const r of c.rules) {
            const changes = byRule.get(r.id) ?? byRule.set(r.id, new Map()).get(r.id)!;
            const key = JSON.stringify([r.live, r.shadow]);
            changes.set(key, (changes.get(key) ?? 0) + 1);
          }
        }
        return {
          compared: kept.length, flipped: kept.filter((c) => c.flipped).length, undecided: kept.filter((c) => c.undecided).length,
          byRule: [...byRule.keys()].sort().map((ruleId) => {
            const changes = [...(byRule.get(ruleId) as Map<string, number>)].map(([key, count]) => {
              const [live, shadow] = JSON.parse(key) as [string | null, string | null];
              return { live, shadow, count };
            });
            const differing = changes.filter((c) => c.live !== c.shadow);
            return {
              ruleId, compared: changes.reduce((n, c) => n + c.count, 0), differs: differing.reduce((n, c) => n + c.count, 0),
              changes: differing.sort(byChange),
            };
          }),
        };
      };
      await store.recordComparisons(comparisons.slice(0, 50), [{ incarnation: seq, revision: 2, count: 2 }]);
      await store.recordComparisons(comparisons.slice(50), [{ incarnation: seq, revision: 2, count: 1 }]);
      const written = await counts();
      expect(written).toMatchObject({ ...recount(comparisons), skipped: 3 });
      expect(written?.flippedExecutions).toEqual(comparisons.filter((c) => c.flipped).map((c) => c.executionId));

      expect(await store.purgeExecutions('2026-01-02T00:00:41.000Z')).toBe(0);
      const kept = comparisons.slice(41);
      const purged = await counts();
      expect(purged).toMatchObject({ ...recount(kept), skipped: 3 });
      expect(purged?.flippedExecutions).toEqual(kept.filter((c) => c.flipped).map((c) => c.executionId));
      expect(await store.purgeExecutions('2026-01-03T00:00:00.000Z')).toBe(0);
      expect(await store.shadowRun(seq, 2, 100)).toMatchObject({ compared: 0, flipped: 0, undecided: 0, skipped: 3, byRule: [], flippedExecutions: [] });
      expect(await store.hasShadowRun(seq, 2)).toBe(true);
      expect(await store.hasShadowRun(seq, 3)).toBe(false);
    } finally {
      await store.close();
    }
  });
});

describe('shadow runs with credential verification on', () => {
  const OTHER_TYPE = 'ShadowOnlyCredential';
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeApp({
      DATABASE_URL: `sqlite://${path.join(tempDir(), 'strict.db')}`, API_TOKENS: `${AUTHOR}:projA,${REVIEWER}:projA`,
      SCENARIO_APPROVAL_PROJECTS: 'projA', CREDENTIAL_VERIFICATION: 'strict', DEMO_ISSUER: '1',
    });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
  });
  const req = (token: string, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
    app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload && { payload }) });
  const coldChecks = async () => {
    const found = /^credential_cold_checks_total (\d+)$/m.exec((await app.inject({ method: 'GET', url: '/metrics' })).body);
    return Number(found?.[1] ?? NaN);
  };

  it('never verifies for the shadow a credential the live run did not: the comparison is undecided, no cold check, live executes unaffected', async () => {
    expect((await req(AUTHOR, 'POST', '/compliance/scenarios', { id: 'warm', input: scenario({ projectId: 'projA' }) })).statusCode).toBe(201);
    const proposal = {
      queryConfigurations: [
        ...scenario().queryConfigurations,
        { id: 'q-other', query: { type: OTHER_TYPE, requestId: 3, attribute: 'reviewAnswer', value: 'GREEN', operator: '$eq' } },
      ],
    };
    const proposed = await req(AUTHOR, 'PATCH', '/compliance/scenarios/warm', { input: proposal });
    expect(proposed.statusCode, proposed.body).toBe(202);
    expect((await req(AUTHOR, 'POST', '/compliance/scenarios/warm/revisions/2/shadow')).statusCode).toBe(200);
    const read = await demoCredential();
    // Of a type only the proposal reads: the live run never verifies it (its proof, changed with the type, would fail).
    const ignored = { ...structuredClone(read), type: ['VerifiableCredential', OTHER_TYPE] };
    const execute = async () => {
      const res = await req(REVIEWER, 'POST', '/compliance/scenarios/execute', { address: ADDRESS, credentials: [read, ignored], scenarioId: 'warm' });
      expect(res.statusCode, res.body).toBe(200);
      expect((res.json() as { result: { status: string } }[]).map((r) => r.result.status)).toEqual(['valid', 'valid']);
    };
    await execute();
    const afterLive = await coldChecks();
    expect(afterLive).toBeGreaterThan(0);
    let answer: ShadowAnswer & { undecided: number } = { compared: 0 } as never;
    for (let i = 0; i < 1000 && answer.compared < 1; i++) {
      answer = (await req(AUTHOR, 'GET', '/compliance/scenarios/warm/revisions/2/shadow')).json();
      if (answer.compared < 1) await new Promise((r) => setTimeout(r, 20));
    }
    expect(answer).toMatchObject({ compared: 1, flipped: 0, undecided: 1, flippedExecutions: [] });
    expect(answer.byRule.find((r) => r.ruleId === 'q-other')?.changes).toEqual([{ live: null, shadow: 'error', count: 1 }]);
    expect(await coldChecks()).toBe(afterLive);
    await execute();
    expect((await app.inject({ method: 'GET', url: '/metrics' })).body).toContain('compliance_shadow_evaluations_total{outcome="undecided"} 1');
  }, 60_000);
});

describe('the shadow runner closing', () => {
  const job = (incarnation: number): ShadowJob => ({
    scenarioId: 'closing', incarnation, revision: 2, executionId: crypto.randomUUID(), at: 0, createdAt: '2026-01-02T00:00:00.000Z',
    subject: { address: ADDRESS, credentials: [], tenant: 't', digests: [] }, bytes: 100, live: [{ id: 'q', status: 'valid' }],
  });
  const runner = async (evaluate: () => Promise<never>) => {
    const store = await openSqliteStore({ file: path.join(tempDir(), 'closing.db'), synchronous: 'NORMAL' });
    const outcomes: string[] = [];
    const failures: unknown[] = [];
    const shadows = new ShadowRunner({
      store, plans: new PlanCache(TYPES), evaluate, limit: 8, maxBytes: 1024, closeWaitMs: 50,
      counted: (outcome) => outcomes.push(outcome), failed: (err) => failures.push(err),
    });
    return { store, shadows, outcomes, failures };
  };

  it('counts an offer after close as skipped in the metric only, writing nothing to the closed store', async () => {
    const { store, shadows, outcomes, failures } = await runner(() => Promise.reject(new Error('never evaluated')));
    await shadows.close();
    await store.close();
    shadows.offer(job(1));
    await new Promise((r) => setTimeout(r, 200)); // past a flush interval: a flush would have failed on the closed store
    expect(outcomes).toEqual(['skipped']);
    expect(failures).toEqual([]);
  });

  it('closes while an evaluation never ends', async () => {
    let began: () => void = () => {};
    const started = new Promise<void>((resolve) => (began = resolve));
    const { store, shadows, outcomes } = await runner(() => {
      began();
      return new Promise<never>(() => {});
    });
    try {
      const created = await store.create('closing', scenario() as never, '2026-01-01T00:00:00.000Z');
      await store.propose(created!, scenario({ name: 'Proposed' }) as never, '2026-01-01T00:00:01.000Z', () => ({
        made: {
          revision: 2, projectId: null, content: JSON.stringify({ input: scenario({ name: 'Proposed' }) }), digest: 'd', patch: null, author: 'a',
          createdAt: '2026-01-01T00:00:01.000Z',
        },
      }));
      shadows.offer(job(created?.seq ?? 0));
      await started;
      await shadows.close();
      expect(outcomes).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
