/**
 * Answers the verifier refuses as a whole (typed ZkpErrors: nothing decided, the execution stays unchanged), on the
 * public credentialAtomicQueryMTPV2 test vector with the real js-iden3-auth verifier.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createZkpVerifier, peekThreadId, InvalidTokenError, MalformedResponseError, ProofReplayedError, RequestExpiredError,
  ThreadMismatchError, UnsupportedResponseError,
  type PendingAuthorization, type ZkpVerifier,
} from '../../src/zkp/index.js';
import { fixtureRequest, fixtureResponse, haveMtpVector, iden3DocumentLoader, plainResponse, verifierSettings } from './fixtures.js';
import { haveIden3Documents } from '../shared-fixtures.js';
import { buildPending as build, rejection, steeredResolvers, WIDE } from './library.js';

const present = haveMtpVector() && haveIden3Documents();

const steered = steeredResolvers().resolvers;
let verifier: ZkpVerifier;
beforeAll(async () => {
  verifier = await createZkpVerifier({ ...verifierSettings, documentLoader: iden3DocumentLoader(), stateResolvers: steered, proofMaxAgeMs: WIDE, allowPlainMessages: true });
});

const verify = (token: string, pending: PendingAuthorization, now?: number) => verifier.verify(token, pending, { now });

describe.skipIf(!present)('answers that cannot be used (typed errors, nothing decided)', () => {
  it('refuses an expired request', async () => {
    const pending = build(undefined, { now: Date.now() - 3_600_000, ttlMs: 60_000 });
    const e = await rejection(verify(plainResponse(), pending));
    expect(e).toBeInstanceOf(RequestExpiredError);
    expect(e).toMatchObject({ code: 'ZKP_REQUEST_EXPIRED', statusCode: 410 });
    // Judged with the caller's clock.
    const fresh = build(undefined, { now: 1_000_000, ttlMs: 60_000 });
    expect(await rejection(verify(plainResponse(), fresh, 1_000_000 + 60_001))).toBeInstanceOf(RequestExpiredError);
  });

  it('refuses a response replayed into another execution', async () => {
    const first = build();
    expect((await verify(plainResponse(), first)).is_valid).toBe(true);
    const second = build(undefined, { thid: randomUUID() });
    // As sent: it answers the first request's thread.
    const e1 = await rejection(verify(plainResponse(), second));
    expect(e1).toBeInstanceOf(ThreadMismatchError);
    expect(e1.statusCode).toBe(409);
    // Rewritten to the second request's thread (possible only without a JWZ): the proof was already used.
    const e2 = await rejection(verify(plainResponse({ thid: second.thid }), second));
    expect(e2).toBeInstanceOf(ProofReplayedError);
    expect(e2).toMatchObject({ code: 'ZKP_PROOF_REPLAYED', statusCode: 409, requestId: 23 });
    // Re-sent to its own execution: accepted again (the route decides whether to re-apply).
    expect((await verify(plainResponse(), first)).is_valid).toBe(true);
  });

  it('refuses malformed tokens with 400', async () => {
    const pending = build();
    const jsonPart = (x: unknown) => Buffer.from(JSON.stringify(x)).toString('base64url');
    const zHeader = jsonPart({ alg: 'groth16', circuitId: 'authV2', crit: ['circuitId'], typ: 'application/iden3-zkp-json' });
    const plain = JSON.parse(plainResponse()) as Record<string, unknown>;
    const withProof = (mutate: (p: Record<string, unknown>) => void) => {
      const p = structuredClone(plain);
      mutate(((p.body as Record<string, unknown>).scope as Array<Record<string, unknown>>)[0]!);
      return JSON.stringify(p);
    };
    for (const token of [
      '', '   ', 'abc', 'a.b', 'a.b.c', `${zHeader}.!!!.x`, `${zHeader}.${jsonPart([1])}.${jsonPart({})}`,
      `${zHeader}.${jsonPart(plain)}.${jsonPart({ proof: 1 })}`, '{not json', '{}', JSON.stringify({ ...plain, type: 'x' }),
      JSON.stringify({ ...plain, thid: 5 }), JSON.stringify({ ...plain, from: 'did:x' }), JSON.stringify({ ...plain, body: { scope: 'x' } }),
      withProof((p) => { p.id = '23'; }),
      withProof((p) => { (p.proof as Record<string, unknown>).pi_a = ['1', '2']; }),
      withProof((p) => { (p.proof as Record<string, string[][]>).pi_b![0]![0] = '0x12'; }),
      withProof((p) => { (p.pub_signals as string[])[3] = '-1'; }),
      withProof((p) => { p.pub_signals = []; }),
      JSON.stringify({ ...plain, body: { message: fixtureRequest.message, scope: [fixtureResponse.proof, fixtureResponse.proof] } }),
      'x'.repeat(1024 * 1024 + 1),
    ]) {
      const e = await rejection(verify(token, pending));
      expect(e, token.slice(0, 80)).toBeInstanceOf(MalformedResponseError);
      expect(e.statusCode).toBe(400);
    }
    expect(await rejection(verifier.verify(42 as never, pending))).toBeInstanceOf(MalformedResponseError);
  });

  it('refuses JWS, JWE, other circuits and (unless allowed) plain messages', async () => {
    const pending = build();
    const part = (x: unknown) => Buffer.from(JSON.stringify(x)).toString('base64url');
    const payload = part(JSON.parse(plainResponse()));
    for (const token of [
      `${part({ alg: 'ES256K-R', typ: 'application/iden3comm-signed-json' })}.${payload}.c2ln`,
      'a.b.c.d.e',
      `${part({ alg: 'groth16', circuitId: 'credentialAtomicQuerySigV2' })}.${payload}.${part({ proof: {}, pub_signals: [] })}`,
    ]) expect(await rejection(verify(token, pending))).toBeInstanceOf(UnsupportedResponseError);
    const jwzOnly = await createZkpVerifier({ ...verifierSettings, documentLoader: iden3DocumentLoader(), stateResolvers: steered, proofMaxAgeMs: WIDE });
    const e = await rejection(jwzOnly.verify(plainResponse(), pending));
    expect(e).toBeInstanceOf(UnsupportedResponseError);
    expect(e.message).toMatch(/send the JWZ token/);
  });

  it('refuses a JWZ whose authV2 proof is not made over its message (422), and a JWZ of another request', async () => {
    // A JWZ carrying the right message, but not proved by its sender: the authV2 proof part is made up.
    const part = (x: unknown) => Buffer.from(JSON.stringify(x)).toString('base64url');
    const message = JSON.parse(plainResponse()) as Record<string, unknown>;
    message.typ = 'application/iden3-zkp-json';
    const fakeAuth = {
      proof: fixtureResponse.proof.proof,
      pub_signals: ['27152676987128542066808591998573000370436464722519513348891049644813718018', '1', '2'],
    };
    const token = `${part({ alg: 'groth16', circuitId: 'authV2', crit: ['circuitId'], typ: 'application/iden3-zkp-json' })}.${part(message)}.${part(fakeAuth)}`;
    expect(peekThreadId(token)).toBe(fixtureRequest.thid);
    const e = await rejection(verify(token, build()));
    expect(e).toBeInstanceOf(InvalidTokenError);
    expect(e).toMatchObject({ code: 'ZKP_INVALID_TOKEN', statusCode: 422 });
    expect(e.message).toMatch(/not made over this message/);
    // The thread is checked before the proof: a JWZ for another request is a thread mismatch.
    expect(await rejection(verify(token, build(undefined, { thid: randomUUID() })))).toBeInstanceOf(ThreadMismatchError);
  });

  it('peeks the thread id of an answer without verifying it', () => {
    expect(peekThreadId(plainResponse({ thid: 'abc' }))).toBe('abc');
    expect(() => peekThreadId('nope')).toThrow(MalformedResponseError);
  });
});
