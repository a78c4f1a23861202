/**
 * Linked multi-query and selective disclosure with the real js-iden3-auth verifier, on two more public vectors of
 * js-iden3-auth's own tests (../shared/fixtures/zkp-v3-vectors/README.md): a real authV2 JWZ answering a V3 + linkedMultiQuery10 group, and a
 * real authV2 JWZ disclosing a birthday ($sd, credentialAtomicQuerySigV2). What is proven: the service's rules make
 * those requests (circuit ids renamed to the beta.1 circuits the vectors were proved with), the real proofs verify,
 * three rules share one linkedMultiQuery proof, the group's link ids agree, and the disclosed value is read from
 * the proof's presentation. What is not: linkedMultiQuery3/5 proofs (no public vector; same verifier class).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  alwaysLatestStateResolvers, buildAuthorizationRequest, createZkpVerifier, type ZkpQueryConfiguration, type ZkpVerifier,
} from '../../src/zkp/index.js';
import { WIDE } from './library.js';
import { haveV3Vectors, iden3DocumentLoader, verifierSettings, requestSettings, zkpVector } from './fixtures.js';
import { haveIden3Documents } from '../shared-fixtures.js';

const present = haveIden3Documents() && haveV3Vectors();

interface Vector { source: string; licence: string; verifierDid: string; message: string; token: string }
const vector = (name: string): Vector => zkpVector(name);
const thidOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { thid: string }).thid;
const LD = 'https://raw.githubusercontent.com/iden3/claim-schema-vocab/main/schemas/json-ld/';
type Query = ZkpQueryConfiguration['query'];
const rule = (id: string, query: Record<string, unknown>): ZkpQueryConfiguration => ({ id, query: query as Query });

let verifier: ZkpVerifier;
beforeAll(async () => {
  verifier = await createZkpVerifier({ ...verifierSettings, documentLoader: iden3DocumentLoader(), stateResolvers: alwaysLatestStateResolvers(), proofMaxAgeMs: WIDE });
});

function pendingFor(v: Vector, rules: ZkpQueryConfiguration[], rename: Record<string, string>) {
  const { pending } = buildAuthorizationRequest(rules, {
    ...requestSettings,
    callbackUrl: 'https://svc.example/compliance/executions/e1/zkp-response', verifierDid: v.verifierDid, message: v.message || undefined,
    thid: thidOf(v.token), now: Date.UTC(2024, 2, 27),
  });
  for (const entry of pending.request.body.scope) entry.circuitId = (rename[entry.circuitId] ?? entry.circuitId) as never;
  return pending;
}

describe.skipIf(!present)('linked multi-query (public vector, real proofs)', () => {
  const v = vector('linked-v3-lmq10-authv2.json');
  const employee = { type: 'KYCEmployee', context: `${LD}kyc-v101.json-ld`, groupId: 1 };
  const linked = (id: string, attribute: string, operator: string, value: unknown) =>
    rule(id, { ...employee, requestId: 2, circuitId: 'linkedMultiQuery', proofType: 'Iden3SparseMerkleTreeProof', attribute, operator, value });
  const rules = [
    rule('q-document', { type: 'KYCAgeCredential', context: `${LD}kyc-nonmerklized.jsonld`, requestId: 1, attribute: 'documentType', operator: '$eq', value: 99, circuitId: 'credentialAtomicQueryV3', proofType: 'BJJSignature2021' }),
    linked('q-employee-document', 'documentType', '$eq', 1),
    linked('q-boss', 'position', '$eq', 'boss'),
    linked('q-not-employee', 'position', '$ne', 'employee'),
    rule('q-hired', { ...employee, requestId: 3, attribute: 'hireDate', operator: '$eq', value: '2023-12-11', circuitId: 'credentialAtomicQueryV3', proofType: 'BJJSignature2021' }),
  ];
  const rename = { credentialAtomicQueryV3: 'credentialAtomicQueryV3-beta.1', linkedMultiQuery: 'linkedMultiQuery10-beta.1' };

  it('proves three rules with one linkedMultiQuery proof bound to the V3 proof of their group', async () => {
    const pending = pendingFor(v, rules, rename);
    expect(pending.request.body.scope.map((e) => e.id)).toEqual([1, 2, 3]);
    expect(pending.request.body.scope[1]?.query.credentialSubject).toEqual({ documentType: { $eq: 1 }, position: { $eq: 'boss', $ne: 'employee' } });
    const result = await verifier.verify(v.token, pending, { now: Date.UTC(2024, 2, 27) });
    expect(result.verdicts.map((x) => [x.objectId, x.status, ...x.reasons])).toEqual([
      ['q-document', 'valid'], ['q-employee-document', 'valid'], ['q-boss', 'valid'], ['q-not-employee', 'valid'], ['q-hired', 'valid'],
    ]);
    const link = result.verdicts[4]?.linkId;
    expect(link).toBeDefined();
    expect(result.verdicts.slice(1, 4).map((x) => x.linkId)).toEqual([link, link, link]);
  });

  it('answers not-valid for a linked condition the proof does not show, and for the group when its V3 rule fails', async () => {
    const other = [...rules];
    other[2] = linked('q-boss', 'position', '$eq', 'intern');
    const a = await verifier.verify(v.token, pendingFor(v, other, rename), { now: Date.UTC(2024, 2, 27) });
    expect(a.verdicts.slice(1, 4).map((x) => [x.status, ...x.reasons])).toEqual(Array.from({ length: 3 }, () =>
      ['not-valid', 'the proof answers another query (operator or values differ from the request)']));
    const anchor = [...rules];
    anchor[4] = rule('q-hired', { ...employee, requestId: 3, attribute: 'hireDate', operator: '$eq', value: '2024-01-01', circuitId: 'credentialAtomicQueryV3' });
    const b = await verifier.verify(v.token, pendingFor(v, anchor, rename), { now: Date.UTC(2024, 2, 27) });
    expect(b.verdicts[4]?.status).toBe('not-valid');
    expect(b.verdicts[2]?.reasons).toEqual([expect.stringContaining('whose credentialAtomicQueryV3 proof (the holder has it from a trusted issuer) is not valid')]);
  });
});

describe.skipIf(!present)('selective disclosure (public vector, real proof)', () => {
  const v = vector('sd-sigv2-authv2.json');
  const birthday = rule('q-birthday', { type: 'KYCAgeCredential', context: `${LD}kyc-v4.jsonld`, requestId: 1, attribute: 'birthday', operator: '$sd', circuitId: 'credentialAtomicQuerySigV2' });

  it('asks $sd as iden3 does and reads the disclosed value from the verified proof', async () => {
    const pending = pendingFor(v, [birthday], {});
    expect(pending.request.body.scope[0]?.query.credentialSubject).toEqual({ birthday: {} });
    const result = await verifier.verify(v.token, pending, { now: Date.UTC(2024, 0, 1) });
    expect(result.verdicts[0]?.reasons).toEqual([]);
    expect(result.verdicts[0]).toMatchObject({ status: 'valid', disclosed: { attribute: 'birthday', value: 19960424 } });
  });
});
