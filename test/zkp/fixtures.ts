/**
 * The public iden3 test vectors, and helpers shaping them, read from ../shared/fixtures or .fixtures/ (`npm run
 * fixtures`) and never copied into the repository: the MTP V2 one from iden3/ (see haveMtpVector), the V3, linked and
 * selective-disclosure ones of js-iden3-auth's tests from zkp-v3-vectors/ (see haveV3Vectors; the README there names
 * their source and commit), today's circuits from zkp-stable-vectors/ (haveStableVector). Tests that use them skip
 * where they are absent.
 */
import { existsSync, readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import type { ZkpQueryConfiguration } from '../../src/zkp/index.js';
// Not through src/zkp/index.js: that loads js-iden3-auth, which test/zkp/lazy-load.test.ts shows is loaded only where needed.
import { createDocumentLoader } from '../../src/jsonld/documents.js';
import { loadConfig } from '../../src/config.js';
import { haveSharedFixtures, iden3Documents, sharedFixture } from '../shared-fixtures.js';

const MTP_REQUEST = sharedFixture('iden3/auth-request-mtp-v2.json');
const MTP_RESPONSE = sharedFixture('iden3/auth-response-mtp-v2.json');
const readShared = (file: string): unknown => (existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined);

/** Whether the MTP V2 vector is there (it warns, naming the files, when not): `describe.skipIf(!haveMtpVector())`. */
export const haveMtpVector = (): boolean => haveSharedFixtures('iden3/auth-request-mtp-v2.json', 'iden3/auth-response-mtp-v2.json');

export interface FixtureRequest {
  reason: string;
  message: string;
  sender: string;
  callbackUrl: string;
  thid: string;
  scope: Array<{ id: number; circuitId: string; query: Record<string, unknown> }>;
}
export interface FixtureProof {
  id: number;
  circuitId: string;
  proof: { pi_a: string[]; pi_b: string[][]; pi_c: string[]; protocol: string };
  pub_signals: string[];
}
export interface FixtureResponse {
  userId: string;
  sender: string;
  proof: FixtureProof;
}

// Undefined where ../shared/fixtures is absent: the tests that read them are skipped there (haveMtpVector).
export const fixtureRequest = readShared(MTP_REQUEST) as FixtureRequest;
export const fixtureResponse = readShared(MTP_RESPONSE) as FixtureResponse;

export const KYC_V3 = 'https://raw.githubusercontent.com/iden3/claim-schema-vocab/main/schemas/json-ld/kyc-v3.json-ld';
/** The vector's verifier (the request's sender) and holder (the answer's userId), written out: config tests use them. */
export const VERIFIER_DID = 'did:polygonid:polygon:mumbai:1125GJqgw6YEsKFwj63GY87MMxPL9kwDKxPUiwMLNZ';
export const USER_DID = 'did:polygonid:polygon:mumbai:2qPDLXDaU1xa1ERTb1XKBfPCB3o2wA46q49neiXWwY';
/** 2023-03-20T14:37:18Z: the proof's timestamp signal. */
/** The issuer of the fixture's credential (issuerID public signal). */
export const ISSUER_DID = 'did:polygonid:polygon:mumbai:2qJ689kpoJxcSzB5sAFJtPsSBSrHF5dq722BHMqURL';
export const PROOF_TIME_MS = 1679323038 * 1000;

/** The query configuration the fixture request was made from (request id 23, MTP V2, kyc-v3). */
export const fixtureConfiguration = (over: Partial<ZkpQueryConfiguration['query']> = {}): ZkpQueryConfiguration => ({
  id: 'q-residence',
  query: {
    type: 'KYCCountryOfResidenceCredential',
    requestId: 23,
    attribute: 'countryCode',
    operator: '$nin',
    value: [840, 120, 340, 509],
    context: KYC_V3,
    circuitId: 'credentialAtomicQueryMTPV2',
    ...over,
  },
});

/**
 * The fixture's answer is the wallet's proof only ({userId, sender, proof}), not a JWZ token: the JWZ envelope needs
 * an authV2 proof over the whole message, made with the holder's keys and the authV2 proving key, neither of which
 * is available offline. So it is wrapped into the plain iden3comm authorization response the proof belongs to.
 */
export function plainResponse(options: { thid?: string; proof?: FixtureProof; from?: string; to?: string; message?: string | null } = {}): string {
  return JSON.stringify({
    id: randomUUID(),
    typ: 'application/iden3comm-plain-json',
    type: 'https://iden3-communication.io/authorization/1.0/response',
    thid: options.thid ?? fixtureRequest.thid,
    from: options.from ?? fixtureResponse.userId,
    to: options.to ?? fixtureResponse.sender,
    body: {
      ...(options.message === null ? {} : { message: options.message ?? fixtureRequest.message }),
      scope: [options.proof ?? fixtureResponse.proof],
    },
  });
}

export const cloneProof = (): FixtureProof => structuredClone(fixtureResponse.proof);

const V3_VECTORS = ['v3-nullifier-authv2.json', 'linked-v3-lmq10-authv2.json', 'sd-sigv2-authv2.json'].map((f) => `zkp-v3-vectors/${f}`);
/** Whether the V3, linked and $sd vectors are there (it warns, naming the files, when not). */
export const haveV3Vectors = (): boolean => haveSharedFixtures(...V3_VECTORS);

/** The V3 vector: a real authV2 JWZ with two credentialAtomicQueryV3-beta.1 proofs (zkp-v3-vectors/README.md). */
export interface V3Vector {
  source: string;
  licence: string;
  verifierDid: string;
  message: string;
  scope: Array<{ id: number; circuitId: string; query: Record<string, unknown>; params?: Record<string, unknown> }>;
  token: string;
}
/** A vector of ../shared/fixtures/zkp-v3-vectors; where absent, an empty one, so that the files that use it load and skip. */
export const zkpVector = (name: string): V3Vector => (readShared(sharedFixture(`zkp-v3-vectors/${name}`)) as V3Vector | undefined) ?? {
  source: '', licence: '', verifierDid: '', message: '', scope: [],
  token: `.${Buffer.from(JSON.stringify({ thid: '', body: { scope: [] } })).toString('base64url')}.`,
};
export const v3Vector = zkpVector('v3-nullifier-authv2.json');
/** The V3 vector's authorization response (the JWZ payload), a fresh copy. */
export const v3Message = (): Record<string, unknown> & { thid: string; from: string; body: { scope: FixtureProof[] } } =>
  JSON.parse(Buffer.from(v3Vector.token.split('.')[1] ?? '', 'base64url').toString('utf8'));

/**
 * A document loader with iden3's KYC contexts from ../shared/fixtures, as the service gets them from its operator
 * (JSONLD_DOCUMENTS_FILE). Empty of them where the shared fixtures are absent: tests that need it check
 * haveIden3Documents() first.
 */
export const iden3DocumentLoader = () => createDocumentLoader({ documents: iden3Documents() });

/** The verifier's time settings as the configuration schema defaults them. */
export const verifierSettings = (({ proofMaxAgeMs, clockSkewMs, stateTransitionDelayMs }) => ({ proofMaxAgeMs, clockSkewMs, stateTransitionDelayMs }))(loadConfig({}).zkp);
/** The authorization request's lifetime and default circuit as the configuration schema defaults them. */
export const requestSettings = (({ requestTtlMs, defaultCircuitId }) => ({ ttlMs: requestTtlMs, defaultCircuitId }))(loadConfig({}).zkp);

const STABLE_VECTOR = 'zkp-stable-vectors/stable-v3-lmq3-authv3-8-32.json';
/** Whether the vector of today's circuits is there (it warns, naming the file, when not). */
export const haveStableVector = (): boolean => haveSharedFixtures(STABLE_VECTOR, 'iden3/jsonld-and-json-schemas.json');
/**
 * The vector of today's circuits (../shared/fixtures/zkp-stable-vectors/README.md): a request for linkedMultiQuery10
 * and credentialAtomicQueryV3, answered with linkedMultiQuery3 and credentialAtomicQueryV3-16-16-64 proofs, as plain
 * JSON (`response`) and as the same message in a JWZ proved with authV3-8-32 (`token`). Undefined where absent.
 */
export interface StableVector {
  request: { id: string; thid: string; from: string; body: { message: string; reason: string; scope: Array<Record<string, unknown> & { id: number; circuitId: string }> } };
  response: Record<string, unknown> & { thid: string; from: string; to: string; body: { message: string; scope: FixtureProof[] } };
  token: string;
}
export const stableVector = (): StableVector => readShared(sharedFixture(STABLE_VECTOR)) as StableVector;
