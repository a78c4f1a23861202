/** Projects isolate scenarios, executions and tokens: every route crossed with every token, and a property test. */
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ADDRESS, credential, makeApp, scenario } from './helpers.js';

const A = 'token-of-project-a-0123456789';
const B = 'token-of-project-b-0123456789';
const OP = 'operator-token-0123456789xyz';
const AB = 'token-of-a-and-b-0123456789';
let app: FastifyInstance;

const as = (token: string) => ({ authorization: `Bearer ${token}` });
const req = (token: string, method: string, url: string, payload?: unknown) =>
  app.inject({ method: method as 'GET', url, headers: as(token), ...(payload !== undefined && { payload: payload as object }) });

beforeAll(async () => {
  app = await makeApp({ API_TOKENS: `${A}:projA,${B}:projB,${OP},${AB}:projA+projB` });
});
afterAll(async () => {
  await app.close();
});

let seq = 0;
/** A scenario in each project and one without a project, with one execution each. */
async function world() {
  const n = ++seq;
  const ids = { a: `a-${n}`, b: `b-${n}`, none: `none-${n}` };
  expect((await req(A, 'POST', '/compliance/scenarios', { id: ids.a, input: scenario({ projectId: 'projA' }) })).statusCode).toBe(201);
  expect((await req(B, 'POST', '/compliance/scenarios', { id: ids.b, input: scenario({ projectId: 'projB' }) })).statusCode).toBe(201);
  expect((await req(OP, 'POST', '/compliance/scenarios', { id: ids.none, input: scenario() })).statusCode).toBe(201);
  const run = async (token: string, id: string) =>
    (await req(token, 'POST', '/compliance/scenarios/execute', { address: ADDRESS, credentials: [credential()], scenarioId: id })).json()[0].executionId as string;
  const executions = { a: await run(A, ids.a), b: await run(B, ids.b), none: await run(OP, ids.none) };
  return { ids, executions };
}

describe('every route crossed with every token', () => {
  let w: Awaited<ReturnType<typeof world>>;
  beforeEach(async () => {
    w = await world();
  });

  // Which scenario each token may reach: own project yes, other project and project-less no; the operator all.
  const reach: Record<typeof A | typeof B | typeof OP, Record<'a' | 'b' | 'none', boolean>> = {
    [A]: { a: true, b: false, none: false },
    [B]: { a: false, b: true, none: false },
    [OP]: { a: true, b: true, none: true },
  };

  for (const [token, name] of [[A, 'token A'], [B, 'token B'], [OP, 'operator']] as const) {
    for (const target of ['a', 'b', 'none'] as const) {
      it(`${name} on the ${target === 'none' ? 'project-less' : `project ${target.toUpperCase()}`} scenario: read, execute, executions, patch, delete`, async () => {
        const ok = reach[token][target];
        const id = w.ids[target];
        const get = await req(token, 'GET', `/compliance/scenarios/${id}`);
        expect(get.statusCode).toBe(ok ? 200 : 404);
        const exec = await req(token, 'POST', '/compliance/scenarios/execute', { address: ADDRESS, credentials: [], scenarioId: id });
        expect(exec.statusCode).toBe(ok ? 200 : 404);
        const one = await req(token, 'GET', `/compliance/executions/${w.executions[target]}`);
        expect(one.statusCode).toBe(ok ? 200 : 404);
        // The list answers as for an id never used: an empty page, not the other project's records, not 404.
        const list = await req(token, 'GET', `/compliance/scenarios/${id}/executions`);
        expect(list.statusCode).toBe(200);
        expect(list.json().items.length).toBe(ok ? 2 : 0);
        const period = `from=${new Date(Date.now() - 3_600_000).toISOString()}&to=${new Date(Date.now() + 3_600_000).toISOString()}`;
        const summary = (await req(token, 'GET', `/compliance/scenarios/${id}/executions/summary?${period}`)).json();
        expect(Object.values(summary.totals).reduce((a: number, b) => a + Number(b), 0)).toBe(ok ? 2 : 0);
        const patch = await req(token, 'PATCH', `/compliance/scenarios/${id}`, { input: { description: 'changed' } });
        expect(patch.statusCode).toBe(ok ? 200 : 404);
        const del = await req(token, 'DELETE', `/compliance/scenarios/${id}`);
        expect(del.statusCode).toBe(ok ? 204 : 404);
        // Refused requests changed nothing.
        const after = await req(OP, 'GET', `/compliance/scenarios/${id}`);
        if (ok) expect(after.statusCode).toBe(404);
        else expect(after.json().revision).toBe(1);
        // A 404 says nothing that a missing scenario would not.
        if (!ok) expect(get.json().detail).toBe(`No scenario with id ${id}`);
      });
    }

    it(`${name}: the list holds only the token's projects`, async () => {
      const items: any[] = [];
      let cursor: string | null = null;
      do {
        const page: any = (await req(token, 'GET', `/compliance/scenarios?limit=100${cursor ? `&cursor=${cursor}` : ''}`)).json();
        items.push(...page.items);
        cursor = page.nextCursor;
      } while (cursor);
      const projects = new Set(items.map((i) => i.input.projectId ?? null));
      if (token === OP) expect(projects).toEqual(new Set(['projA', 'projB', null]));
      else expect(projects).toEqual(new Set([token === A ? 'projA' : 'projB']));
    });
  }

  it("an id deleted and re-created by another project keeps the first project's execution history, shown to it only", async () => {
    const id = `reused-${++seq}`;
    expect((await req(A, 'POST', '/compliance/scenarios', { id, input: scenario({ projectId: 'projA' }) })).statusCode).toBe(201);
    const first = (await req(A, 'POST', '/compliance/scenarios/execute', { address: ADDRESS, credentials: [credential()], scenarioId: id })).json()[0].executionId;
    expect((await req(A, 'DELETE', `/compliance/scenarios/${id}`)).statusCode).toBe(204);
    expect((await req(B, 'POST', '/compliance/scenarios', { id, input: scenario({ projectId: 'projB' }) })).statusCode).toBe(201);
    const second = (await req(B, 'POST', '/compliance/scenarios/execute', { address: ADDRESS, credentials: [credential()], scenarioId: id })).json()[0].executionId;
    const listed = async (token: string) => (await req(token, 'GET', `/compliance/scenarios/${id}/executions`)).json().items.map((e: { executionId: string }) => e.executionId);
    expect(await listed(A)).toEqual([first]);
    expect(await listed(B)).toEqual([second]);
    expect(await listed(OP)).toEqual([second, first]);
  });

  it('ids are unique per project: creating an id another project holds answers as for a free id, and each project keeps its own', async () => {
    const id = `both-${++seq}`;
    const exec = (token: string) => req(token, 'POST', '/compliance/scenarios/execute', { address: ADDRESS, credentials: [credential()], scenarioId: id });
    expect((await req(A, 'POST', '/compliance/scenarios', { id, input: scenario({ projectId: 'projA', name: 'A' }) })).statusCode).toBe(201);
    // What B meets is what it would meet for an id nobody holds: 404 on read, 201 on create; nothing of A's shows.
    const unseen = await req(B, 'GET', `/compliance/scenarios/${id}`);
    expect(unseen.statusCode).toBe(404);
    expect(unseen.json().detail).toBe(`No scenario with id ${id}`);
    const created = await req(B, 'POST', '/compliance/scenarios', { id, input: scenario({ projectId: 'projB', name: 'B' }) });
    expect(created.statusCode).toBe(201);
    expect(created.json().input.name).toBe('B');
    // Taken in its own project: 409, as before.
    expect((await req(B, 'POST', '/compliance/scenarios', { id, input: scenario({ projectId: 'projB' }) })).statusCode).toBe(409);
    expect((await req(A, 'GET', `/compliance/scenarios/${id}`)).json().input.name).toBe('A');
    expect((await req(B, 'GET', `/compliance/scenarios/${id}`)).json().input.name).toBe('B');
    expect((await req(B, 'PATCH', `/compliance/scenarios/${id}`, { input: { description: 'B only' } })).statusCode).toBe(200);
    expect((await req(A, 'GET', `/compliance/scenarios/${id}`)).json().input.description).not.toBe('B only');
    const [ea, eb] = [(await exec(A)).json(), (await exec(B)).json()];
    expect([ea[0].scenarioId, eb[0].scenarioId]).toEqual([id, id]);
    const listed = async (token: string) => (await req(token, 'GET', `/compliance/scenarios/${id}/executions`)).json().items.map((e: { executionId: string }) => e.executionId);
    expect(await listed(A)).toEqual([ea[0].executionId]);
    expect(await listed(B)).toEqual([eb[0].executionId]);
    // A token holding both projects (or the operator) cannot tell which one it means: 409 naming both, nothing done.
    for (const token of [AB, OP]) {
      const get = await req(token, 'GET', `/compliance/scenarios/${id}`);
      expect(get.statusCode).toBe(409);
      expect(get.json()).toMatchObject({ code: 'SCS_SCENARIO_AMBIGUOUS' });
      expect(get.json().detail).toContain('projA, projB');
      expect((await exec(token)).statusCode).toBe(409);
      expect((await req(token, 'DELETE', `/compliance/scenarios/${id}`)).statusCode).toBe(409);
    }
    // ?projectId= names the one meant; a project the token does not hold finds nothing.
    expect((await req(OP, 'GET', `/compliance/scenarios/${id}?projectId=projA`)).json().input.name).toBe('A');
    expect((await req(AB, 'GET', `/compliance/scenarios/${id}?projectId=projB`)).json().input.name).toBe('B');
    expect((await req(A, 'GET', `/compliance/scenarios/${id}?projectId=projB`)).statusCode).toBe(404);
    expect((await req(A, 'GET', `/compliance/scenarios/${id}?projectId=`)).statusCode).toBe(404);
    const named = await req(OP, 'POST', '/compliance/scenarios/execute?projectId=projB', { address: ADDRESS, credentials: [credential()], scenarioId: id });
    expect(named.statusCode).toBe(200);
    expect(await listed(B)).toContain(named.json()[0].executionId);
    // A create that leaves the id ambiguous for its token says which one it made in its Location.
    const other = `loc-${++seq}`;
    await req(B, 'POST', '/compliance/scenarios', { id: other, input: scenario({ projectId: 'projB' }) });
    const made = await req(AB, 'POST', '/compliance/scenarios', { id: other, input: scenario({ projectId: 'projA', name: 'made' }) });
    expect(made.headers.location).toBe(`/compliance/scenarios/${other}?projectId=projA`);
    expect((await req(AB, 'GET', String(made.headers.location))).json().input.name).toBe('made');
    expect((await req(A, 'POST', '/compliance/scenarios', { id: `${other}-a`, input: scenario({ projectId: 'projA' }) })).headers.location)
      .toBe(`/compliance/scenarios/${other}-a`);
    // B deletes its own; A's stays, and B's history stays B's.
    expect((await req(B, 'DELETE', `/compliance/scenarios/${id}`)).statusCode).toBe(204);
    expect((await req(A, 'GET', `/compliance/scenarios/${id}`)).statusCode).toBe(200);
    expect((await req(OP, 'GET', `/compliance/scenarios/${id}`)).json().input.name).toBe('A');
    expect(await listed(B)).toEqual([named.json()[0].executionId, eb[0].executionId]);
  });

  it('moving a scenario into a project that holds its id is 409, and changes nothing', async () => {
    const id = `mover-${++seq}`;
    expect((await req(A, 'POST', '/compliance/scenarios', { id, input: scenario({ projectId: 'projA' }) })).statusCode).toBe(201);
    expect((await req(B, 'POST', '/compliance/scenarios', { id, input: scenario({ projectId: 'projB' }) })).statusCode).toBe(201);
    const move = await req(A, 'PATCH', `/compliance/scenarios/${id}`, { input: { projectId: 'projB' } });
    expect(move.statusCode).toBe(403); // A does not hold B: it learns nothing of B's scenario
    const wide = await app.inject({ method: 'PATCH', url: `/compliance/scenarios/${id}`, headers: as(AB), payload: { input: { projectId: 'projB' } } });
    expect(wide.statusCode).toBe(409); // ambiguous for a token holding both
    expect(wide.json().code).toBe('SCS_SCENARIO_AMBIGUOUS');
    // Naming projA's scenario, the move itself is refused: projB holds the id.
    const named = await app.inject({
      method: 'PATCH', url: `/compliance/scenarios/${id}?projectId=projA`, headers: as(AB), payload: { input: { projectId: 'projB' } },
    });
    expect(named.statusCode).toBe(409);
    expect(named.json()).toMatchObject({ code: 'SCS_CONFLICT', detail: expect.stringMatching(/cannot move there/) });
    expect((await req(A, 'GET', `/compliance/scenarios/${id}`)).json().revision).toBe(1);
    expect((await req(B, 'GET', `/compliance/scenarios/${id}`)).json().revision).toBe(1);
  });

  it('creating in a project the token does not hold, or without a project, is 403', async () => {
    expect((await req(A, 'POST', '/compliance/scenarios', { input: scenario({ projectId: 'projB' }) })).statusCode).toBe(403);
    expect((await req(A, 'POST', '/compliance/scenarios', { input: scenario() })).statusCode).toBe(403);
    expect((await req(A, 'POST', '/compliance/scenarios', { input: scenario({ projectId: 'projA' }) })).statusCode).toBe(201);
  });

  it('moving a scenario to another project needs a token holding both', async () => {
    const moveToB = { input: { projectId: 'projB' } };
    const denied = await req(A, 'PATCH', `/compliance/scenarios/${w.ids.a}`, moveToB);
    expect(denied.statusCode).toBe(403);
    expect((await req(OP, 'GET', `/compliance/scenarios/${w.ids.a}`)).json().input.projectId).toBe('projA');
    expect((await req(A, 'PATCH', `/compliance/scenarios/${w.ids.a}`, { input: { projectId: null } })).statusCode).toBe(403);
    const moved = await req(AB, 'PATCH', `/compliance/scenarios/${w.ids.a}`, moveToB);
    expect(moved.statusCode).toBe(200);
    expect((await req(A, 'GET', `/compliance/scenarios/${w.ids.a}`)).statusCode).toBe(404);
    expect((await req(B, 'GET', `/compliance/scenarios/${w.ids.a}`)).statusCode).toBe(200);
  });
});

describe('property: token A never sees project B', () => {
  it('no sequence of requests with token A returns data of project B', async () => {
    const marker = 'SECRET-OF-B';
    const w = await world();
    await req(B, 'PATCH', `/compliance/scenarios/${w.ids.b}`, { input: { description: marker, name: marker } });
    const bExecution = w.executions.b;
    const bIds = [w.ids.b, bExecution];
    const idArb = fc.constantFrom(w.ids.a, w.ids.b, w.ids.none, 'missing', bExecution, w.executions.a);
    const command = fc.oneof(
      idArb.map((id) => ['GET', `/compliance/scenarios/${id}`] as const),
      idArb.map((id) => ['GET', `/compliance/executions/${id}`] as const),
      idArb.map((id) => ['GET', `/compliance/scenarios/${id}/executions`] as const),
      fc.constant(['GET', '/compliance/scenarios?limit=100'] as const),
      fc.tuple(idArb, fc.string({ maxLength: 8 })).map(([id, d]) => ['PATCH', `/compliance/scenarios/${id}`, { input: { description: d } }] as const),
      fc.tuple(idArb, fc.constantFrom('projA', 'projB', null)).map(([id, p]) => ['PATCH', `/compliance/scenarios/${id}`, { input: { projectId: p } }] as const),
      idArb.map((id) => ['POST', '/compliance/scenarios/execute', { address: ADDRESS, credentials: [credential()], scenarioId: id }] as const),
      idArb.map((id) => ['DELETE', `/compliance/scenarios/${id}`] as const),
      fc.constantFrom('projA', 'projB').map((p) => ['POST', '/compliance/scenarios', { input: scenario({ projectId: p }) }] as const),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 8 }), async (commands) => {
        for (const [method, url, payload] of commands) {
          const res = await req(A, method, url, payload);
          expect(res.statusCode).toBeLessThan(500);
          expect(res.body).not.toContain(marker);
          if (res.statusCode < 300) {
            // Refusals may echo what A itself sent; a success must hold nothing of B.
            expect(res.body).not.toContain('projB');
            // As JSON strings: a short id such as b-17 may occur inside a random UUID ("…db-17e4…").
            for (const id of bIds) expect(res.body).not.toContain(JSON.stringify(id));
          }
        }
        // B's scenario is untouched by anything A did.
        const b = (await req(OP, 'GET', `/compliance/scenarios/${w.ids.b}`)).json();
        expect(b.input.projectId).toBe('projB');
        expect(b.input.name).toBe(marker);
      }),
      { seed: 9, numRuns: 60 },
    );
  });
});

describe('every route that names a scenario or an execution, listed from the OpenAPI document', () => {
  /**
   * What project A's resources look like to project B's token, for each route with a token. A route added without a
   * case here fails the test: whoever adds a read or write route decides here what another project gets (404, as for
   * an id never used), so no route forgets tenancy unseen.
   */
  type Target = { scenario: string; execution: string };
  const foreign: Record<string, (t: Target) => { url: string; payload?: unknown }> = {
    'GET /compliance/scenarios/{scenarioId}': (t) => ({ url: `/compliance/scenarios/${t.scenario}` }),
    'PATCH /compliance/scenarios/{scenarioId}': (t) => ({ url: `/compliance/scenarios/${t.scenario}`, payload: { input: { description: 'changed' } } }),
    'DELETE /compliance/scenarios/{scenarioId}': (t) => ({ url: `/compliance/scenarios/${t.scenario}` }),
    'POST /compliance/scenarios/execute': (t) => ({ url: '/compliance/scenarios/execute', payload: { address: ADDRESS, credentials: [], scenarioId: t.scenario } }),
    'POST /compliance/scenarios/dry-run': (t) => ({ url: '/compliance/scenarios/dry-run', payload: { scenario: { id: t.scenario }, address: ADDRESS, credentials: [] } }),
    'GET /compliance/scenarios/{scenarioId}/revisions': (t) => ({ url: `/compliance/scenarios/${t.scenario}/revisions` }),
    'GET /compliance/scenarios/{scenarioId}/revisions/{revision}': (t) => ({ url: `/compliance/scenarios/${t.scenario}/revisions/1` }),
    'POST /compliance/scenarios/{scenarioId}/revisions/{revision}/approve': (t) => ({ url: `/compliance/scenarios/${t.scenario}/revisions/1/approve` }),
    'POST /compliance/scenarios/{scenarioId}/revisions/{revision}/reject': (t) => ({ url: `/compliance/scenarios/${t.scenario}/revisions/1/reject` }),
    'POST /compliance/scenarios/{scenarioId}/deployments': (t) => ({ url: `/compliance/scenarios/${t.scenario}/deployments`, payload: {} }),
    'GET /compliance/scenarios/{scenarioId}/deployments/{deploymentId}': (t) => ({ url: `/compliance/scenarios/${t.scenario}/deployments/d-1` }),
    'DELETE /compliance/scenarios/{scenarioId}/deployments/{deploymentId}': (t) => ({ url: `/compliance/scenarios/${t.scenario}/deployments/d-1` }),
    'POST /compliance/scenarios/{scenarioId}/revisions/{revision}/shadow': (t) => ({ url: `/compliance/scenarios/${t.scenario}/revisions/1/shadow` }),
    'DELETE /compliance/scenarios/{scenarioId}/revisions/{revision}/shadow': (t) => ({ url: `/compliance/scenarios/${t.scenario}/revisions/1/shadow` }),
    'GET /compliance/scenarios/{scenarioId}/revisions/{revision}/shadow': (t) => ({ url: `/compliance/scenarios/${t.scenario}/revisions/1/shadow` }),
    'GET /compliance/executions/{executionId}': (t) => ({ url: `/compliance/executions/${t.execution}` }),
    'GET /compliance/executions/{executionId}/attestation': (t) => ({ url: `/compliance/executions/${t.execution}/attestation` }),
    'POST /compliance/executions/{executionId}/webhooks/{deliveryId}/replay': (t) => ({ url: `/compliance/executions/${t.execution}/webhooks/00000000-0000-4000-8000-000000000000/replay` }),
  };
  /** Routes whose answer to another project is not a 404, and the test above that shows what it is instead. */
  const elsewhere: Record<string, string> = {
    'GET /compliance/scenarios': 'the list holds only the token\'s projects',
    'POST /compliance/scenarios': 'creating in a project the token does not hold, or without a project, is 403',
    'GET /compliance/scenarios/{scenarioId}/executions': 'read, execute, executions, patch, delete (an empty page, as for an id never used)',
    'GET /compliance/scenarios/{scenarioId}/executions/summary': 'read, execute, executions, patch, delete (zero counts, as for an id never used)',
    'GET /compliance/webhooks/secret': 'test/webhooks.test.ts: a tenant reads only its own project\'s secret',
    'GET /compliance/executions/export': 'test/export.routes.test.ts: exports only the token\'s projects, like GET /compliance/executions/{id}',
    'GET /compliance/credential-types': 'test/credential-types.routes.test.ts: the service\'s held contexts, the same for every token (no project\'s data)',
    'GET /compliance/me': 'test/me.routes.test.ts: the caller\'s own subject, scopes and projects (no project\'s data)',
  };

  it('answers 404 to another project\'s token on each, and changes nothing', async () => {
    const { ids, executions } = await world();
    const paths = (app as unknown as { swagger(): { paths: Record<string, Record<string, { security?: unknown[] }>> } }).swagger().paths;
    const withToken = Object.entries(paths).flatMap(([p, methods]) =>
      Object.entries(methods).filter(([, op]) => (op.security ?? []).length > 0).map(([m]) => `${m.toUpperCase()} ${p}`));
    expect(withToken.length).toBeGreaterThan(Object.keys(foreign).length);
    for (const route of withToken) {
      if (route in elsewhere) continue;
      const make = foreign[route];
      expect(make, `${route}: a route with a token and no tenancy case in this test`).toBeDefined();
      if (!make) continue;
      const { url, payload } = make({ scenario: ids.a, execution: executions.a });
      const answer = await req(B, route.split(' ')[0] ?? 'GET', url, payload);
      expect(answer.statusCode, `${route} with another project's token`).toBe(404);
    }
    const after = await req(A, 'GET', `/compliance/scenarios/${ids.a}`);
    expect(after.json().revision).toBe(1);
    expect((await req(A, 'GET', `/compliance/executions/${executions.a}`)).statusCode).toBe(200);
  });
});
