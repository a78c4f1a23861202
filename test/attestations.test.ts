/**
 * JWS attestations verified exactly as a dApp backend would: jose's createRemoteJWKSet against the running service's
 * /.well-known/jwks.json, with the typ, and the execution's claims checked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { SignJWT, createLocalJWKSet, createRemoteJWKSet, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, jwtVerify, type JWK, type JWTPayload } from 'jose';
import { ADDRESS, auth, demoCredential, makeApp, scenario, tempDir } from './helpers.js';

const TYPE = 'scs-attestation+jwt';

async function privateJwk(alg: 'ES256' | 'EdDSA', kid: string): Promise<JWK> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' && { crv: 'Ed25519' }) });
  return { ...(await exportJWK(privateKey)), kid, alg };
}

async function started(env: Record<string, string>): Promise<{ app: FastifyInstance; url: string }> {
  const app = await makeApp(env);
  await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'adult', input: scenario() } });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url };
}

// Demo-issuer credentials: the service verifies them (makeApp runs with verification on), so `passed` means passed.
const body = async (overrides: Record<string, unknown> = {}) => ({ address: ADDRESS, credentials: [await demoCredential()], scenarioId: 'adult', ...overrides });

async function attest(app: FastifyInstance, given?: Record<string, unknown>) {
  const payload = given ?? await body();
  const res = await app.inject({ method: 'POST', url: '/compliance/scenarios/execute?attest=jws', headers: auth, payload });
  expect(res.statusCode).toBe(200);
  const jws = res.headers.attestation;
  expect(typeof jws).toBe('string');
  return { jws: jws as string, results: res.json() as { executionId: string }[] };
}

describe('JWS attestations', () => {
  let oldKey: JWK;
  let newKey: JWK;
  let first: { app: FastifyInstance; url: string };

  beforeAll(async () => {
    oldKey = await privateJwk('ES256', 'k-2026-01');
    newKey = await privateJwk('EdDSA', 'k-2026-02');
    first = await started({ ATTESTATION_JWKS: JSON.stringify({ keys: [oldKey] }) });
  });
  afterAll(async () => first?.app.close());

  it('verifies with the service\'s JWKS and carries the execution\'s ids, verdict, rules and digests', async () => {
    const cred = await demoCredential();
    const { jws, results } = await attest(first.app, await body({ credentials: [cred] }));
    const keys = createRemoteJWKSet(new URL(`${first.url}/.well-known/jwks.json`));
    const { payload, protectedHeader } = await jwtVerify(jws, keys, { typ: TYPE, algorithms: ['ES256', 'EdDSA'] });
    expect(protectedHeader).toMatchObject({ alg: 'ES256', kid: 'k-2026-01', typ: TYPE });
    const record = (await first.app.inject({ method: 'GET', url: `/compliance/executions/${results[0]?.executionId}`, headers: auth })).json();
    expect(record.verdict).toBe('passed');
    const scenarioRow = (await first.app.inject({ method: 'GET', url: '/compliance/scenarios/adult', headers: auth })).json();
    expect(payload).toMatchObject({
      executionId: results[0]?.executionId,
      jti: results[0]?.executionId,
      projectId: null,
      scenarioId: 'adult',
      scenarioRevision: scenarioRow.revision,
      address: ADDRESS,
      sub: ADDRESS,
      verdict: 'passed',
      rules: [{ id: 'q-kyc', status: 'valid' }, { id: 'q-age', status: 'valid' }],
      credentials: [record.credentials[0].sha256],
      // REQUIRE_HOLDER_BINDING is off (the default): a credential that encodes no address would be valid for any.
      holderBound: false,
      credentialsVerified: true,
    });
    expect(payload.scenarioDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(payload.exp! - payload.iat!).toBe(600);
  });

  it('says failed for a failing address, and carries no credential value', async () => {
    const cred = await demoCredential({ personalData: { firstName: 'Zebedee', lastName: 'Quux', age: 12, birthDate: 20140101 } });
    const { jws } = await attest(first.app, await body({ credentials: [cred] }));
    const { payload } = await jwtVerify(jws, createRemoteJWKSet(new URL(`${first.url}/.well-known/jwks.json`)), { typ: TYPE });
    expect(payload.verdict).toBe('failed');
    expect(payload.rules).toEqual([{ id: 'q-kyc', status: 'valid' }, { id: 'q-age', status: 'not-valid' }]);
    const text = Buffer.from(jws.split('.')[1]!, 'base64url').toString();
    for (const value of ['Zebedee', 'Quux', '20140101', cred.id, cred.issuer, cred.credentialSubject.id]) expect(text).not.toContain(value);
  });

  it('refuses a tampered payload', async () => {
    const { jws } = await attest(first.app);
    const [h, p, s] = jws.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, verdict: 'passed', address: '0x0000000000000000000000000000000000000001' })).toString('base64url')}.${s}`;
    const keys = createLocalJWKSet(await (await fetch(`${first.url}/.well-known/jwks.json`)).json());
    await expect(jwtVerify(forged, keys, { typ: TYPE })).rejects.toThrow(/signature verification failed/);
  });

  it('refuses a JWS of another key with the same kid', async () => {
    const stranger = await importJWK(await privateJwk('ES256', 'k-2026-01'), 'ES256');
    const forged = await new SignJWT({ verdict: 'passed' }).setProtectedHeader({ alg: 'ES256', kid: 'k-2026-01', typ: TYPE }).sign(stranger);
    const keys = createLocalJWKSet(await (await fetch(`${first.url}/.well-known/jwks.json`)).json());
    await expect(jwtVerify(forged, keys, { typ: TYPE })).rejects.toThrow(/signature verification failed/);
  });

  it('after a rotation, signs with the new kid and an attestation of the old key still verifies', async () => {
    const { jws: old } = await attest(first.app);
    // The rotated service: the new key first, the old one published after it (its private part is not used).
    const second = await started({ ATTESTATION_JWKS: JSON.stringify({ keys: [newKey, oldKey] }) });
    try {
      const { jws: fresh } = await attest(second.app);
      expect(decodeProtectedHeader(fresh)).toMatchObject({ alg: 'EdDSA', kid: 'k-2026-02' });
      const jwks = await (await fetch(`${second.url}/.well-known/jwks.json`)).json() as { keys: JWK[] };
      expect(jwks.keys.map((k) => k.kid)).toEqual(['k-2026-02', 'k-2026-01']);
      expect(jwks.keys.every((k) => k.d === undefined)).toBe(true);
      const keys = createRemoteJWKSet(new URL(`${second.url}/.well-known/jwks.json`));
      expect((await jwtVerify(old, keys, { typ: TYPE })).protectedHeader.kid).toBe('k-2026-01');
      expect((await jwtVerify(fresh, keys, { typ: TYPE })).protectedHeader.kid).toBe('k-2026-02');
    } finally {
      await second.app.close();
    }
  });

  it('signs again on GET /compliance/executions/{id}/attestation, and 409 once the scenario changed', async () => {
    const { results } = await attest(first.app);
    const url = `/compliance/executions/${results[0]?.executionId}/attestation`;
    const res = await first.app.inject({ method: 'GET', url, headers: auth });
    expect(res.statusCode).toBe(200);
    const { payload } = await jwtVerify(res.json().jws, createRemoteJWKSet(new URL(`${first.url}/.well-known/jwks.json`)), { typ: TYPE });
    expect(payload.executionId).toBe(results[0]?.executionId);
    const patched = await first.app.inject({ method: 'PATCH', url: '/compliance/scenarios/adult', headers: { ...auth, 'content-type': 'application/merge-patch+json' }, payload: { input: { description: 'changed' } } });
    expect(patched.statusCode, patched.body).toBe(200);
    const after = await first.app.inject({ method: 'GET', url, headers: auth });
    expect(after.statusCode).toBe(409);
    expect(after.json().code).toBe('SCS_SCENARIO_CHANGED');
  });
  it('refuses a verifyingContract whose mixed case is not its EIP-55 checksum with a 400 naming it (found by the fuzzer as a 500)', async () => {
    const { results } = await attest(first.app);
    const bad = '0x9FDcCdDD32dCbfFc561dB2aBA1a7E3d7aE1FEEcB';
    const res = await first.app.inject({ method: 'GET', url: `/compliance/executions/${results[0]?.executionId}/attestation?chainId=1&verifyingContract=${bad}`, headers: auth });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'querystring.verifyingContract' })]));
  });
});

describe('attestations say whether the holder was bound and the credentials verified (issue 36)', () => {
  /** A subject DID that encodes no address. */
  const KEY_DID = 'did:example:holder-without-an-address';
  const eip712 = '&chainId=1&verifyingContract=0x5FbDB2315678afecb367f032d93F642f64180aa3';
  const execute = (app: FastifyInstance, query: string, payload: Record<string, unknown>) =>
    app.inject({ method: 'POST', url: `/compliance/scenarios/execute?${query}`, headers: auth, payload });
  const claimsOf = (jws: unknown) => JSON.parse(Buffer.from(String(jws).split('.')[1]!, 'base64url').toString());

  it('REQUIRE_HOLDER_BINDING=false: one credential encoding no address passes two addresses, each JWS says holderBound false, and EIP-712 is refused with a 400 naming attest', async () => {
    const { app } = await started({});
    try {
      const cred = await demoCredential({}, { subjectId: KEY_DID });
      for (const address of ['0x1111111111111111111111111111111111111111', '0x2222222222222222222222222222222222222222']) {
        const res = await execute(app, 'attest=jws', { address, credentials: [cred], scenarioId: 'adult' });
        expect(res.statusCode, res.body).toBe(200);
        expect(claimsOf(res.headers.attestation)).toMatchObject({ address, verdict: 'passed', holderBound: false, credentialsVerified: true });
        const refused = await execute(app, `attest=jws,eip712${eip712}`, { address, credentials: [cred], scenarioId: 'adult' });
        expect(refused.statusCode, refused.body).toBe(400);
        expect(refused.json().errors).toEqual([expect.objectContaining({ field: 'querystring.attest', message: expect.stringContaining('REQUIRE_HOLDER_BINDING=true') })]);
        expect(refused.headers.attestation).toBeUndefined();
        const { executionId } = res.json()[0];
        // Refused whole: the audit log holds only the execute that was answered.
        const log = await app.inject({ method: 'GET', url: '/compliance/scenarios/adult/executions', headers: auth });
        expect(log.json().items[0].executionId).toBe(executionId);
        const again = await app.inject({ method: 'GET', url: `/compliance/executions/${executionId}/attestation?${eip712.slice(1)}`, headers: auth });
        expect(again.statusCode, again.body).toBe(400);
        expect(again.json().errors[0].field).toBe('querystring.attest');
      }
    } finally {
      await app.close();
    }
  });

  it('REQUIRE_HOLDER_BINDING=true: the JWS says holderBound true, EIP-712 is given, and the credential encoding no address is not-valid', async () => {
    const { app } = await started({ REQUIRE_HOLDER_BINDING: 'true' });
    try {
      const res = await execute(app, `attest=jws,eip712${eip712}`, await body());
      expect(res.statusCode, res.body).toBe(200);
      expect(claimsOf(res.headers.attestation)).toMatchObject({ verdict: 'passed', holderBound: true, credentialsVerified: true });
      expect(res.headers['attestation-eip712']).toEqual(expect.any(String));
      const unbound = await execute(app, 'attest=jws', await body({ credentials: [await demoCredential({}, { subjectId: KEY_DID })] }));
      expect(claimsOf(unbound.headers.attestation).verdict).toBe('failed');
    } finally {
      await app.close();
    }
  });

  it('keeps holderBound as it was when the execution ran: with binding turned on since, a re-signed JWS still says false and EIP-712 is refused', async () => {
    const dir = tempDir();
    let executionId: string;
    const before = await started({ DATA_DIR: dir });
    try {
      const cred = await demoCredential({}, { subjectId: KEY_DID });
      const res = await execute(before.app, 'attest=jws', { address: '0x1111111111111111111111111111111111111111', credentials: [cred], scenarioId: 'adult' });
      expect(claimsOf(res.headers.attestation)).toMatchObject({ verdict: 'passed', holderBound: false });
      executionId = res.json()[0].executionId;
    } finally {
      await before.app.close();
    }
    // The same database, now with REQUIRE_HOLDER_BINDING=true (an operator following the advice, or another instance).
    const after = await started({ DATA_DIR: dir, REQUIRE_HOLDER_BINDING: 'true' });
    try {
      const url = `/compliance/executions/${executionId}/attestation`;
      const refused = await after.app.inject({ method: 'GET', url: `${url}?${eip712.slice(1)}`, headers: auth });
      expect(refused.statusCode, refused.body).toBe(400);
      expect(refused.json().errors[0].field).toBe('querystring.attest');
      const again = await after.app.inject({ method: 'GET', url, headers: auth });
      expect(again.statusCode, again.body).toBe(200);
      expect(claimsOf(again.json().jws)).toMatchObject({ executionId, verdict: 'passed', holderBound: false });
    } finally {
      await after.app.close();
    }
  });

  it('CREDENTIAL_VERIFICATION=off: a forged credential\'s passed JWS says credentialsVerified false, and EIP-712 is refused with a 400 naming attest', async () => {
    const { app } = await started({ CREDENTIAL_VERIFICATION: 'off', REQUIRE_HOLDER_BINDING: 'true' });
    try {
      const forged = { ...(await demoCredential()), proof: { type: 'BJJSignature2021', signature: 'forged' } };
      const res = await execute(app, 'attest=jws', await body({ credentials: [forged] }));
      expect(res.statusCode, res.body).toBe(200);
      expect(claimsOf(res.headers.attestation)).toMatchObject({ verdict: 'passed', holderBound: true, credentialsVerified: false });
      const logged = async () => (await app.inject({ method: 'GET', url: '/compliance/scenarios/adult/executions', headers: auth })).json().items.length;
      const before = await logged();
      const refused = await execute(app, `attest=eip712${eip712}`, await body({ credentials: [forged] }));
      expect(refused.statusCode, refused.body).toBe(400);
      expect(refused.json().errors).toEqual([expect.objectContaining({ field: 'querystring.attest', message: expect.stringContaining('CREDENTIAL_VERIFICATION=off') })]);
      // Refused before the scenario ran: nothing was recorded.
      expect(await logged()).toBe(before);
    } finally {
      await app.close();
    }
  });
});

describe('GET …/attestation after the scenario was deleted and created again under its id (issue 36)', () => {
  it('answers 409 SCS_SCENARIO_CHANGED for an execution of the deleted scenario, though the new one is at its revision', async () => {
    // One second per step on the service's clock: the steps never share a millisecond.
    let clock = Date.now();
    const app = await makeApp({}, { now: () => (clock += 1000) });
    try {
      const create = (input: Record<string, unknown>) => app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'again', input } });
      expect((await create(scenario())).statusCode).toBe(201);
      const { results } = await attest(app, await body({ scenarioId: 'again' }));
      const url = `/compliance/executions/${results[0]?.executionId}/attestation`;
      expect((await app.inject({ method: 'GET', url, headers: auth })).statusCode).toBe(200);
      expect((await app.inject({ method: 'DELETE', url: '/compliance/scenarios/again', headers: auth })).statusCode).toBe(204);
      // Created again with a rule the old credential does not meet: a fresh execute of it fails.
      const [kyc, age] = scenario().queryConfigurations;
      const strict = scenario({ queryConfigurations: [kyc, { ...age, query: { ...age!.query, value: 99 } }] });
      const recreated = await create(strict);
      expect(recreated.json().revision).toBe(1);
      const { jws: fresh } = await attest(app, await body({ scenarioId: 'again' }));
      expect(JSON.parse(Buffer.from(fresh.split('.')[1]!, 'base64url').toString()).verdict).toBe('failed');
      const res = await app.inject({ method: 'GET', url, headers: auth });
      expect(res.statusCode, res.body).toBe(409);
      expect(res.json()).toMatchObject({ code: 'SCS_SCENARIO_CHANGED', detail: expect.stringContaining('is not the one that ran') });
      expect(res.body).not.toContain('eyJ');
    } finally {
      await app.close();
    }
  });
});

describe('GET …/attestation after the scenario was deleted and created again within the same millisecond', () => {
  it('answers 409: the record keeps the digest of the revision that ran, so no clock is needed to tell the two apart', async () => {
    const fixed = Date.now();
    const app = await makeApp({}, { now: () => fixed });
    try {
      const create = (input: Record<string, unknown>) => app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'same-ms', input } });
      expect((await create(scenario())).statusCode).toBe(201);
      const { results } = await attest(app, await body({ scenarioId: 'same-ms' }));
      const url = `/compliance/executions/${results[0]?.executionId}/attestation`;
      expect((await app.inject({ method: 'DELETE', url: '/compliance/scenarios/same-ms', headers: auth })).statusCode).toBe(204);
      const [kyc, age] = scenario().queryConfigurations;
      expect((await create(scenario({ queryConfigurations: [kyc, { ...age, query: { ...age!.query, value: 99 } }] }))).json().revision).toBe(1);
      const res = await app.inject({ method: 'GET', url, headers: auth });
      expect(res.statusCode, res.body).toBe(409);
      expect(res.json().code).toBe('SCS_SCENARIO_CHANGED');
    } finally {
      await app.close();
    }
  });
});

describe('JWS attestations of two projects with a scenario of the same id (issue 36)', () => {
  it('name their project: a backend checking projectId refuses the other project\'s', async () => {
    const tokens = { a: 'token-of-project-a-0123456789', b: 'token-of-project-b-0123456789' };
    const { app, url } = await started({ API_TOKENS: `${tokens.a}:proj-a,${tokens.b}:proj-b` });
    try {
      const keys = createRemoteJWKSet(new URL(`${url}/.well-known/jwks.json`));
      const claims: JWTPayload[] = [];
      for (const [project, token] of [['proj-a', tokens.a], ['proj-b', tokens.b]] as const) {
        const headers = { authorization: `Bearer ${token}` };
        const created = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers, payload: { id: 'kyc', input: scenario({ projectId: project }) } });
        expect(created.statusCode, created.body).toBe(201);
        const res = await app.inject({ method: 'POST', url: '/compliance/scenarios/execute?attest=jws', headers, payload: await body({ scenarioId: 'kyc' }) });
        expect(res.statusCode, res.body).toBe(200);
        claims.push((await jwtVerify(String(res.headers.attestation), keys, { typ: TYPE })).payload);
      }
      expect(claims.map((c) => [c.projectId, c.scenarioId, c.verdict])).toEqual([['proj-a', 'kyc', 'passed'], ['proj-b', 'kyc', 'passed']]);
      // The README's backend check, as project A's backend runs it: its own project's attestation passes, B's does not.
      const backendOfA = (c: JWTPayload) => c.verdict === 'passed' && c.address === ADDRESS && c.credentialsVerified === true &&
        c.projectId === 'proj-a' && c.scenarioId === 'kyc';
      expect(claims.map(backendOfA)).toEqual([true, false]);
    } finally {
      await app.close();
    }
  });
});

describe('attestation keys', () => {
  it('without keys outside development, asking for an attestation is a 400 naming querystring.attest, and the JWKS is empty', async () => {
    const { app, url } = await started({ CREDENTIAL_VERIFICATION: 'strict', DEMO_ISSUER: '0' });
    try {
      const res = await app.inject({ method: 'POST', url: '/compliance/scenarios/execute?attest=jws', headers: auth, payload: await body() });
      expect(res.statusCode).toBe(400);
      expect(res.json().errors[0].field).toBe('querystring.attest');
      expect(await (await fetch(`${url}/.well-known/jwks.json`)).json()).toEqual({ keys: [] });
    } finally {
      await app.close();
    }
  });

  it('in development (DEMO_ISSUER=1, as the test app starts), a key is made at start and its attestations verify', async () => {
    const { app, url } = await started({});
    try {
      const { jws } = await attest(app);
      const { protectedHeader } = await jwtVerify(jws, createRemoteJWKSet(new URL(`${url}/.well-known/jwks.json`)), { typ: TYPE });
      expect(protectedHeader.alg).toBe('EdDSA');
    } finally {
      await app.close();
    }
  });

  it('an execute without ?attest answers no attestation header', async () => {
    const { app } = await started({});
    try {
      const res = await app.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers: auth, payload: await body() });
      expect(res.statusCode).toBe(200);
      expect(res.headers.attestation).toBeUndefined();
    } finally {
      await app.close();
    }
  });
});
