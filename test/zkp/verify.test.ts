/**
 * The real js-iden3-auth verifier (Groth16 against the verification keys shipped in the package, offline JSON-LD)
 * on the public credentialAtomicQueryMTPV2 test vector: its verdicts. One verifier for the file; ~0.1-0.2 s per
 * proof. Answers refused as a whole: verify-refusals.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { groth16Checks } from '../../src/zkp/groth16.js';
import {
  alwaysLatestStateResolvers, buildAuthorizationRequest, createZkpVerifier, verifyAuthorizationResponse, MalformedResponseError,
  ResponseMismatchError, type PendingAuthorization, type StateResolvers, type ZkpVerifier, type ZkpQueryConfiguration,
} from '../../src/zkp/index.js';
import {
  cloneProof, fixtureConfiguration, haveMtpVector, iden3DocumentLoader, fixtureRequest, fixtureResponse, ISSUER_DID, plainResponse, PROOF_TIME_MS, USER_DID,
  VERIFIER_DID, type FixtureProof, verifierSettings, requestSettings,
} from './fixtures.js';
import { haveIden3Documents } from '../shared-fixtures.js';
import { buildPending as build, rejection, WIDE } from './library.js';

const present = haveMtpVector() && haveIden3Documents();

/** A state resolver the tests steer: latest (default), replaced long ago, or down. */
let stateMode: 'latest' | 'replaced' | 'down' = 'latest';
const latest = alwaysLatestStateResolvers()['polygon:mumbai']!;
const steered: StateResolvers = {
  'polygon:mumbai': {
    resolve: async (id, state) => {
      if (stateMode === 'down') throw new Error('connect ECONNREFUSED 127.0.0.1:8545');
      if (stateMode === 'replaced') return { latest: false, genesis: false, state, transitionTimestamp: 1_600_000_000 };
      return latest.resolve(id, state);
    },
    rootResolve: async (root) => {
      if (stateMode === 'down') throw new Error('connect ECONNREFUSED 127.0.0.1:8545');
      return latest.rootResolve(root);
    },
  },
};

let verifier: ZkpVerifier;
beforeAll(async () => {
  verifier = await createZkpVerifier({ ...verifierSettings, documentLoader: iden3DocumentLoader(), stateResolvers: steered, proofMaxAgeMs: WIDE, allowPlainMessages: true });
});

const verify = (token: string, pending: PendingAuthorization, now?: number) => verifier.verify(token, pending, { now });

describe.skipIf(!present)('the public credentialAtomicQueryMTPV2 vector', () => {
  it('verifies, with one valid verdict for request id 23', async () => {
    const pending = build();
    expect(pending.request.body.scope).toEqual(fixtureRequest.scope);
    const times: number[] = [];
    let result;
    for (let run = 0; run < 5; run++) {
      const t0 = performance.now();
      result = await verifyAuthorizationResponse(plainResponse(), pending, { verifier });
      times.push(performance.now() - t0);
    }
    const sorted = [...times].sort((a, b) => a - b);
    console.info(`[zkp] one credentialAtomicQueryMTPV2 answer: first ${times[0]!.toFixed(0)} ms, then median ${sorted[2]!.toFixed(0)} ms, min ${sorted[0]!.toFixed(0)} ms`);
    expect(result).toEqual({
      thid: fixtureRequest.thid,
      userDid: USER_DID,
      envelope: 'plain',
      is_valid: true,
      verdicts: [{
        objectId: 'q-residence', requestId: 23, circuitId: 'credentialAtomicQueryMTPV2', status: 'valid', is_valid: true,
        reasons: [], issuer: ISSUER_DID, proofTimestamp: new Date(PROOF_TIME_MS).toISOString(),
      }],
    });
  });

  it('checks the proof on the Groth16 worker thread, not on the calling thread, with the same verdict', async () => {
    const before = groth16Checks();
    const result = await verifyAuthorizationResponse(plainResponse(), build(), { verifier });
    expect(result.verdicts.map((v) => v.status)).toEqual(['valid']);
    expect(groth16Checks()).toBe(before + 1);
    // A proof element changed: one more check there, and not valid.
    const proof = cloneProof();
    proof.proof.pi_a[0] = (BigInt(proof.proof.pi_a[0]!) + 1n).toString();
    const { verdicts } = await verify(plainResponse({ proof }), build());
    expect(verdicts[0]).toMatchObject({ is_valid: false, status: 'not-valid' });
    expect(groth16Checks()).toBe(before + 2);
  });

  it('fails when any public signal changes', async () => {
    const signals = fixtureResponse.proof.pub_signals;
    const pending = build();
    const passed: number[] = [];
    for (let i = 0; i < signals.length; i++) {
      const proof = cloneProof();
      proof.pub_signals[i] = (BigInt(signals[i]!) + 1n).toString();
      const { verdicts } = await verify(plainResponse({ proof }), pending);
      if (verdicts[0]!.is_valid || verdicts[0]!.status !== 'not-valid' || verdicts[0]!.reasons.length === 0) passed.push(i);
    }
    expect(signals.length).toBe(77);
    expect(passed).toEqual([]);
  });

  it('fails when any proof element changes', async () => {
    const pending = build();
    const paths: Array<[keyof FixtureProof['proof'], number, number?]> = [
      ['pi_a', 0], ['pi_a', 1], ['pi_a', 2], ['pi_c', 0], ['pi_c', 1], ['pi_c', 2],
      ['pi_b', 0, 0], ['pi_b', 0, 1], ['pi_b', 1, 0], ['pi_b', 1, 1], ['pi_b', 2, 0], ['pi_b', 2, 1],
    ];
    for (const [key, i, j] of paths) {
      const where = `${key}[${i}]${j === undefined ? '' : `[${j}]`}`;
      const proof = cloneProof();
      if (j === undefined) {
        const arr = proof.proof[key] as string[];
        arr[i] = (BigInt(arr[i]!) + 1n).toString();
      } else {
        const arr = proof.proof[key] as string[][];
        arr[i]![j] = (BigInt(arr[i]![j]!) + 1n).toString();
      }
      if (i === 2) {
        // The z coordinates (snarkjs's constant 1 / [1, 0]) are ignored by the Groth16 check: refused as malformed.
        expect(await rejection(verify(plainResponse({ proof }), pending)), where).toBeInstanceOf(MalformedResponseError);
        continue;
      }
      const { verdicts } = await verify(plainResponse({ proof }), pending);
      expect(verdicts[0], where).toMatchObject({ is_valid: false, status: 'not-valid' });
      expect(verdicts[0]!.reasons.join(' ')).toMatch(/does not verify|could not be verified/);
    }
  });

  it('fails when the request id changes', async () => {
    // The answer renames its proof: it answers a request id that was not asked.
    const proof = cloneProof();
    proof.id = 24;
    const e = await rejection(verify(plainResponse({ proof }), build()));
    expect(e).toBeInstanceOf(ResponseMismatchError);
    expect(e.statusCode).toBe(422);
    // The request asks for id 24, and the proof is relabelled 24: its requestID signal still says 23.
    const asks24 = build(fixtureConfiguration({ requestId: 24 }));
    const { verdicts } = await verify(plainResponse({ proof }), asks24);
    expect(verdicts[0]).toMatchObject({ requestId: 24, is_valid: false, status: 'not-valid', reasons: ['the proof was made for another request id'] });
    // The request asks for 24 and gets no proof for it.
    const none = await verify(plainResponse(), build(fixtureConfiguration({ requestId: 24 })))
      .catch((err: unknown) => err);
    expect(none).toBeInstanceOf(ResponseMismatchError); // a proof for 23, which was not asked
  });

  it('fails when the sender changes', async () => {
    // Addressed to another verifier.
    const to = await rejection(verify(plainResponse({ to: USER_DID }), build()));
    expect(to).toBeInstanceOf(ResponseMismatchError);
    expect(to.message).toMatch(/addressed to/);
    // The request came from another verifier.
    const other = await rejection(verify(plainResponse(), build(undefined, { verifierDid: ISSUER_DID })));
    expect(other).toBeInstanceOf(ResponseMismatchError);
    // Sent by another holder than the one the proof was made for.
    const { verdicts, is_valid } = await verify(plainResponse({ from: ISSUER_DID }), build());
    expect(is_valid).toBe(false);
    expect(verdicts[0]).toMatchObject({ status: 'not-valid', reasons: ['the proof was made for another identity than the sender of the answer'] });
    // Another signed message.
    expect(await rejection(verify(plainResponse({ message: 'other' }), build()))).toBeInstanceOf(ResponseMismatchError);
  });

  it('fails when the query, the circuit or the trusted issuers differ from what the proof shows', async () => {
    const cases: Array<[ZkpQueryConfiguration, RegExp]> = [
      [fixtureConfiguration({ value: [840, 120, 340] }), /another query/],
      [fixtureConfiguration({ operator: '$in' }), /another query/],
      [fixtureConfiguration({ attribute: 'documentType' }), /another attribute/],
      [fixtureConfiguration({ type: 'KYCAgeCredential', attribute: 'documentType' }), /another credential type/],
      [fixtureConfiguration({ circuitId: 'credentialAtomicQuerySigV2' }), /^the proof was made with credentialAtomicQueryMTPV2, not with the requested credentialAtomicQuerySigV2$/],
    ];
    for (const [config, reason] of cases) {
      const { verdicts } = await verify(plainResponse(), build(config));
      expect(verdicts[0]!.is_valid, JSON.stringify(config.query)).toBe(false);
      expect(verdicts[0]!.reasons.join(' ')).toMatch(reason);
    }
    const untrusted = build(undefined, { allowedIssuers: [USER_DID] });
    expect((await verify(plainResponse(), untrusted)).verdicts[0]!.reasons).toEqual(['the credential was issued by an issuer this scenario does not trust']);
    const trusted = build(undefined, { allowedIssuers: [ISSUER_DID] });
    expect((await verify(plainResponse(), trusted)).is_valid).toBe(true);
  });

  it('judges proof age and issuer state', async () => {
    // Proof older than the window (own check with the caller's clock, and the library's).
    const strict = await createZkpVerifier({ ...verifierSettings, documentLoader: iden3DocumentLoader(), stateResolvers: steered, allowPlainMessages: true, replayGuard: null });
    const old = await strict.verify(plainResponse(), build());
    expect(old.verdicts[0]).toMatchObject({ is_valid: false, status: 'not-valid' });
    expect(old.verdicts[0]!.reasons).toEqual([expect.stringMatching(/^the proof was made at 2023-03-20T14:37:18.000Z, more than 3600 s before/)]);
    // A proof from the future (the verifier's clock in 2020).
    const in2020 = Date.UTC(2020, 0, 1);
    const future = await verify(plainResponse(), build(undefined, { now: in2020 }), in2020);
    expect(future.verdicts[0]!.reasons).toEqual([expect.stringMatching(/made in the future/)]);
    // The issuer's non-revocation state was replaced long ago.
    stateMode = 'replaced';
    try {
      const replaced = await verify(plainResponse(), build());
      expect(replaced.verdicts[0]).toMatchObject({ status: 'not-valid', reasons: [expect.stringMatching(/issuer state that was replaced/)] });
      // The state resolver is down: undecided, never a pass.
      stateMode = 'down';
      const down = await verify(plainResponse(), build());
      expect(down.verdicts[0]).toMatchObject({ is_valid: false, status: 'error' });
      expect(down.verdicts[0]!.reasons.at(-1)).toMatch(/could not be decided: the state resolver of polygon:mumbai failed/);
    } finally {
      stateMode = 'latest';
    }
  });

  it('answers error when the context is not available offline', async () => {
    const pending = build(fixtureConfiguration({ context: 'https://elsewhere.example/kyc.jsonld' }));
    const { verdicts } = await verify(plainResponse(), pending);
    expect(verdicts[0]).toMatchObject({ is_valid: false, status: 'error' });
    expect(verdicts[0]!.reasons.join(' ')).toMatch(/not available to the verifier/);
  });

  it('gives a not-valid verdict to a rule without proof and checks the others', async () => {
    const pending = buildAuthorizationRequest([fixtureConfiguration(), { id: 'q-other', query: { ...fixtureConfiguration().query, requestId: 99 } }], {
      ...requestSettings, callbackUrl: 'https://svc.example/cb', verifierDid: VERIFIER_DID, message: fixtureRequest.message, thid: fixtureRequest.thid,
    }).pending;
    const result = await verify(plainResponse(), pending);
    expect(result.is_valid).toBe(false);
    expect(result.verdicts.map((v) => [v.objectId, v.status, v.reasons])).toEqual([
      ['q-residence', 'valid', []],
      ['q-other', 'not-valid', ['no proof was given for request id 99']],
    ]);
  });
});
