import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ADDRESS, DAY, auth, credential, demoCredential, makeApp, scenario } from './helpers.js';
import { haveIden3Documents } from './shared-fixtures.js';

let app: FastifyInstance;
beforeEach(async () => {
  app = await makeApp();
  await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'adult', input: scenario() } });
});
afterEach(async () => {
  await app.close();
});

const execute = (body: unknown, headers: Record<string, string> = auth) =>
  app.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers, payload: body as object });

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** An execution's id: a UUID of version 7, time-ordered (src/domain/ids.ts). */
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('POST /compliance/scenarios/execute', () => {
  it('answers one result per rule, in order, in the shape the platform client parses', async () => {
    const res = await execute({ address: ADDRESS, credentials: [await demoCredential()], scenarioId: 'adult' });
    expect(res.statusCode).toBe(200);
    const results = res.json();
    expect(results).toHaveLength(2);
    const executionId = results[0].executionId;
    expect(executionId).toMatch(UUID_V7);
    expect(results.map((r: any) => r.objectId)).toEqual(['q-kyc', 'q-age']);
    for (const r of results) {
      expect(r).toEqual({
        objectType: 'ChallengeQuery',
        objectId: expect.any(String),
        name: 'Adult KYC',
        address: ADDRESS,
        scenarioId: 'adult',
        executionId,
        result: {
          result: { is_valid: true, reasons: [] },
          executionId,
          status: 'valid',
          query: scenario().queryConfigurations.find((q) => q.id === r.objectId)!.query,
        },
      });
    }
  });

  it('gives each call its own executionId, in increasing order (the audit indexes append rather than scatter)', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await execute({ address: ADDRESS, credentials: [], scenarioId: 'adult' })).json()[0].executionId);
    }
    expect(new Set(ids).size).toBe(5);
    expect([...ids].sort()).toEqual(ids);
  });

  it('answers not-valid with reasons when the credential fails, without echoing personal values', async () => {
    const minor = await demoCredential({ reviewAnswer: 'RED', personalData: { firstName: 'Zebulon', age: 16 } });
    const results = (await execute({ address: ADDRESS, credentials: [minor], scenarioId: 'adult' })).json();
    for (const r of results) {
      expect(r.result.status).toBe('not-valid');
      expect(r.result.result.is_valid).toBe(false);
      expect(r.result.result.reasons.length).toBeGreaterThan(0);
    }
    const text = JSON.stringify(results);
    expect(text).not.toContain('Zebulon');
    expect(text).not.toContain('RED');
    expect(results[1].result.result.reasons.join(' ')).toContain('personalData.age');
  });

  it('does not count an expired credential', async () => {
    const expired = await demoCredential({}, { issuanceDate: new Date(Date.now() - 2 * DAY), expirationDate: new Date(Date.now() - DAY) });
    const results = (await execute({ address: ADDRESS, credentials: [expired], scenarioId: 'adult' })).json();
    expect(results.map((r: any) => r.result.result.is_valid)).toEqual([false, false]);
    expect(results[0].result.result.reasons.join(' ')).toMatch(/expired/);
  });

  it('accepts the address as an object and answers with its string', async () => {
    const res = await execute({ address: { address: ADDRESS, namespace: 'eip155', chain: 'eip155:1' }, credentials: [await demoCredential()], scenarioId: 'adult' });
    expect(res.statusCode).toBe(200);
    expect(res.json()[0].address).toBe(ADDRESS);
  });

  it('refuses a mixed-case address with a bad EIP-55 checksum naming body.address', async () => {
    const bad = ADDRESS.replace('aA', 'Aa');
    const res = await execute({ address: bad, credentials: [], scenarioId: 'adult' });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].field).toBe('body.address');
    const res2 = await execute({ address: { address: bad }, credentials: [], scenarioId: 'adult' });
    expect(res2.json().errors[0].field).toBe('body.address.address');
  });

  it('says what the address must be, and only what applies to the value sent', async () => {
    const cases: [unknown, string, string][] = [
      [5, '/address', 'must be string or object'],
      [{}, '/address/address', 'is required'],
      [{ address: 5 }, '/address/address', 'must be string'],
    ];
    for (const [address, pointer, message] of cases) {
      const res = await execute({ address, credentials: [], scenarioId: 'adult' });
      expect(res.statusCode).toBe(400);
      expect(res.json().errors, JSON.stringify(address)).toEqual([{ field: `body${pointer.replace(/\//g, '.')}`, pointer, message }]);
    }
  });

  it('answers 404 for an unknown scenario', async () => {
    const res = await execute({ address: ADDRESS, credentials: [], scenarioId: 'missing' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/problem\+json/);
    expect(res.json().code).toBe('SCS_SCENARIO_NOT_FOUND');
  });

  it('names each missing required credential field', async () => {
    for (const field of ['id', '@context', 'type', 'issuanceDate', 'credentialSubject', 'credentialStatus', 'issuer', 'credentialSchema', 'proof']) {
      const c: Record<string, unknown> = credential();
      delete c[field];
      const res = await execute({ address: ADDRESS, credentials: [credential(), c], scenarioId: 'adult' });
      expect(res.statusCode, field).toBe(400);
      expect(res.json().errors.map((e: any) => e.field)).toContain(`body.credentials.1.${field}`);
    }
    for (const field of ['id', 'type', 'revocationNonce']) {
      const c = credential();
      delete (c.credentialStatus as Record<string, unknown>)[field];
      const res = await execute({ address: ADDRESS, credentials: [c], scenarioId: 'adult' });
      expect(res.json().errors.map((e: any) => e.field)).toContain(`body.credentials.0.credentialStatus.${field}`);
    }
  });

  it('accepts a credential without expirationDate, as never expiring (the contract lists it; W3C and iden3 do not require it)', async () => {
    const c = await demoCredential({}, { expirationDate: null });
    expect(c.expirationDate).toBeUndefined();
    const res = await execute({ address: ADDRESS, credentials: [c], scenarioId: 'adult' });
    expect(res.statusCode).toBe(200);
    expect(res.json().map((r: any) => r.result.status)).toEqual(['valid', 'valid']);
  });

  it('names missing top-level fields', async () => {
    const res = await execute({ credentials: [] });
    expect(res.statusCode).toBe(400);
    const fields = res.json().errors.map((e: any) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['body.address', 'body.scenarioId']));
  });

  it('refuses a credential date that is not RFC 3339', async () => {
    const res = await execute({ address: ADDRESS, credentials: [credential({ expirationDate: 'next tuesday' })], scenarioId: 'adult' });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors.map((e: any) => e.field)).toContain('body.credentials.0.expirationDate');
  });

  it('sees a PATCH at once: the compiled plan follows the revision', async () => {
    const signed = await demoCredential();
    const before = (await execute({ address: ADDRESS, credentials: [signed], scenarioId: 'adult' })).json();
    expect(before[1].result.status).toBe('valid');
    await app.inject({
      method: 'PATCH', url: '/compliance/scenarios/adult', headers: auth,
      payload: { input: { queryConfigurations: [{ id: 'q-age', query: { type: 'IDInformation', attribute: 'personalData.age', value: 65, operator: '$gte' } }] } },
    });
    const after = (await execute({ address: ADDRESS, credentials: [signed], scenarioId: 'adult' })).json();
    expect(after).toHaveLength(1);
    expect(after[0].result.status).toBe('not-valid');
  });

  it('answers status "error", never a pass, for an OnChainZKP scenario with no deployment to read', async () => {
    for (const type of ['OnChainZKP']) {
      const id = `zkp-${type}`;
      const queryConfigurations = [
        { id: 'q-kyc', query: { type: 'IDInformation', requestId: 1, attribute: 'reviewAnswer', value: 'GREEN', operator: '$eq' } },
        { id: 'q-age', query: { type: 'IDInformation', requestId: 2, attribute: 'personalData.age', value: 17, operator: '$gt' } },
      ];
      const input = scenario({ type, queryConfigurations });
      const created = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id, input } });
      expect(created.statusCode).toBe(201);
      const results = (await execute({ address: ADDRESS, credentials: [await demoCredential()], scenarioId: id })).json();
      expect(results).toHaveLength(2);
      for (const r of results) {
        expect(r.objectType).toBe(type);
        expect(r.result.status).toBe('error');
        expect(r.result.result.is_valid).toBe(false);
        expect(r.result.result.reasons.join(' ')).toMatch(/no usable smart contract deployment/);
      }
    }
  });

  it.skipIf(!haveIden3Documents())('answers status "error", never a pass, for an OffChainZKP scenario when no verifier DID is configured', async () => {
    const input = scenario({
      type: 'OffChainZKP',
      queryConfigurations: [{ id: 'q', query: { type: 'KYCAgeCredential', requestId: 1, attribute: 'birthday', value: 20000101, operator: '$lt', context: 'https://raw.githubusercontent.com/iden3/claim-schema-vocab/main/schemas/json-ld/kyc-v3.json-ld' } }],
    });
    const created = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'offchain', input } });
    expect(created.statusCode, created.body).toBe(201);
    const [r] = (await execute({ address: ADDRESS, credentials: [await demoCredential()], scenarioId: 'offchain' })).json();
    expect(r.result.status).toBe('error');
    expect(r.result.result.is_valid).toBe(false);
    expect(r.result.result.reasons.join(' ')).toMatch(/ZKP_VERIFIER_DID/);
  });

  it('honours x-request-id and makes one when it is missing or unsafe', async () => {
    const res = await execute({ address: ADDRESS, credentials: [], scenarioId: 'adult' }, { ...auth, 'x-request-id': 'req-123' });
    expect(res.headers['x-request-id']).toBe('req-123');
    const res2 = await execute({ address: ADDRESS, credentials: [], scenarioId: 'adult' }, { ...auth, 'x-request-id': 'bad id\nwith newline' });
    expect(res2.headers['x-request-id']).toMatch(UUID_V4);
  });
});
