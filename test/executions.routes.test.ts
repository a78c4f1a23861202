import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { canonicalJson, sha256Hex } from '../src/domain/canonical-json.js';
import { ADDRESS, auth, credential, DAY, demoCredential, makeApp, scenario } from './helpers.js';

let app: FastifyInstance;
beforeEach(async () => {
  app = await makeApp();
  await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'adult', input: scenario() } });
});
afterEach(async () => {
  await app.close();
});

const execute = (credentials: unknown[]) =>
  app.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers: auth, payload: { address: ADDRESS, credentials, scenarioId: 'adult' } });

describe('the execution audit log', () => {
  it('records each execute call: ids, revision, address, results, verdict and credential digests, never credential content', async () => {
    const cred = await demoCredential({ personalData: { firstName: 'Zebulon', age: 30 } });
    const res = await execute([cred]);
    const results = res.json();
    const executionId = results[0].executionId;
    const got = await app.inject({ method: 'GET', url: `/compliance/executions/${executionId}`, headers: auth });
    expect(got.statusCode).toBe(200);
    const record = got.json();
    expect(record).toEqual({
      executionId,
      scenarioId: 'adult',
      scenarioRevision: 1,
      projectId: null,
      address: ADDRESS,
      state: 'completed',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      credentials: [{ id: cred.id, sha256: sha256Hex(canonicalJson(cred)) }],
      results,
      verdict: 'passed',
      links: { revision: expect.stringMatching(/^\/compliance\/scenarios\/adult\/revisions\/1\?incarnation=\d+$/) },
    });
    const text = got.body;
    expect(text).not.toContain('Zebulon');
    expect(text).not.toContain('credentialSubject');
  });

  it('hashes canonical JSON: the same credential with its keys in another order has the same digest', async () => {
    const cred = credential();
    const reordered = Object.fromEntries(Object.entries(cred).reverse());
    const a = (await execute([cred])).json()[0].executionId;
    const b = (await execute([reordered])).json()[0].executionId;
    const digest = async (id: string) => (await app.inject({ method: 'GET', url: `/compliance/executions/${id}`, headers: auth })).json().credentials[0].sha256;
    expect(await digest(a)).toBe(await digest(b));
    const changed = credential({ id: cred.id, issuanceDate: new Date(Date.now() - 2 * DAY).toISOString() });
    const c = (await execute([changed])).json()[0].executionId;
    expect(await digest(c)).not.toBe(await digest(a));
  });

  it('records each credential\'s canonical digest for a body sent again (remembered by its text) and for a changed body', async () => {
    const first = credential({ id: 'urn:uuid:11111111-1111-4111-8111-111111111111' });
    const second = credential({ id: 'urn:uuid:22222222-2222-4222-8222-222222222222' }, { personalData: { age: 40 } });
    const changed = { ...second, issuanceDate: new Date(Date.now() - 3 * DAY).toISOString() };
    const send = (credentials: unknown[]) => app.inject({
      method: 'POST', url: '/compliance/scenarios/execute', headers: { ...auth, 'content-type': 'application/json' },
      payload: JSON.stringify({ address: ADDRESS, credentials, scenarioId: 'adult' }),
    });
    const recorded = async (res: { json(): any }) => (await app.inject({
      method: 'GET', url: `/compliance/executions/${res.json()[0].executionId}`, headers: auth,
    })).json().credentials.map((c: { sha256: string }) => c.sha256);
    const digest = (c: unknown) => sha256Hex(canonicalJson(c));
    expect(await recorded(await send([first, second]))).toEqual([digest(first), digest(second)]);
    expect(await recorded(await send([first, second]))).toEqual([digest(first), digest(second)]);
    expect(await recorded(await send([first, changed]))).toEqual([digest(first), digest(changed)]);
    expect(digest(changed)).not.toBe(digest(second));
  });

  it('records the revision the rules came from', async () => {
    await app.inject({ method: 'PATCH', url: '/compliance/scenarios/adult', headers: auth, payload: { input: { name: 'Renamed' } } });
    const id = (await execute([credential()])).json()[0].executionId;
    const record = (await app.inject({ method: 'GET', url: `/compliance/executions/${id}`, headers: auth })).json();
    expect(record.scenarioRevision).toBe(2);
    expect(record.results[0].name).toBe('Renamed');
  });

  it('lists a scenario\'s executions newest first with a cursor', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await execute([])).json()[0].executionId);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const url: string = `/compliance/scenarios/adult/executions?limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const page = (await app.inject({ method: 'GET', url, headers: auth })).json();
      seen.push(...page.items.map((e: any) => e.executionId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(ids.reverse());
  });

  it('answers 404 problem+json for an unknown execution, 401 without a token', async () => {
    const res = await app.inject({ method: 'GET', url: `/compliance/executions/${crypto.randomUUID()}`, headers: auth });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('SCS_EXECUTION_NOT_FOUND');
    expect((await app.inject({ method: 'GET', url: '/compliance/executions/x', headers: auth })).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: `/compliance/executions/${crypto.randomUUID()}` })).statusCode).toBe(401);
  });
});

describe('retention', () => {
  it('purges records older than EXECUTION_RETENTION_DAYS periodically', async () => {
    let clock = Date.now();
    const timed = await makeApp({ EXECUTION_RETENTION_DAYS: '1', EXECUTION_PURGE_INTERVAL_MS: '20' }, { now: () => clock });
    try {
      await timed.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 's', input: scenario() } });
      const run = async () => (await timed.inject({
        method: 'POST', url: '/compliance/scenarios/execute', headers: auth, payload: { address: ADDRESS, credentials: [], scenarioId: 's' },
      })).json()[0].executionId as string;
      const old = await run();
      clock += 2 * DAY; // two days later
      const recent = await run();
      const exists = async (id: string) => (await timed.inject({ method: 'GET', url: `/compliance/executions/${id}`, headers: auth })).statusCode;
      await expect.poll(() => exists(old), { timeout: 2000, interval: 20 }).toBe(404);
      expect(await exists(recent)).toBe(200);
    } finally {
      await timed.close();
    }
  });
});
