/** JWT bearer tokens against a JWKS served by a local HTTP server, scopes, and static tokens. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import type { FastifyInstance } from 'fastify';
import { ADDRESS, TOKEN, makeApp, scenario } from './helpers.js';

const ISSUER = 'https://issuer.test/';
const AUDIENCE = 'compliance-api';
let jwks: http.Server;
let app: FastifyInstance;
let sign: (claims: Record<string, unknown>, opts?: { exp?: string; iss?: string; aud?: string; key?: 'good' | 'stranger' }) => Promise<string>;

beforeAll(async () => {
  const good = await generateKeyPair('ES256');
  const stranger = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(good.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  jwks = http.createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
  sign = (claims, opts = {}) => new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .setIssuer(opts.iss ?? ISSUER)
    .setAudience(opts.aud ?? AUDIENCE)
    .setSubject('user-1')
    .setIssuedAt()
    .setExpirationTime(opts.exp ?? '5m')
    .sign((opts.key === 'stranger' ? stranger : good).privateKey);
  app = await makeApp({ AUTH_JWKS_URL: url, AUTH_JWT_ISSUER: ISSUER, AUTH_JWT_AUDIENCE: AUDIENCE });
  await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: { authorization: `Bearer ${TOKEN}` }, payload: { id: 's', input: scenario() } });
});

afterAll(async () => {
  await app.close();
  jwks.close();
});

const as = (token: string) => ({ authorization: `Bearer ${token}` });
const read = (token: string) => app.inject({ method: 'GET', url: '/compliance/scenarios/s', headers: as(token) });
const write = (token: string) => app.inject({ method: 'PATCH', url: '/compliance/scenarios/s', headers: as(token), payload: { input: { description: 'x' } } });
const exec = (token: string) => app.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers: as(token), payload: { address: ADDRESS, credentials: [], scenarioId: 's' } });

describe('JWT bearer tokens', () => {
  it('grants exactly the scopes of the scope claim: others answer 403 naming the scope', async () => {
    const reader = await sign({ scope: 'scenarios:read', projects: '*' });
    expect((await read(reader)).statusCode).toBe(200);
    const denied = await write(reader);
    expect(denied.statusCode).toBe(403);
    expect(denied.headers['content-type']).toMatch(/problem\+json/);
    expect(denied.json().detail).toContain('scenarios:write');
    expect(denied.headers['www-authenticate']).toContain('insufficient_scope');
    expect((await exec(reader)).statusCode).toBe(403);

    const executor = await sign({ scp: ['scenarios:execute'], projects: '*' });
    expect((await exec(executor)).statusCode).toBe(200);
    expect((await read(executor)).statusCode).toBe(403);

    const writer = await sign({ scope: 'scenarios:write scenarios:read', projects: '*' });
    expect((await write(writer)).statusCode).toBe(200);
  });

  it('refuses an expired token, a wrong issuer, a wrong audience and a foreign key with 401', async () => {
    const scope = 'scenarios:read';
    const bad = [
      await sign({ scope }, { exp: '-1m' }),
      await sign({ scope }, { iss: 'https://evil.test/' }),
      await sign({ scope }, { aud: 'someone-else' }),
      await sign({ scope }, { key: 'stranger' }),
    ];
    for (const token of bad) {
      const res = await read(token);
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toContain('invalid_token');
    }
  });

  it('refuses a token whose signature was tampered with', async () => {
    const token = await sign({ scope: 'scenarios:read scenarios:write scenarios:execute' });
    const [h, p, s] = token.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
    claims.sub = 'admin';
    const forged = `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`;
    expect((await read(forged)).statusCode).toBe(401);
  });

  it('keeps static tokens working beside JWTs, with every scope', async () => {
    expect((await read(TOKEN)).statusCode).toBe(200);
    expect((await write(TOKEN)).statusCode).toBe(200);
    expect((await exec(TOKEN)).statusCode).toBe(200);
  });
});
