/**
 * GET /compliance/me: the caller's subject (as a revision's author names it), scopes and projects, so the console can
 * leave out an approve button the API would refuse. Nothing of the token itself is answered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeApp, scenario } from './helpers.js';
import { JWT_ISSUER, localJwks, type LocalJwks } from './jwks.js';

const OPERATOR = 'me-operator-token-0123456789';
const TENANT = 'me-tenant-token-0123456789ab';

describe('GET /compliance/me', () => {
  let app: FastifyInstance;
  let jwks: LocalJwks;
  const get = (token: string) => app.inject({ method: 'GET', url: '/compliance/me', headers: { authorization: `Bearer ${token}` } });

  beforeAll(async () => {
    jwks = await localJwks();
    app = await makeApp({
      API_TOKENS: `${OPERATOR},${TENANT}:projB+projA`, SCENARIO_APPROVAL_PROJECTS: 'projA', CREDENTIAL_VERIFICATION: 'off', ...jwks.env,
    });
  });
  afterAll(async () => {
    await app?.close();
    jwks?.close();
  });

  it('answers a static token\'s fingerprint subject, every scope and its projects, never the token', async () => {
    const operator = await get(OPERATOR);
    expect(operator.statusCode).toBe(200);
    expect(operator.json()).toEqual({
      subject: expect.stringMatching(/^token:[0-9a-f]{12}$/),
      named: true,
      scopes: ['scenarios:approve', 'scenarios:execute', 'scenarios:read', 'scenarios:write'],
      projects: '*',
    });
    expect(operator.body).not.toContain(OPERATOR);
    const tenant = (await get(TENANT)).json();
    expect(tenant.projects).toEqual(['projA', 'projB']);
    expect(tenant.subject).not.toBe(operator.json().subject);
  });

  it('answers the subject a proposal of this token names as its author', async () => {
    const created = await app.inject({
      method: 'POST', url: '/compliance/scenarios', headers: { authorization: `Bearer ${TENANT}` },
      payload: { id: 'me-proposal', input: scenario({ projectId: 'projA' }) },
    });
    expect(created.statusCode, created.body).toBe(201);
    const proposed = await app.inject({
      method: 'PATCH', url: '/compliance/scenarios/me-proposal', headers: { authorization: `Bearer ${TENANT}` }, payload: { input: { name: 'Changed' } },
    });
    expect(proposed.statusCode, proposed.body).toBe(202);
    const revision = await app.inject({ method: 'GET', url: String(proposed.headers.location), headers: { authorization: `Bearer ${TENANT}` } });
    expect(revision.json().author).toBe((await get(TENANT)).json().subject);
  });

  it('answers a JWT\'s issuer and subject, the scopes it carries and its projects claim', async () => {
    const jwt = await jwks.sign({ scope: 'scenarios:read scenarios:write', projects: ['projA'], email: 'officer@example.com' }, 'officer-7');
    const res = await get(jwt);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ subject: `jwt:${JWT_ISSUER}:officer-7`, named: true, scopes: ['scenarios:read', 'scenarios:write'], projects: ['projA'] });
    expect(res.body).not.toContain('officer@example.com');
  });

  it('answers named: false for a JWT without sub, which the API refuses as an approver', async () => {
    const unnamed = await jwks.sign({ scope: 'scenarios:read scenarios:approve', projects: ['projA'] }, '');
    const res = await get(unnamed);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ subject: `jwt:${JWT_ISSUER}:`, named: false, scopes: ['scenarios:approve', 'scenarios:read'] });
  });

  it('needs a token (401) and the scope scenarios:read (403)', async () => {
    expect((await app.inject({ method: 'GET', url: '/compliance/me' })).statusCode).toBe(401);
    const executeOnly = await jwks.sign({ scope: 'scenarios:execute', projects: ['projA'] }, 'frontend');
    const refused = await get(executeOnly);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe('SCS_FORBIDDEN');
  });
});
