/**
 * credentialAtomicQueryV3 and linkedMultiQuery rules: what create accepts and refuses (naming the field), and the
 * iden3 scope entries they become, spelled as iden3's own tools spell them (js-sdk's ZeroKnowledgeProofRequest).
 */
import { describe, expect, it } from 'vitest';
import { validateScenarioRules } from '../../src/execution/registry.js';
import { exampleOffChainScenario } from '../../src/schemas/example-offchain.js';
import type { Scenario } from '../../src/schemas/scenario.js';
import { createDocumentLoader } from '../../src/jsonld/documents.js';
import {
  buildAuthorizationRequest, checkZkpQuerySchemas, validateZkpQueries, type ZkpQueryConfiguration,
} from '../../src/zkp/index.js';
import { VERIFIER_DID, requestSettings } from './fixtures.js';

const NOW = Date.UTC(2026, 0, 2, 3, 4, 5);
const CTX = 'https://ctx.example/id.jsonld';
const contexts = { IDInformation: CTX, ProofOfResidence: 'https://ctx.example/por.jsonld' };
const base = { ...requestSettings, callbackUrl: 'https://svc.example/compliance/executions/e1/zkp-response', verifierDid: VERIFIER_DID, now: NOW, contexts };
const qc = (i: number, query: Record<string, unknown>): ZkpQueryConfiguration => ({ id: `q${i}`, query: query as ZkpQueryConfiguration['query'] });
const v3 = { type: 'IDInformation', requestId: 1, attribute: 'personalData.age', operator: '$gte', value: 18, circuitId: 'credentialAtomicQueryV3' };
const problems = (...queries: Array<Record<string, unknown>>) => validateZkpQueries(queries.map((q, i) => qc(i, q)), { ...requestSettings, contexts });
const pointers = (...queries: Array<Record<string, unknown>>) => problems(...queries).map((p) => p.pointer);

describe('credentialAtomicQueryV3 rules at create', () => {
  it('accepts every operator of the query language, proof types, nullifiers and groups', () => {
    for (const q of [
      v3,
      { ...v3, operator: '$lte', value: '2008-01-01' },
      { ...v3, operator: '$between', value: [18, 65] },
      { ...v3, operator: '$nonbetween', value: ['2000-01-01', '2001-01-01'] },
      { ...v3, operator: '$exists', value: false },
      { ...v3, operator: '$sd', value: undefined },
      { ...v3, operator: '$noop', attribute: undefined, value: undefined },
      { ...v3, operator: '$in', value: ['FRA', 'DEU'] },
      { ...v3, proofType: 'BJJSignature2021' },
      { ...v3, proofType: 'Iden3SparseMerkleTreeProof', groupId: 7 },
      { ...v3, params: { nullifierSessionId: 12345 } },
      { ...v3, params: { nullifierSessionId: '21888242871839275222246405745257275088548364400416034343698204186575808495616' } },
    ]) expect(problems(q), JSON.stringify(q)).toEqual([]);
  });

  it('proves with V3 a rule that names no circuit but asks what only V3 proves', () => {
    const { pending, request } = buildAuthorizationRequest([
      qc(0, { type: 'IDInformation', requestId: 1, attribute: 'personalData.age', operator: '$gte', value: 18 }),
      qc(1, { type: 'IDInformation', requestId: 2, attribute: 'reviewAnswer', operator: '$eq', value: 'GREEN' }),
      qc(2, { type: 'IDInformation', requestId: 3, operator: '$noop', params: { nullifierSessionId: 99 } }),
    ], base);
    expect(pending.rules.map((r) => r.circuitId)).toEqual(['credentialAtomicQueryV3', 'credentialAtomicQuerySigV2', 'credentialAtomicQueryV3']);
    expect(request.body.scope[2]).toEqual({
      id: 3, circuitId: 'credentialAtomicQueryV3', params: { nullifierSessionId: '99' }, query: { allowedIssuers: ['*'], context: CTX, type: 'IDInformation' },
    });
    expect(pending.rules[2]).toEqual({ objectId: 'q2', requestId: 3, circuitId: 'credentialAtomicQueryV3', nullifier: true });
  });

  it('writes V3 scope entries as iden3 does: proofType, groupId, $sd as {}', () => {
    const { request, pending } = buildAuthorizationRequest([
      qc(0, { ...v3, proofType: 'Iden3SparseMerkleTreeProof', groupId: 4 }),
      qc(1, { ...v3, requestId: 2, operator: '$sd', value: undefined, attribute: 'personalData.citizenship' }),
      qc(2, { ...v3, requestId: 3, operator: '$between', value: [18, 65] }),
    ], base);
    expect(request.body.scope).toEqual([
      { id: 1, circuitId: 'credentialAtomicQueryV3', query: { allowedIssuers: ['*'], context: CTX, type: 'IDInformation', proofType: 'Iden3SparseMerkleTreeProof', groupId: 4, credentialSubject: { 'personalData.age': { $gte: 18 } } } },
      { id: 2, circuitId: 'credentialAtomicQueryV3', query: { allowedIssuers: ['*'], context: CTX, type: 'IDInformation', credentialSubject: { 'personalData.citizenship': {} } } },
      { id: 3, circuitId: 'credentialAtomicQueryV3', query: { allowedIssuers: ['*'], context: CTX, type: 'IDInformation', credentialSubject: { 'personalData.age': { $between: [18, 65] } } } },
    ]);
    expect(pending.rules[0]).toMatchObject({ groupId: 4 });
    expect(pending.rules[1]).toMatchObject({ disclose: 'personalData.citizenship' });
  });

  it('refuses what V3 cannot prove, naming the field', () => {
    const expectOne = (q: Record<string, unknown>, pointer: string, text: string) =>
      expect(problems(q), JSON.stringify(q)).toEqual([{ pointer: `/queryConfigurations/0/query${pointer}`, message: expect.stringContaining(text) }]);
    expectOne({ ...v3, proofType: 'Ed25519' }, '/proofType', 'BJJSignature2021, Iden3SparseMerkleTreeProof');
    expectOne({ ...v3, circuitId: 'credentialAtomicQuerySigV2', proofType: 'BJJSignature2021', operator: '$gt' }, '/proofType', 'needs circuitId credentialAtomicQueryV3');
    expectOne({ ...v3, circuitId: 'credentialAtomicQueryMTPV2', groupId: 1, operator: '$gt' }, '/groupId', 'cannot link');
    expectOne({ ...v3, circuitId: 'credentialAtomicQuerySigV2', params: { nullifierSessionId: 1 }, operator: '$gt' }, '/params', 'only the V3 circuit makes nullifiers');
    expectOne({ ...v3, params: { nullifierSessionId: 0 } }, '/params/nullifierSessionId', 'positive integer');
    expectOne({ ...v3, params: { nullifierSessionId: '2'.repeat(77) } }, '/params/nullifierSessionId', 'field order');
    expectOne({ ...v3, params: [] }, '/params', 'must be an object');
    expectOne({ ...v3, groupId: 0 }, '/groupId', 'from 1');
    expectOne({ ...v3, operator: '$sd', value: 'x' }, '/value', '$sd takes no value');
    expectOne({ ...v3, operator: '$sd', value: undefined, attribute: undefined }, '/attribute', 'required for $sd');
    expectOne({ ...v3, operator: '$between', value: [1] }, '/value', '[min, max]');
    expectOne({ ...v3, operator: '$between', value: [1, -2] }, '/value/1', 'non-negative integer');
    expectOne({ ...v3, operator: '$exists', value: 'yes' }, '/value', 'boolean');
    expectOne({ ...v3, operator: '$lte', value: 1.5 }, '/value', 'non-negative integer');
    expectOne({ ...v3, operator: '$in', value: Array.from({ length: 65 }, (_, i) => i) }, '/value', 'at most 64');
  });
});

describe('linked rules (groupId, linkedMultiQuery)', () => {
  const anchor = { ...v3, groupId: 1 };
  const linked = (requestId: number, attribute: string, operator: string, value: unknown) =>
    ({ type: 'IDInformation', requestId, attribute, operator, value, circuitId: 'linkedMultiQuery', groupId: 1 });

  it('builds one linkedMultiQuery entry for the conditions of a group sharing a request id', () => {
    const { request, pending } = buildAuthorizationRequest([
      qc(0, anchor),
      qc(1, linked(2, 'personalData.citizenship', '$nin', ['PRK', 'IRN'])),
      qc(2, linked(2, 'reviewAnswer', '$eq', 'GREEN')),
      qc(3, linked(2, 'personalData.age', '$lt', 120)),
    ], base);
    expect(request.body.scope).toEqual([
      { id: 1, circuitId: 'credentialAtomicQueryV3', query: { allowedIssuers: ['*'], context: CTX, type: 'IDInformation', groupId: 1, credentialSubject: { 'personalData.age': { $gte: 18 } } } },
      {
        id: 2,
        circuitId: 'linkedMultiQuery',
        query: {
          allowedIssuers: ['*'], context: CTX, type: 'IDInformation', groupId: 1,
          credentialSubject: { 'personalData.citizenship': { $nin: ['PRK', 'IRN'] }, reviewAnswer: { $eq: 'GREEN' }, 'personalData.age': { $lt: 120 } },
        },
      },
    ]);
    expect(pending.rules.map((r) => [r.objectId, r.requestId, r.circuitId, r.groupId])).toEqual([
      ['q0', 1, 'credentialAtomicQueryV3', 1], ['q1', 2, 'linkedMultiQuery', 1], ['q2', 2, 'linkedMultiQuery', 1], ['q3', 2, 'linkedMultiQuery', 1],
    ]);
  });

  it('refuses groups that cannot be one credential, and linked conditions without their V3 rule', () => {
    expect(problems(linked(2, 'reviewAnswer', '$eq', 'GREEN'))).toEqual([
      { pointer: '/queryConfigurations/0/query/groupId', message: expect.stringContaining('needs a credentialAtomicQueryV3 rule') },
    ]);
    expect(pointers(anchor, { ...linked(2, 'country', '$eq', 'FRA'), type: 'ProofOfResidence' })).toEqual(['/queryConfigurations/1/query/type']);
    expect(pointers(anchor, { ...linked(2, 'reviewAnswer', '$eq', 'GREEN'), context: 'https://other.example/ctx.jsonld' }))
      .toEqual(['/queryConfigurations/1/query/context']);
    expect(pointers(anchor, { ...linked(2, 'reviewAnswer', '$eq', 'GREEN'), groupId: undefined })).toEqual(['/queryConfigurations/1/query/groupId']);
    expect(pointers(anchor, linked(2, 'reviewAnswer', '$sd', undefined))).toEqual(['/queryConfigurations/1/query/operator']);
    expect(pointers(anchor, linked(2, 'reviewAnswer', '$eq', 'GREEN'), linked(2, 'reviewAnswer', '$eq', 'RED')))
      .toEqual(['/queryConfigurations/2/query/operator']);
    const eleven = Array.from({ length: 11 }, (_, i) => linked(2, `a${i}`, '$eq', 1));
    expect(pointers(anchor, ...eleven)).toEqual(['/queryConfigurations/11/query/requestId']);
  });

  it('lets only the linkedMultiQuery rules of one group share a request id', () => {
    expect(problems(anchor, { ...v3, groupId: 1, attribute: 'reviewAnswer', operator: '$eq', value: 'GREEN' })).toEqual([
      { pointer: '/queryConfigurations/1/query/requestId', message: expect.stringContaining('duplicate requestId 1') },
    ]);
    expect(pointers(anchor, { ...anchor, requestId: 5, groupId: 2 }, linked(2, 'reviewAnswer', '$eq', 'GREEN'), { ...linked(2, 'a', '$eq', 1), groupId: 2 }))
      .toEqual(['/queryConfigurations/3/query/requestId']);
  });
});

describe('the OffChainZKP create example of the OpenAPI document', () => {
  it('passes every create-time check with the documents the service ships (no JSONLD_DOCUMENTS_FILE)', async () => {
    const example = structuredClone(exampleOffChainScenario) as unknown as Scenario;
    const documents = createDocumentLoader();
    expect(validateScenarioRules(example)).toEqual([]);
    expect(validateZkpQueries(example.queryConfigurations, { ...requestSettings, documents })).toEqual([]);
    expect(await checkZkpQuerySchemas(example.queryConfigurations, { documentLoader: documents })).toEqual([]);
    const { request } = buildAuthorizationRequest(example.queryConfigurations, { ...base, contexts: {} });
    expect(request.body.scope.map((e) => [e.id, e.circuitId])).toEqual([[1, 'credentialAtomicQueryV3'], [2, 'linkedMultiQuery'], [3, 'credentialAtomicQuerySigV2']]);
  });
});
