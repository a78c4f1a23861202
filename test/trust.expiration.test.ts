/**
 * Credentials without `expirationDate` through HTTP: the contract's table lists the field, W3C and iden3 make it
 * optional, and real Privado ID credentials omit it. Such a credential gets past the request schema and is judged on
 * its proof, as never expiring; an expiry the issuer signed cannot be dropped to make a credential last longer.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createDemoIssuer } from '../src/trust/demo-issuer.js';
import type { FetchLike } from '../src/trust/http.js';
import { auth, makeApp, scenario } from './helpers.js';
import { haveSharedFixtures, sharedFixture } from './shared-fixtures.js';

const HOLDER = '0x52908400098527886E0F7030069857D2E4169EE7';
const PRIVADO = sharedFixture('realworld/credentials/privado-testing-operators-bjj.json');
const DOCUMENTS = sharedFixture('realworld/jsonld-documents.json');
const haveFixtures = haveSharedFixtures('realworld/credentials/privado-testing-operators-bjj.json', 'realworld/jsonld-documents.json');

/** Offline, as the machines that run these tests are: a host other than 127.0.0.1 does not resolve. */
const offline: FetchLike = (url, init) => new URL(url).hostname === '127.0.0.1'
  ? fetch(url, init)
  : Promise.reject(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ENOTFOUND' } }));

const execute = (app: FastifyInstance, scenarioId: string, credential: unknown, address = HOLDER) =>
  app.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers: auth, payload: { address, credentials: [credential], scenarioId } });

describe.skipIf(!haveFixtures)('a real Privado ID credential without expirationDate (privado-testing-operators-bjj.json)', () => {
  let app: FastifyInstance;
  let privado: Record<string, any>;
  beforeAll(async () => {
    privado = JSON.parse(readFileSync(PRIVADO, 'utf8'));
    app = await makeApp({ CREDENTIAL_VERIFICATION: 'strict', TRUSTED_ISSUERS: privado.issuer, JSONLD_DOCUMENTS_FILE: DOCUMENTS }, { trust: { fetch: offline } });
    const operators = scenario({
      queryConfigurations: [{ id: 'q-int', query: { type: 'operators', requestId: 1, attribute: 'integer1', value: 1000, operator: '$gt' } }],
    });
    await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'operators', input: operators } });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
  });

  it('gets past the request schema (on main: 400, expirationDate required) and is judged on its proof', async () => {
    expect(privado).not.toHaveProperty('expirationDate');
    const res = await execute(app, 'operators', privado);
    expect(res.statusCode).toBe(200);
    // Its BJJ proof (genesis issuer state) verifies; its Iden3commRevocationStatusV1.0 agent cannot be reached
    // offline, so whether it is revoked cannot be told: `error`, never `valid`, and not `not-valid` either.
    const [r] = res.json();
    expect(r.result.status).toBe('error');
    expect(r.result.result.reasons.join(' ')).toMatch(/credentialStatus \(Iden3commRevocationStatusV1\.0 at https:\/\/issuer-node-core-api-testing\.privado\.id\/v2\/agent\) cannot be resolved: host name not resolved/);
  });

  it('with one subject value changed, is refused on its proof', async () => {
    const changed = structuredClone(privado);
    changed.credentialSubject.integer1 = 5343;
    const [r] = (await execute(app, 'operators', changed)).json();
    expect(r.result.status).toBe('not-valid');
    expect(r.result.result.reasons.join(' ')).toMatch(/proof|claim/i);
  });
});

describe('a credential issued without expirationDate (demo issuer, js-sdk)', () => {
  let app: FastifyInstance;
  let timeless: Record<string, any>;
  let expiring: Record<string, any>;
  beforeAll(async () => {
    const issuer = await createDemoIssuer({ statusUrl: 'http://127.0.0.1:3000/demo-issuer/status' });
    const base = {
      subjectId: `did:pkh:eip155:1:${HOLDER}`,
      claims: { reviewAnswer: 'GREEN', personalData: { firstName: 'Alice', age: 30, citizenship: 'FRA' } },
      issuanceDate: new Date(Date.now() - 60_000),
    };
    timeless = await issuer.issue({ ...base, nonce: 7001, expirationDate: null });
    expiring = await issuer.issue({ ...base, nonce: 7002, expirationDate: new Date(Date.now() + 86_400_000) });
    app = await makeApp({ CREDENTIAL_VERIFICATION: 'strict', DEMO_ISSUER: '1' });
    await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'adult', input: scenario() } });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
  });

  it('is valid, as never expiring', async () => {
    expect(timeless).not.toHaveProperty('expirationDate');
    expect((await execute(app, 'adult', timeless)).json().map((r: any) => r.result.status)).toEqual(['valid', 'valid']);
  });

  it('an expirationDate its issuer signed cannot be removed: the proof no longer matches', async () => {
    expect((await execute(app, 'adult', expiring)).json()[0].result.status).toBe('valid');
    const dropped = structuredClone(expiring);
    delete dropped.expirationDate;
    const [r] = (await execute(app, 'adult', dropped)).json();
    expect(r.result.status).toBe('not-valid');
    expect(r.result.result.reasons.join(' ')).toMatch(/proof|claim/i);
  });
});
