/**
 * The failure table (src/zkp/verify-failures.ts) against the installed libraries: the versions it was read from,
 * each row's message still in its source, rows that cannot be mistaken for one another, the default for a failure
 * no row names, and what each kind of verdict becomes on a rule and on the JWZ envelope.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import * as groth16 from '../../src/zkp/groth16.js';
import {
  createDocumentLoader, createZkpVerifier, InvalidTokenError, ResponseMismatchError, VerifierUnavailableError, type ZkpVerifier,
} from '../../src/zkp/index.js';
import { watchDependencies } from '../../src/zkp/verify-dependencies.js';
import type { ResponseMessage } from '../../src/zkp/verify-envelope.js';
import {
  envelopeRefusal, FAILURE_TABLE, FAILURE_TABLE_VERSIONS, findFailure, judgeFailure, MESSAGE_HOLE, UNRECOGNISED_FAILURE,
  type FailurePackage, type LibraryFailure,
} from '../../src/zkp/verify-failures.js';
import { judgeRule } from '../../src/zkp/verify-rule.js';
import { haveMtpVector, iden3DocumentLoader, ISSUER_DID, plainResponse, USER_DID, verifierSettings } from './fixtures.js';
import { haveIden3Documents, iden3Documents } from '../shared-fixtures.js';
import {
  acceptAnyAuthProof, buildPending, forgeJwz, JWZ_HEADER, libRequest, libResponse, packageDir, rejection, steeredResolvers, WIDE,
  type StateMode,
} from './library.js';

const present = haveMtpVector() && haveIden3Documents();

const messageRows = FAILURE_TABLE.flatMap((f) => ('message' in f.match && 'package' in f.source
  ? [{ id: f.id, message: f.match.message, pkg: f.source.package, files: f.source.files }]
  : []));
const classRows = FAILURE_TABLE.filter((f) => 'errorClass' in f.match);
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A message as the library's source writes it: a string literal, or a template literal with ${...} for the holes. */
function literalIn(source: string, message: string): boolean {
  if (!message.includes(MESSAGE_HOLE)) return ['"', "'", '`'].some((q) => source.includes(`${q}${message}${q}`));
  return new RegExp(`\`${message.split(MESSAGE_HOLE).map(escapeRegExp).join('\\$\\{[^}]+\\}')}\``).test(source);
}
/** A message the row's failure could carry. */
const sample = (message: string) => message.split(MESSAGE_HOLE).join('value 1');

describe('the table and the installed libraries', () => {
  it.each(Object.entries(FAILURE_TABLE_VERSIONS))('was read from %s %s, the version installed', (pkg, version) => {
    const installed = JSON.parse(readFileSync(path.join(packageDir(pkg as FailurePackage), 'package.json'), 'utf8')) as { version: string };
    expect(installed.version, `read ${pkg} ${installed.version} for the failures it raises, then update the table`).toBe(version);
  });

  it.each(messageRows.map((r) => [r.id, r] as const))('%s: the message still stands in the library', (_id, row) => {
    for (const file of row.files) {
      const source = readFileSync(path.join(packageDir(row.pkg), file), 'utf8');
      expect(literalIn(source, row.message), `${row.pkg}/${file} no longer raises ${JSON.stringify(row.message)}`).toBe(true);
    }
  });

  it('names error classes that groth16.ts throws', () => {
    expect(classRows.map((f) => f.id)).toEqual(['proof-check-unavailable']);
    for (const f of classRows) expect(Object.values(groth16)).toContain('errorClass' in f.match && f.match.errorClass);
  });

  it('has rows no failure can be mistaken between, whatever the values in their messages', () => {
    expect(new Set(FAILURE_TABLE.map((f) => f.id)).size).toBe(FAILURE_TABLE.length);
    for (const row of messageRows) {
      const matching = FAILURE_TABLE.filter((f) => findFailure(new Error(sample(row.message))) === f);
      expect(matching.map((f) => f.id), row.message).toEqual([row.id]);
    }
    expect(findFailure(new groth16.ProofCheckUnavailableError('x'))?.id).toBe('proof-check-unavailable');
    // A message with more around it is not the row's.
    expect(findFailure(new Error('wrapped: generated proof is outdated'))).toBeUndefined();
  });
});

describe('a failure no row names', () => {
  it.each([
    ['a new message', new Error('proof is not valid anymore')],
    ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'latest')")],
    ['a thrown string', 'boom'],
  ])('is error (undecided), and said to be unrecognised: %s', (_what, e) => {
    const judged = judgeFailure(e, 'credentialAtomicQueryMTPV2');
    expect(judged).toMatchObject({ id: UNRECOGNISED_FAILURE, verdict: 'error' });
    expect(judged.reason).toMatch(/^the verifier library failed in a way this service does not recognise \(not in its failure table\): /);
    expect(envelopeRefusal(judged, e)).toBeInstanceOf(VerifierUnavailableError);
  });
});

describe.skipIf(!present)('what a verdict becomes', () => {
  const row = (id: string) => FAILURE_TABLE.find((f) => f.id === id) as LibraryFailure;
  const failing = (id: string) => {
    const f = row(id);
    return new Error('message' in f.match ? sample(f.match.message) : id);
  };

  it('on the JWZ envelope: not-valid refuses the token (422), error leaves it undecided (503), refused refuses the answer', () => {
    expect(envelopeRefusal(judgeFailure(failing('jwz-proof-invalid'), 'authV2'), null)).toMatchObject({
      statusCode: 422, message: "the JWZ token does not verify: the token's zero-knowledge proof does not verify",
    });
    expect(envelopeRefusal(judgeFailure(failing('jwz-proof-invalid'), 'authV2'), null)).toBeInstanceOf(InvalidTokenError);
    const undecided = envelopeRefusal(judgeFailure(failing('jwz-circuit-unsupported'), 'authV3'), null);
    expect(undecided).toBeInstanceOf(VerifierUnavailableError);
    expect(undecided.message).toBe('the answer could not be verified: the verifier holds no verification key for authV3, the circuit of the token');
    expect(envelopeRefusal(judgeFailure(failing('not-addressed'), 'authV2'), null)).toBeInstanceOf(ResponseMismatchError);
  });

  it('on a rule: the verdict and reason of the row, the refusal of the whole answer for refused rows', async () => {
    const steer = steeredResolvers();
    const judge = (e: unknown) => judgeRule({
      checkAuthResponse: () => Promise.reject(e),
      watch: watchDependencies(steer.resolvers, createDocumentLoader({ documents: iden3Documents() })),
      now: Date.now(), proofMaxAgeMs: WIDE, clockSkewMs: 60_000,
      request: libRequest(), message: libResponse() as unknown as ResponseMessage,
    }, { objectId: 'q', requestId: 23, circuitId: 'credentialAtomicQueryMTPV2' }, libRequest().body.scope[0]!,
    (libResponse() as unknown as ResponseMessage).body.scope[0]);
    expect(await judge(failing('issuer-not-allowed'))).toMatchObject({
      status: 'not-valid', is_valid: false, reasons: ['the credential was issued by an issuer this scenario does not trust'],
    });
    expect(await judge(failing('circuit-unsupported'))).toMatchObject({
      status: 'error', is_valid: false, reasons: ['the verifier library cannot check credentialAtomicQueryMTPV2 proofs'],
    });
    expect(await judge(new Error('something new'))).toMatchObject({ status: 'error', reasons: [expect.stringMatching(/does not recognise/)] });
    await expect(judge(failing('message-not-signed'))).rejects.toBeInstanceOf(ResponseMismatchError);
  });
});

describe.skipIf(!present)('through the verifier', () => {
  const steer = steeredResolvers();
  let verifier: ZkpVerifier;
  beforeAll(async () => {
    verifier = await createZkpVerifier({ ...verifierSettings, documentLoader: iden3DocumentLoader(), stateResolvers: steer.resolvers, proofMaxAgeMs: WIDE, allowPlainMessages: true, replayGuard: null });
  });
  const pending = () => buildPending();
  async function inMode<T>(mode: StateMode, run: () => Promise<T>): Promise<T> {
    steer.set(mode);
    try {
      return await run();
    } finally {
      steer.set('latest');
    }
  }
  const refusal = async (token: Promise<string>) => rejection(verifier.verify(await token, pending()));

  it('answers error for a rule whose check fails in a way no row names (here a resolver answering nonsense)', async () => {
    const { verdicts } = await inMode('garbage', () => verifier.verify(plainResponse(), pending()));
    expect(verdicts[0]).toMatchObject({ status: 'error', is_valid: false, reasons: [expect.stringMatching(/does not recognise.*TypeError/)] });
  });

  it('refuses a JWZ by its failure: 422 when it does not verify, 503 when undecided, 400 without crit', async () => {
    expect(await refusal(forgeJwz())).toMatchObject({
      statusCode: 422, message: "the JWZ token does not verify: the token's zero-knowledge proof does not verify",
    });
    expect(await refusal(forgeJwz({ header: { ...JWZ_HEADER, typ: undefined } }))).toMatchObject({
      statusCode: 422, message: 'the JWZ token does not verify: the token header names no supported typ',
    });
    expect(await refusal(forgeJwz({ header: { ...JWZ_HEADER, crit: undefined }, signals: ['1', '1', '1'] })))
      .toMatchObject({ statusCode: 400, code: 'ZKP_MALFORMED_RESPONSE' });
    const undo = await acceptAnyAuthProof();
    try {
      // Its auth proof taken as valid: the envelope passes, and the query proof of the vector verifies.
      expect(await verifier.verify(await forgeJwz(), pending())).toMatchObject({ envelope: 'jwz', userDid: USER_DID, is_valid: true });
      expect(await refusal(forgeJwz({ from: ISSUER_DID }))).toMatchObject({
        statusCode: 422, message: expect.stringMatching(/not proved by the identity/),
      });
      expect(await inMode('replaced', () => refusal(forgeJwz()))).toMatchObject({ statusCode: 422, message: expect.stringMatching(/global state/) });
      expect(await inMode('none', () => refusal(forgeJwz()))).toMatchObject({ statusCode: 422, message: expect.stringMatching(/no state resolver/) });
      expect(await inMode('down', () => refusal(forgeJwz()))).toMatchObject({
        statusCode: 503, message: 'the answer could not be verified now: the state resolver of polygon:mumbai failed',
      });
      expect(await inMode('garbage', () => refusal(forgeJwz()))).toMatchObject({
        statusCode: 503, message: expect.stringMatching(/does not recognise/),
      });
    } finally {
      await undo();
    }
  });
});
