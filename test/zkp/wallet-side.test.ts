/**
 * The service's V3 and linked authorization requests as a js-sdk wallet (@0xpolygonid/js-sdk 1.45, the wallet side:
 * AuthHandler, its package manager and the helpers its request handling calls) reads them: it parses the request,
 * picks authV3-8-32 for the answer, supports each scope entry's circuit and operators, merges a group's queries into the
 * one credential query it searches its wallet with, and picks linkedMultiQuery3/5/10 by the count of conditions.
 * What is not run: finding a credential and proving (no credential wallet, no proving keys offline). The ZKP packer
 * is given the auth circuits a wallet proves with; its proving functions are never called (they throw if they were).
 */
import * as sdkNs from '@0xpolygonid/js-sdk';
import { describe, expect, it } from 'vitest';
import { buildAuthorizationRequest, type AuthorizationRequest, type ZkpQueryConfiguration } from '../../src/zkp/index.js';
import { VERIFIER_DID, requestSettings } from './fixtures.js';

interface Sdk {
  AuthHandler: new (packer: unknown, proofService: unknown) => { parseAuthorizationRequest(bytes: Uint8Array): Promise<AuthorizationRequest> };
  PackageManager: new () => { registerPackers(p: unknown[]): void; isProfileSupported(env: string, profile: string): boolean };
  PlainPacker: new () => unknown;
  ZKPPacker: new (proving: Map<string, unknown>, verification: Map<string, unknown>) => unknown;
  getDefaultZKProvingMethodAlg(mgr: unknown, preferred: unknown, accept?: string[]): { alg: string; circuitId: string };
  getGroupedQueries(scope: unknown[]): Map<number, { query: { credentialSubject: Record<string, unknown>; type: string } }>;
  CircuitId: Record<string, string>;
  QueryOperators: Record<string, number>;
  circuitValidator: Record<string, { validation: { maxQueriesCount: number; supportedOperations: number[] } }>;
}
const sdk = sdkNs as unknown as Sdk;
const KYC_V3 = 'https://raw.githubusercontent.com/iden3/claim-schema-vocab/main/schemas/json-ld/kyc-v3.json-ld';
const age = { type: 'KYCAgeCredential', context: KYC_V3 };
const rule = (id: string, query: Record<string, unknown>): ZkpQueryConfiguration => ({ id, query: query as ZkpQueryConfiguration['query'] });

function wallet(authCircuits = ['authV2', 'authV3', 'authV3-8-32']) {
  const never = { dataPreparer: { prepare: () => { throw new Error('no proving offline'); } }, provingMethod: {} };
  const proving = new Map(authCircuits.map((c) => [`groth16:${c}`, never]));
  const packer = new sdk.PackageManager();
  packer.registerPackers([new sdk.PlainPacker(), new sdk.ZKPPacker(proving, new Map())]);
  return { packer, handler: new sdk.AuthHandler(packer, {}) };
}

const { request } = buildAuthorizationRequest([
  rule('q-adult', { ...age, requestId: 1, attribute: 'birthday', operator: '$lte', value: 20080101, circuitId: 'credentialAtomicQueryV3', groupId: 1, proofType: 'BJJSignature2021', params: { nullifierSessionId: 7 } }),
  rule('q-doc', { ...age, requestId: 2, attribute: 'documentType', operator: '$in', value: [1, 2], circuitId: 'linkedMultiQuery', groupId: 1 }),
  rule('q-born', { ...age, requestId: 2, attribute: 'birthday', operator: '$between', value: [19000101, 20080101], circuitId: 'linkedMultiQuery', groupId: 1 }),
  rule('q-exists', { ...age, requestId: 3, attribute: 'documentType', operator: '$exists', value: true }),
  rule('q-show', { ...age, requestId: 4, attribute: 'documentType', operator: '$sd', circuitId: 'credentialAtomicQueryV3' }),
], { ...requestSettings, callbackUrl: 'https://svc.example/compliance/executions/e1/zkp-response', verifierDid: VERIFIER_DID });

describe('a js-sdk wallet reading the service\'s V3 and linked requests', () => {
  it('parses the request as it was sent', async () => {
    const parsed = await wallet().handler.parseAuthorizationRequest(new TextEncoder().encode(JSON.stringify(request)));
    expect(parsed).toEqual(request);
  });

  it('picks authV3-8-32 for its answer, as the request accepts it (authV3 where the wallet cannot prove authV3-8-32)', () => {
    const { packer } = wallet();
    expect(sdk.getDefaultZKProvingMethodAlg(packer, undefined, request.body.accept)).toMatchObject({ alg: 'groth16', circuitId: 'authV3-8-32' });
    expect(sdk.getDefaultZKProvingMethodAlg(wallet(['authV2', 'authV3']).packer, undefined, request.body.accept)).toMatchObject({ circuitId: 'authV3' });
    // A request accepting authV2 only would get authV2: the choice is the request's.
    const v2Only = ['iden3comm/v1;env=application/iden3-zkp-json;circuitId=authV2;alg=groth16'];
    expect(sdk.getDefaultZKProvingMethodAlg(packer, undefined, v2Only)).toMatchObject({ circuitId: 'authV2' });
  });

  it('supports each entry\'s circuit and operators, within its query count', () => {
    const circuits = Object.values(sdk.CircuitId);
    for (const entry of request.body.scope) {
      expect(circuits, entry.circuitId).toContain(entry.circuitId);
      const { validation } = sdk.circuitValidator[entry.circuitId] ?? { validation: { maxQueriesCount: 0, supportedOperations: [] } };
      const conditions = Object.values(entry.query.credentialSubject ?? {}).flatMap((c) => (Object.keys(c).length === 0 ? ['$sd'] : Object.keys(c)));
      expect(conditions.length).toBeLessThanOrEqual(validation.maxQueriesCount);
      for (const op of conditions) expect(validation.supportedOperations, `${entry.circuitId} ${op}`).toContain(sdk.QueryOperators[op]);
    }
  });

  it('searches one credential for a group: the V3 and linked conditions merged', () => {
    const grouped = sdk.getGroupedQueries(request.body.scope);
    expect([...grouped.keys()]).toEqual([1]);
    expect(grouped.get(1)?.query).toMatchObject({
      type: 'KYCAgeCredential',
      credentialSubject: { birthday: { $lte: 20080101, $between: [19000101, 20080101] }, documentType: { $in: [1, 2] } },
    });
    // Two linked conditions: the wallet proves them with linkedMultiQuery3 (js-sdk: up to 3 conditions).
    const linked = request.body.scope.find((e) => e.circuitId === 'linkedMultiQuery');
    const count = Object.values(linked?.query.credentialSubject ?? {}).flatMap((c) => Object.keys(c)).length;
    expect(count).toBe(2);
    expect(sdk.circuitValidator.linkedMultiQuery?.validation.maxQueriesCount).toBe(10);
  });
});
