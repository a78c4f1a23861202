/**
 * Text a database cannot store (U+0000, a lone UTF-16 surrogate) in a scenario or a credential id: a 400 naming the
 * field, nothing stored, on SQLite and on PostgreSQL alike (PostgreSQL answered 500 before, and one such execute
 * failed the whole batch of audit rows it shared with other clients' executes).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ADDRESS, auth, credential, makeApp, scenario, tempDir } from './helpers.js';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from './pg.js';

const schema = freshSchema('poison');
afterAll(async () => {
  if (pgAvailable) await dropSchema(schema);
});

const stores: Array<[string, Record<string, string>, boolean]> = [
  ['sqlite', { DATA_DIR: tempDir() }, true],
  ['postgres', { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema }, pgAvailable],
];

const BAD = [['U+0000', 'a\u0000b'], ['a lone high surrogate', 'a\ud800b'], ['a lone low surrogate', '\udc00b']] as const;

describe.each(stores)('on %s', (_name, env, available) => {
  it.skipIf(!available)('refuses such text in a scenario, in a value or a key, on create and PATCH, and stores nothing', async () => {
    const app = await makeApp({ ...env, CREDENTIAL_VERIFICATION: 'off' });
    try {
      for (const [what, text] of BAD) {
        const id = `p-${Math.random().toString(36).slice(2, 8)}`;
        const res = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id, input: scenario({ name: text }) } });
        expect(res.statusCode, what).toBe(400);
        expect(res.json().errors, what).toEqual([expect.objectContaining({ field: 'body.input.name', pointer: '/input/name' })]);
        expect((await app.inject({ method: 'GET', url: `/compliance/scenarios/${id}`, headers: auth })).statusCode).toBe(404);
      }
      expect((await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'ok', input: scenario() } })).statusCode).toBe(201);
      for (const [what, text] of BAD) {
        const res = await app.inject({ method: 'PATCH', url: '/compliance/scenarios/ok', headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify({ input: { description: text } }) });
        expect(res.statusCode, what).toBe(400);
        expect(res.json().errors[0].field).toBe('body.input.description');
      }
      const keyed = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: { ...auth, 'content-type': 'application/json' }, payload: `{"id":"k","input":${JSON.stringify(scenario()).replace('"name"', '"x\\u0000":1,"name"')}}` });
      expect(keyed.statusCode).toBe(400);
      expect(keyed.json().errors[0].field).toBe('body.input.x\\u0000');
      const ok = await app.inject({ method: 'GET', url: '/compliance/scenarios/ok', headers: auth });
      expect(ok.json().revision).toBe(1);
      expect(ok.json().input.description).toBe(scenario().description);
    } finally {
      await app.close();
    }
  });

  it.skipIf(!available)("refuses such text in a credential id with a 400 naming it, and other clients' executes meanwhile all answer 200", async () => {
    const app = await makeApp({ ...env, CREDENTIAL_VERIFICATION: 'off' });
    try {
      expect((await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'x', input: scenario() } })).statusCode).toBe(201);
      const good = () => app.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers: auth, payload: { address: ADDRESS, scenarioId: 'x', credentials: [credential()] } });
      const bad = (text: string) => app.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers: auth, payload: { address: ADDRESS, scenarioId: 'x', credentials: [credential(), { ...credential(), id: text }] } });
      const all = await Promise.all([good(), ...BAD.map(([, t]) => bad(t)), good(), good()]);
      expect(all.map((r) => r.statusCode)).toEqual([200, 400, 400, 400, 200, 200]);
      expect(all[1].json().errors).toEqual([expect.objectContaining({ field: 'body.credentials.1.id', pointer: '/credentials/1/id' })]);
    } finally {
      await app.close();
    }
  });
});
