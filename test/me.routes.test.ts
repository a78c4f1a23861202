/** GET /compliance/me: what the token holds (subject, scopes, projects), for the console's project choice. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeApp } from './helpers.js';
import { localJwks, JWT_ISSUER, type LocalJwks } from './jwks.js';

const OPERATOR = 'operator-token-0123456789abcdef';
const SCOPED = 'scoped-token-of-b-and-a-0123456789';

describe('GET /compliance/me', () => {
  let app: FastifyInstance;
  let jwks: LocalJwks;
  const get = (token: string) => app.inject({ method: 'GET', url: '/compliance/me', headers: { authorization: `Bearer ${token}` } });

  beforeAll(async () => {
    jwks = await localJwks();
    app = await makeApp({ API_TOKENS: `${OPERATOR},${SCOPED}:projB+projA`, ...jwks.env });
  });
  afterAll(async () => {
    await app.close();
    jwks.close();
  });

  it('answers an operator token\'s every scope and every project (*), and a scoped token\'s projects sorted', async () => {
    const op = await get(OPERATOR);
    expect(op.statusCode, op.body).toBe(200);
    const all = ['scenarios:approve', 'scenarios:execute', 'scenarios:read', 'scenarios:write'];
    expect(op.json()).toEqual({ subject: expect.stringMatching(/^token:[0-9a-f]{12}$/), scopes: all, projects: '*' });
    const scoped = (await get(SCOPED)).json();
    expect(scoped).toEqual({ subject: expect.stringMatching(/^token:[0-9a-f]{12}$/), scopes: all, projects: ['projA', 'projB'] });
    expect(scoped.subject).not.toBe(op.json().subject);
    expect(op.body).not.toContain(OPERATOR);
  });

  it('answers a JWT\'s own scopes and projects claim, and needs scenarios:read', async () => {
    const reader = await jwks.sign({ scope: 'scenarios:read scenarios:execute', projects: ['projC'] }, 'officer-1');
    const r = await get(reader);
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toEqual({ subject: `jwt:${JWT_ISSUER}:officer-1`, scopes: ['scenarios:execute', 'scenarios:read'], projects: ['projC'] });
    const writerOnly = await get(await jwks.sign({ scope: 'scenarios:write', projects: ['projC'] }, 'officer-2'));
    expect(writerOnly.statusCode).toBe(403);
    expect((await app.inject({ method: 'GET', url: '/compliance/me' })).statusCode).toBe(401);
  });
});
