/** `?projectId=` narrows only the routes that declare it, and an idempotency key is judged by the token's own projects. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeApp, scenario } from './helpers.js';
import { localJwks, type LocalJwks } from './jwks.js';

let jwks: LocalJwks;
let app: FastifyInstance;
const sign = (projects: string[] | '*') => jwks.sign({ scope: 'scenarios:read scenarios:write scenarios:execute', projects }, 'user-1');

beforeAll(async () => {
  jwks = await localJwks();
  app = await makeApp(jwks.env);
});

afterAll(async () => {
  await app.close();
  jwks.close();
});

const as = (token: string, more: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, ...more });

describe('?projectId= and idempotency keys', () => {
  it('refuses with 422 a retry of the same key by a token of the same subject holding other projects', async () => {
    const body = { id: 'idem-narrow', input: scenario({ projectId: 'projA' }) };
    const url = '/compliance/scenarios?projectId=zzz';
    const first = await app.inject({ method: 'POST', url, headers: as(await sign(['projA', 'projB']), { 'idempotency-key': 'k-narrow-1' }), payload: body });
    expect(first.statusCode).toBe(201);
    const retry = await app.inject({ method: 'POST', url, headers: as(await sign(['projB']), { 'idempotency-key': 'k-narrow-1' }), payload: body });
    expect(retry.statusCode).toBe(422);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
  });

  it('leaves a route that does not declare projectId as it is: create ignores it, and its Location names the project', async () => {
    const token = await sign(['projA', 'projB']);
    const a = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: as(token), payload: { id: 'dup', input: scenario({ projectId: 'projA' }) } });
    expect(a.statusCode).toBe(201);
    const b = await app.inject({ method: 'POST', url: '/compliance/scenarios?projectId=projB', headers: as(token), payload: { id: 'dup', input: scenario({ projectId: 'projB' }) } });
    expect(b.statusCode).toBe(201);
    expect(b.headers.location).toBe('/compliance/scenarios/dup?projectId=projB');
    expect((await app.inject({ method: 'GET', url: String(b.headers.location), headers: as(token) })).statusCode).toBe(200);
    const ignored = await app.inject({ method: 'POST', url: '/compliance/scenarios?projectId=%00', headers: as(token), payload: { id: 'nul', input: scenario({ projectId: 'projA' }) } });
    expect(ignored.statusCode).toBe(201);
  });
});
