/** Credential trust through HTTP: real credentials from the demo issuer (js-sdk), verified in strict mode. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createDemoIssuer } from '../src/trust/demo-issuer.js';
import { auth, makeApp, scenario } from './helpers.js';

const HOLDER = '0x52908400098527886E0F7030069857D2E4169EE7';
const OTHER = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
let demoCredential: Record<string, any>;
let demoMtpCredential: Record<string, any>;

beforeAll(async () => {
  const issuer = await createDemoIssuer({ statusUrl: 'http://127.0.0.1:3000/demo-issuer/status' });
  demoCredential = await issuer.issue({
    subjectId: `did:pkh:eip155:1:${HOLDER}`,
    claims: { reviewAnswer: 'GREEN', personalData: { firstName: 'Alice', age: 30, citizenship: 'FRA' } },
    issuanceDate: new Date(Date.now() - 60_000),
    expirationDate: new Date(Date.now() + 30 * 86_400_000),
  });
  demoMtpCredential = await issuer.issue({
    subjectId: `did:pkh:eip155:1:${HOLDER}`,
    claims: { reviewAnswer: 'GREEN', personalData: { firstName: 'Alice', age: 30, citizenship: 'FRA' } },
    issuanceDate: new Date(Date.now() - 60_000),
    expirationDate: new Date(Date.now() + 30 * 86_400_000),
    nonce: 4242,
    proof: 'mtp',
  });
}, 60_000);

async function appWith(env: Record<string, string>) {
  const app = await makeApp({ CREDENTIAL_VERIFICATION: 'strict', ...env });
  await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'adult', input: scenario() } });
  return app;
}
const execute = (app: FastifyInstance, credential: unknown, address = HOLDER) =>
  app.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers: auth, payload: { address, credentials: [credential], scenarioId: 'adult' } });

describe('credential trust on execute (strict)', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await appWith({ DEMO_ISSUER: '1' });
  }, 60_000);
  afterAll(async () => {
    await app.close();
  });

  it('a credential signed by a trusted issuer, not revoked, of this holder, passes', async () => {
    const results = (await execute(app, demoCredential)).json();
    expect(results.map((r: any) => r.result.status)).toEqual(['valid', 'valid']);
    expect(results[0].result.verification).toBeUndefined();
  });

  it('an Iden3SparseMerkleTreeProof-only demo credential passes too (its state answered in process)', async () => {
    const results = (await execute(app, demoMtpCredential)).json();
    expect(results.map((r: any) => r.result.status)).toEqual(['valid', 'valid']);
  });

  it('a changed credentialSubject value fails as not-valid, saying the proof does not match', async () => {
    const tampered = structuredClone(demoCredential);
    tampered.credentialSubject.personalData.age = 31;
    const results = (await execute(app, tampered)).json();
    for (const r of results) {
      expect(r.result.status).toBe('not-valid');
      expect(r.result.result.reasons.join(' ')).toMatch(/proof|signature|claim/i);
    }
    expect(JSON.stringify(results)).not.toContain('Alice');
  });

  it('a changed expirationDate fails', async () => {
    const tampered = structuredClone(demoCredential);
    tampered.expirationDate = new Date(Date.now() + 900 * 86_400_000).toISOString();
    expect((await execute(app, tampered)).json()[0].result.status).toBe('not-valid');
  });

  it('a credential of another holder fails the holder binding', async () => {
    const results = (await execute(app, demoCredential, OTHER)).json();
    expect(results[0].result.status).toBe('not-valid');
    expect(results[0].result.result.reasons.join(' ')).toMatch(/holder|address/i);
  });

  it('a scenario\'s own trustedIssuers narrow the service list', async () => {
    await app.inject({
      method: 'POST', url: '/compliance/scenarios', headers: auth,
      payload: { id: 'narrow', input: scenario({ trustedIssuers: ['did:iden3:polygon:amoy:xSomeOtherIssuer'] }) },
    });
    const res = await app.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers: auth, payload: { address: HOLDER, credentials: [demoCredential], scenarioId: 'narrow' } });
    expect(res.json()[0].result.status).toBe('not-valid');
    expect(res.json()[0].result.result.reasons.join(' ')).toMatch(/trust/i);
  });
});

describe('trust configuration', () => {
  it('an issuer not in TRUSTED_ISSUERS is not trusted', async () => {
    const app = await appWith({ DEMO_ISSUER: '0' }); // makeApp trusts the demo issuer unless told not to
    try {
      const [r] = (await execute(app, demoCredential)).json();
      expect(r.result.status).toBe('not-valid');
      expect(r.result.result.reasons.join(' ')).toMatch(/trust/i);
    } finally {
      await app.close();
    }
  });

  it('CREDENTIAL_VERIFICATION=off believes the credential and marks every result', async () => {
    const app = await appWith({ CREDENTIAL_VERIFICATION: 'off' });
    try {
      const tampered = structuredClone(demoCredential);
      tampered.credentialSubject.personalData.age = 31;
      const results = (await execute(app, tampered)).json();
      for (const r of results) {
        expect(r.result.status).toBe('valid');
        expect(r.result.verification).toBe('off');
      }
    } finally {
      await app.close();
    }
  });
});

describe('the cold path on execute', () => {
  const many = (n: number) => Array.from({ length: n }, (_, i) => {
    const c = structuredClone(demoCredential);
    c.id = `${c.id}-copy-${i}`;
    return c;
  });
  const executeAll = (app: FastifyInstance, credentials: unknown[]) =>
    app.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers: auth, payload: { address: HOLDER, credentials, scenarioId: 'adult' } });

  it('a credential over a size limit is a 400 naming it and the limit, and nothing is recorded', async () => {
    const app = await appWith({ DEMO_ISSUER: '1', MAX_CREDENTIAL_LEAVES: '64' });
    try {
      const wide = structuredClone(demoCredential);
      wide.credentialSubject.personalData.list = Array.from({ length: 4000 }, (_, i) => i);
      const res = await executeAll(app, [demoCredential, wide]);
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.json()).toMatchObject({ status: 400, code: 'SCS_VALIDATION', detail: expect.stringMatching(/Credential 1 .* too large/) });
      expect(res.json().errors).toEqual([
        { field: 'body.credentials[1]', pointer: '/credentials/1', message: expect.stringMatching(/at most 64 values .*MAX_CREDENTIAL_LEAVES/) },
      ]);
      const list = await app.inject({ method: 'GET', url: '/compliance/scenarios/adult/executions', headers: auth });
      expect(list.json().items ?? list.json()).toHaveLength(0);
    } finally {
      await app.close();
    }
  });

  it("over the token's budget of new credentials: 429 with Retry-After; over the service's queue: 503 with Retry-After", async () => {
    const app = await appWith({ DEMO_ISSUER: '1', COLD_QUEUE_PER_TOKEN: '2', COLD_QUEUE_MAX: '3' });
    try {
      const budget = await executeAll(app, many(3));
      expect(budget.statusCode).toBe(429);
      expect(budget.json()).toMatchObject({ status: 429, code: 'SCS_VERIFICATION_BUDGET' });
      expect(Number(budget.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      // Within the budget it is answered, and known credentials need no budget afterwards.
      expect((await executeAll(app, many(2))).statusCode).toBe(200);
      expect((await executeAll(app, many(2))).statusCode).toBe(200);
      // Two first checks, none waiting: what /metrics says.
      const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
      expect(metrics).toMatch(/^credential_cold_checks_total 2$/m);
      expect(metrics).toMatch(/^credential_cold_queue 0$/m);
    } finally {
      await app.close();
    }
    const small = await appWith({ DEMO_ISSUER: '1', COLD_QUEUE_PER_TOKEN: '10', COLD_QUEUE_MAX: '2' });
    try {
      const full = await executeAll(small, many(3));
      expect(full.statusCode).toBe(503);
      expect(full.json()).toMatchObject({ status: 503, code: 'SCS_VERIFICATION_QUEUE_FULL' });
      expect(Number(full.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    } finally {
      await small.close();
    }
  });

  it('a token at its budget of first checks is refused 429 before its body is read; another token is served meanwhile', async () => {
    const other = 'second-token-0123456789abcdef';
    const app = await makeApp({ CREDENTIAL_VERIFICATION: 'strict', DEMO_ISSUER: '1', VERIFY_THREADS: '1', COLD_QUEUE_PER_TOKEN: '10', API_TOKENS: `${auth.authorization.slice(7)},${other}` });
    try {
      await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'adult', input: scenario() } });
      await app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = app.server.address() as AddressInfo;
      // 10 new credentials (COLD_QUEUE_PER_TOKEN): every slot of the token is taken while they are checked.
      const flood = executeAll(app, many(10));
      const coldQueue = async () => Number(/^credential_cold_queue (\d+)$/m.exec((await app.inject({ method: 'GET', url: '/metrics' })).body)?.[1]);
      for (let i = 0; i < 200 && (await coldQueue()) < 10; i++) await new Promise((r) => setTimeout(r, 10));
      expect(await coldQueue()).toBe(10);
      // Headers and the first bytes of a body that never ends: answered at once, so the body was never waited for.
      const refused = await new Promise<{ status: number; retryAfter?: string; code: string }>((resolve, reject) => {
        const req = http.request({
          host: '127.0.0.1', port, method: 'POST', path: '/compliance/scenarios/execute',
          headers: { ...auth, 'content-type': 'application/json', 'content-length': 100_000 },
        }, (res) => {
          let text = '';
          res.on('data', (d) => { text += d; });
          res.on('end', () => {
            req.destroy();
            resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'], code: JSON.parse(text).code });
          });
        });
        req.on('error', reject);
        req.write('{"address":"');
        setTimeout(() => {
          req.destroy();
          reject(new Error('no answer within 5 s: the body was waited for'));
        }, 5000).unref();
      });
      expect(refused).toMatchObject({ status: 429, code: 'SCS_VERIFICATION_BUDGET' });
      expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
      const served = await app.inject({
        method: 'POST', url: '/compliance/scenarios/execute', headers: { authorization: `Bearer ${other}` },
        payload: { address: HOLDER, credentials: [demoCredential], scenarioId: 'adult' },
      });
      expect(served.statusCode).toBe(200);
      expect((await flood).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  }, 60_000);

  it('a 429 SCS_VERIFICATION_BUDGET is not kept for an Idempotency-Key: a retry is judged anew, with Retry-After', async () => {
    const app = await appWith({ DEMO_ISSUER: '1', COLD_QUEUE_PER_TOKEN: '2' });
    try {
      const send = () => app.inject({
        method: 'POST', url: '/compliance/scenarios/execute', headers: { ...auth, 'idempotency-key': 'budget-1' },
        payload: { address: HOLDER, credentials: many(3), scenarioId: 'adult' },
      });
      expect((await send()).statusCode).toBe(429);
      const again = await send();
      expect(again.statusCode).toBe(429);
      expect(again.headers['idempotent-replayed']).toBeUndefined();
      expect(Number(again.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    } finally {
      await app.close();
    }
  });
});
