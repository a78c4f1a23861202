/**
 * A refused JWT says why: in WWW-Authenticate's error_description (RFC 6750), in the problem's detail and in the log
 * line, for each check (expiry, issuer, audience, an unknown key, a signature), and never quotes the token.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import type { FastifyInstance } from 'fastify';
import { makeApp } from './helpers.js';

const ISSUER = 'https://issuer.test/';
const AUDIENCE = 'compliance-api';
const lines: string[] = [];
let jwks: http.Server;
let app: FastifyInstance;
let sign: (opts: { exp?: string; iss?: string; aud?: string; kid?: string; stranger?: boolean }) => Promise<string>;

beforeAll(async () => {
  const good = await generateKeyPair('ES256');
  const stranger = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(good.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  jwks = http.createServer((_req, res) => res.setHeader('content-type', 'application/json').end(JSON.stringify({ keys: [jwk] })));
  await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
  sign = (opts) => new SignJWT({ scope: 'scenarios:read', projects: '*' })
    .setProtectedHeader({ alg: 'ES256', kid: opts.kid ?? 'k1' })
    .setIssuer(opts.iss ?? ISSUER).setAudience(opts.aud ?? AUDIENCE).setSubject('user-1').setIssuedAt()
    .setExpirationTime(opts.exp ?? '5m')
    .sign((opts.stranger ? stranger : good).privateKey);
  app = await makeApp(
    { AUTH_JWKS_URL: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`, AUTH_JWT_ISSUER: ISSUER, AUTH_JWT_AUDIENCE: AUDIENCE },
    { logger: { level: 'info', stream: { write: (line: string) => { lines.push(line); } } } },
  );
});

afterAll(async () => {
  await app.close();
  jwks.close();
});

describe('a refused JWT', () => {
  it.each([
    ['expired', { exp: '-1m' }, 'The bearer token has expired: get a new one'],
    ['of another issuer', { iss: 'https://evil.test/' }, `The bearer token is from another issuer: its iss must be ${ISSUER}`],
    ['for another audience', { aud: 'someone-else' }, `The bearer token is for another audience: its aud must include ${AUDIENCE}`],
    ['signed with an unknown key', { kid: 'k9' }, 'The bearer token is signed with a key AUTH_JWKS_URL does not list (unknown kid)'],
    ['with a signature that does not verify', { stranger: true }, 'The bearer token\'s signature does not verify'],
  ])('%s says why in WWW-Authenticate, the detail and the log, without the token', async (_name, opts, why) => {
    const token = await sign(opts);
    const requestId = `refusal-${Math.random().toString(36).slice(2)}`;
    const res = await app.inject({ method: 'GET', url: '/compliance/scenarios', headers: { authorization: `Bearer ${token}`, 'x-request-id': requestId } });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe(`Bearer realm="compliance", error="invalid_token", error_description="${why}"`);
    expect(res.json()).toMatchObject({ code: 'SCS_UNAUTHORIZED', detail: why });
    const logged = lines.filter((l) => l.includes(requestId));
    expect(logged.map((l) => JSON.parse(l) as { msg: string; reason?: string }).find((l) => l.msg === 'bearer token refused')?.reason).toBe(why);
    for (const l of logged) expect(l).not.toContain(token.split('.')[2]);
  });
});
