/** Credential trust through HTTP: real credentials from the demo issuer (js-sdk), verified in strict mode. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createDemoIssuer } from '../src/trust/demo-issuer.js';
import { auth, makeApp, scenario } from './helpers.js';

const HOLDER = '0x52908400098527886E0F7030069857D2E4169EE7';
const OTHER = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
let demoCredential: Record<string, any>;

beforeAll(async () => {
  const issuer = await createDemoIssuer({ statusUrl: 'http://127.0.0.1:3000/demo-issuer/status' });
  demoCredential = await issuer.issue({
    subjectId: `did:pkh:eip155:1:${HOLDER}`,
    claims: { reviewAnswer: 'GREEN', personalData: { firstName: 'Alice', age: 30, citizenship: 'FRA' } },
    issuanceDate: new Date(Date.now() - 60_000),
    expirationDate: new Date(Date.now() + 30 * 86_400_000),
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
    const app = await appWith({});
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
