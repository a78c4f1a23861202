/**
 * JWTs as an attacker uses them: made-up tokens, re-spelled signatures, a JWKS that fails, tokens without expiry,
 * project ids a database cannot store; and a static token shaped like a JWT.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import { TOKEN, makeApp, scenario } from './helpers.js';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from './pg.js';

const ISSUER = 'https://issuer.test/';
const AUDIENCE = 'compliance-api';
/** How the JWKS server answers: its keys, a 500, or HTML. */
let mode: 'ok' | '500' | 'html' = 'ok';
let hits = 0;
let jwksUrl: string;
let jwks: http.Server;
let privateKey: CryptoKey;
const schema = freshSchema('jwt');

beforeAll(async () => {
  const pair = await generateKeyPair('ES256');
  privateKey = pair.privateKey;
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  jwks = http.createServer((_req, res) => {
    hits++;
    if (mode === '500') {
      res.statusCode = 500;
      res.end('{"error":"down"}');
    } else if (mode === 'html') {
      res.setHeader('content-type', 'text/html');
      res.end('<html>maintenance</html>');
    } else {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
    }
  });
  await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
  jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
});

afterAll(async () => {
  jwks.close();
  if (pgAvailable) await dropSchema(schema);
});

const jwtEnv = () => ({ AUTH_JWKS_URL: jwksUrl, AUTH_JWT_ISSUER: ISSUER, AUTH_JWT_AUDIENCE: AUDIENCE });

function sign(claims: Record<string, unknown>, { exp = '5m' as string | null, kid = 'k1' } = {}): Promise<string> {
  const jwt = new SignJWT({ scope: 'scenarios:read scenarios:write scenarios:execute', ...claims })
    .setProtectedHeader({ alg: 'ES256', kid })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject('user-1')
    .setIssuedAt();
  if (exp !== null) jwt.setExpirationTime(exp);
  return jwt.sign(privateKey);
}

/** A made-up token of a JWT's shape: three base64url parts, signed by nobody. */
const garbage = (i: number) => `eyJhbGciOiJFUzI1NiIsImtpZCI6ImsxIn0.eyJpIjo${i}fQ.${Buffer.from(`sig-${i}`).toString('base64url')}`;

/** The 16 spellings of an ES256 signature (64 bytes: the last base64url character carries 2 bits, 4 are free). */
function respellings(token: string): string[] {
  const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const head = token.slice(0, -1);
  const last = ALPHABET.indexOf(token.at(-1)!);
  return Array.from({ length: 16 }, (_, low) => head + ALPHABET[(last & ~15) | low]);
}

const read = (app: { inject: Function }, token: string, remoteAddress = '127.0.0.1') =>
  (app as Awaited<ReturnType<typeof makeApp>>).inject({ method: 'GET', url: '/compliance/scenarios', headers: { authorization: `Bearer ${token}` }, remoteAddress });

describe('JWT rate limits', () => {
  it('counts made-up JWT-shaped tokens against the client address: 429 once its budget is spent', async () => {
    mode = 'ok';
    const app = await makeApp({ ...jwtEnv(), RATE_LIMIT_MAX: '10', RATE_LIMIT_WINDOW_MS: '60000' });
    try {
      const codes = [];
      for (let i = 0; i < 30; i++) codes.push((await read(app, garbage(i), '10.0.0.7')).statusCode);
      expect(codes.slice(0, 10)).toEqual(Array(10).fill(401));
      expect(codes.slice(10)).toEqual(Array(20).fill(429));
      // Another address keeps its own budget.
      expect((await read(app, garbage(99), '10.0.0.8')).statusCode).toBe(401);
    } finally {
      await app.close();
    }
  });

  it('gives one token one budget however the last character of its signature is spelled', async () => {
    mode = 'ok';
    const app = await makeApp({ ...jwtEnv(), RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW_MS: '60000' });
    try {
      const spellings = respellings(await sign({ projects: '*' }));
      const codes = [];
      for (const t of spellings) codes.push((await read(app, t)).statusCode);
      // Every spelling verifies; the first is counted against the address (the token is not known good yet), the
      // next five against the token, and the rest are refused.
      expect(codes.slice(0, 6)).toEqual(Array(6).fill(200));
      expect(codes.slice(6)).toEqual(Array(10).fill(429));
    } finally {
      await app.close();
    }
  });
});

describe('JWT verification', () => {
  it('answers 503 SCS_AUTH_UNAVAILABLE while the JWKS answers 500 or HTML, and 200 once it is back', async () => {
    for (const outage of ['500', 'html'] as const) {
      mode = outage;
      const app = await makeApp(jwtEnv());
      try {
        const res = await read(app, await sign({ projects: '*' }));
        expect(res.statusCode, outage).toBe(503);
        expect(res.json().code).toBe('SCS_AUTH_UNAVAILABLE');
        expect(res.headers['retry-after']).toBeDefined();
      } finally {
        await app.close();
      }
    }
    mode = 'ok';
    const app = await makeApp(jwtEnv());
    try {
      expect((await read(app, await sign({ projects: '*' }))).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('does not fetch a failing JWKS again for each token with an unknown key id (back-off)', async () => {
    mode = '500';
    const app = await makeApp(jwtEnv());
    try {
      hits = 0;
      const codes = [];
      for (let i = 0; i < 10; i++) codes.push((await read(app, await sign({ projects: '*' }, { kid: `unknown-${i}` }))).statusCode);
      expect(codes).toEqual(Array(10).fill(503));
      expect(hits).toBe(1);
    } finally {
      mode = 'ok';
      await app.close();
    }
  });

  it('refuses a JWT without exp with 401 naming it', async () => {
    mode = 'ok';
    const app = await makeApp(jwtEnv());
    try {
      const res = await read(app, await sign({ projects: '*' }, { exp: null }));
      expect(res.statusCode).toBe(401);
      expect(res.json().detail).toContain('exp');
      expect((await read(app, await sign({ projects: '*' }))).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('accepts a configured static token that has two dots, with AUTH_JWKS_URL set', async () => {
    mode = 'ok';
    const dotted = 'static.token-with.two-dots';
    const app = await makeApp({ ...jwtEnv(), API_TOKENS: `${TOKEN},${dotted}` });
    try {
      expect((await read(app, dotted)).statusCode).toBe(200);
      expect((await read(app, `${dotted}x`)).statusCode).toBe(401);
    } finally {
      await app.close();
    }
  });
});

describe.skipIf(!pgAvailable)('text PostgreSQL cannot store, on PostgreSQL', () => {
  it('answers 400 naming the projects claim when a project id in it holds U+0000 (not 500)', async () => {
    mode = 'ok';
    const app = await makeApp({ ...jwtEnv(), DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema });
    try {
      const res = await read(app, await sign({ projects: ['a\u0000b'] }));
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('SCS_VALIDATION');
      expect(res.json().errors[0].field).toContain('projects');
      expect((await read(app, await sign({ projects: ['ab'] }))).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('answers 400 naming ?projectId= when it holds U+0000, for an operator token (not 500)', async () => {
    const app = await makeApp({ DATABASE_URL: PG_URL, DATABASE_SCHEMA: `${schema}_q` });
    try {
      const auth = { authorization: `Bearer ${TOKEN}` };
      expect((await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 's', input: scenario() } })).statusCode).toBe(201);
      for (const url of ['/compliance/scenarios/s?projectId=a%00b', '/compliance/scenarios/execute?projectId=%00']) {
        const res = url.endsWith('execute?projectId=%00')
          ? await app.inject({ method: 'POST', url, headers: auth, payload: { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', scenarioId: 's', credentials: [] } })
          : await app.inject({ method: 'GET', url, headers: auth });
        expect(res.statusCode, url).toBe(400);
        expect(res.json().errors[0].field).toBe('querystring.projectId');
      }
      expect((await app.inject({ method: 'DELETE', url: '/compliance/scenarios/s?projectId=%00', headers: auth })).statusCode).toBe(400);
    } finally {
      await app.close();
      await dropSchema(`${schema}_q`);
    }
  });
});
