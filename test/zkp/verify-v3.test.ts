/**
 * Verification of credentialAtomicQueryV3 answers with the real js-iden3-auth verifier, on the public V3 vector of
 * js-iden3-auth's own tests (../shared/fixtures/zkp-v3-vectors/README.md): a real authV2 JWZ with two real V3 Groth16 proofs, one with a
 * nullifier. What is proven here: the service's rules reproduce that request, its verifier accepts the real proofs,
 * reads the nullifier and link ids from them, refuses the answer on the JWZ paths as for V2, and judges each V3
 * condition the proofs do not meet as not-valid. What is not: no new proof is made (no proving keys offline), so
 * other V3 operators, $sd and linkedMultiQuery proofs are checked against made-up signals in the failure-table tests
 * and verify-groups tests only.
 * The vector was proved with credentialAtomicQueryV3-beta.1 (the stable circuit's signal layout; 1.14.0 ships its
 * key): the scope entries are renamed to it after the service built them from the rules.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  alwaysLatestStateResolvers, buildAuthorizationRequest, createZkpVerifier, InvalidTokenError, RequestExpiredError,
  ResponseMismatchError, ThreadMismatchError, type PendingAuthorization, type ZkpQueryConfiguration, type ZkpVerifier,
} from '../../src/zkp/index.js';
import { judgeAcrossRules } from '../../src/zkp/verify-groups.js';
import { haveV3Vectors, iden3DocumentLoader, ISSUER_DID, v3Message, v3Vector, verifierSettings, requestSettings } from './fixtures.js';
import { haveIden3Documents } from '../shared-fixtures.js';
import { rejection, WIDE } from './library.js';

const NONMERKLIZED = 'https://raw.githubusercontent.com/iden3/claim-schema-vocab/main/schemas/json-ld/kyc-nonmerklized.jsonld';
const KYC_V101 = 'https://raw.githubusercontent.com/iden3/claim-schema-vocab/main/schemas/json-ld/kyc-v101.json-ld';
/** 2024-03-20T16:26:29Z: the second proof's timestamp signal. */
const PROOF_TIME = 1710951589 * 1000;
const THID = v3Message().thid;

type Query = ZkpQueryConfiguration['query'];
const age = (over: Partial<Query> = {}): ZkpQueryConfiguration => ({
  id: 'q-document',
  query: {
    type: 'KYCAgeCredential', requestId: 1, attribute: 'documentType', operator: '$eq', value: 99, context: NONMERKLIZED,
    circuitId: 'credentialAtomicQueryV3', proofType: 'BJJSignature2021', groupId: 2, ...over,
  } as Query,
});
const employee = (over: Partial<Query> = {}): ZkpQueryConfiguration => ({
  id: 'q-employee',
  query: {
    type: 'KYCEmployee', requestId: 2, attribute: 'hireDate', operator: '$eq', value: '2023-12-11', context: KYC_V101,
    circuitId: 'credentialAtomicQueryV3', proofType: 'Iden3SparseMerkleTreeProof', groupId: 1, params: { nullifierSessionId: 12345 }, ...over,
  } as Query,
});

/** The pending authorization of an execute with these rules, to the vector's thread, entries renamed to beta.1. */
function pendingFor(configs: ZkpQueryConfiguration[], over: Record<string, unknown> = {}): PendingAuthorization {
  const { pending } = buildAuthorizationRequest(configs, {
    ...requestSettings,
    callbackUrl: 'https://svc.example/compliance/executions/e1/zkp-response', verifierDid: v3Vector.verifierDid, reason: 'reason',
    message: v3Vector.message, thid: THID, now: PROOF_TIME, ...over,
  });
  for (const entry of pending.request.body.scope) entry.circuitId = 'credentialAtomicQueryV3-beta.1' as never;
  return pending;
}

let verifier: ZkpVerifier;
beforeAll(async () => {
  verifier = await createZkpVerifier({ ...verifierSettings, documentLoader: iden3DocumentLoader(), stateResolvers: alwaysLatestStateResolvers(), proofMaxAgeMs: WIDE });
});
const verify = (pending: PendingAuthorization, token = v3Vector.token, now = PROOF_TIME + 60_000) => verifier.verify(token, pending, { now });

describe.skipIf(!haveIden3Documents() || !haveV3Vectors())('credentialAtomicQueryV3 answers (public vector, real proofs)', () => {
  it('builds the request of the vector from two V3 rules, and verifies its real JWZ: nullifier and link ids read', async () => {
    const pending = pendingFor([age(), employee()]);
    expect(pending.request.body.scope).toEqual(v3Vector.scope);
    const v = await verify(pending);
    expect(v.envelope).toBe('jwz');
    expect(v.verdicts.map((x) => [x.objectId, x.status, x.reasons])).toEqual([['q-document', 'valid', []], ['q-employee', 'valid', []]]);
    const [document, hired] = v.verdicts;
    expect(document?.nullifier).toBeUndefined();
    expect(hired?.nullifier).toBe(v3Message().body.scope[1]?.pub_signals[4]);
    expect(document?.linkId).toMatch(/^[1-9][0-9]+$/);
    expect(hired?.linkId).not.toBe(document?.linkId); // two credentials
    expect(hired?.proofTimestamp).toBe('2024-03-20T16:19:49.000Z');
    expect(hired?.issuer).toMatch(/^did:polygonid:polygon:mumbai:/);
  });

  it('judges the conditions the proofs do not meet as not-valid, with reasons', async () => {
    const reasonsOf = async (configs: ZkpQueryConfiguration[]) => (await verify(pendingFor(configs))).verdicts.map((x) => [x.status, ...x.reasons]);
    expect(await reasonsOf([age({ proofType: 'Iden3SparseMerkleTreeProof' }), employee()])).toEqual([
      ['not-valid', "the proof was not made with the credential's Iden3SparseMerkleTreeProof, which the rule asks for"], ['valid'],
    ]);
    expect((await reasonsOf([age(), employee({ params: { nullifierSessionId: 999 } })]))[1])
      .toEqual(['not-valid', "the nullifier was made for another session than the rule's nullifierSessionId"]);
    expect((await reasonsOf([age(), employee({ params: undefined })]))[1]).toEqual(['not-valid', 'the proof carries a nullifier the rule does not ask for']);
    expect((await reasonsOf([age({ groupId: undefined }), employee()]))[0])
      .toEqual(['not-valid', 'the proof is linked to other proofs, which the rule does not ask for']);
    expect((await reasonsOf([age({ value: 98 }), employee()]))[0]).toEqual(['not-valid', 'the proof answers another query (operator or values differ from the request)']);
  });

  it('refuses the V3 JWZ on the same paths as V2: thread (a replay into another execution), expiry, verifier, message', async () => {
    expect(await rejection(verify(pendingFor([age(), employee()], { thid: randomUUID() })))).toBeInstanceOf(ThreadMismatchError);
    const expired = pendingFor([age(), employee()], { ttlMs: 60_000 });
    expect(await rejection(verify(expired, v3Vector.token, PROOF_TIME + 61_000))).toBeInstanceOf(RequestExpiredError);
    const otherVerifier = pendingFor([age(), employee()], { verifierDid: ISSUER_DID });
    expect(await rejection(verify(otherVerifier))).toBeInstanceOf(ResponseMismatchError);
    expect(await rejection(verify(pendingFor([age(), employee()], { message: 'another message' })))).toBeInstanceOf(ResponseMismatchError);
    // The message changed under the authV2 proof: the proof is not over it.
    const [h, , p] = v3Vector.token.split('.');
    const changed = { ...v3Message(), id: randomUUID() };
    const forged = `${h}.${Buffer.from(JSON.stringify(changed)).toString('base64url')}.${p}`;
    const e = await rejection(verify(pendingFor([age(), employee()]), forged));
    expect(e).toBeInstanceOf(InvalidTokenError);
    expect(e.message).toMatch(/not made over this message/);
  });

  it('refuses valid proofs of one group whose link ids differ: two credentials are not one', async () => {
    const v = await verify(pendingFor([age(), employee()]));
    const rules = pendingFor([age(), employee()]).rules.map((r) => ({ ...r, groupId: 5 }));
    judgeAcrossRules(rules, v.verdicts, new Map());
    expect(v.verdicts.map((x) => [x.status, ...x.reasons])).toEqual([
      ['not-valid', 'the proofs of group 5 are not about one credential (their link ids differ)'],
      ['not-valid', 'the proofs of group 5 are not about one credential (their link ids differ)'],
    ]);
  });
});
