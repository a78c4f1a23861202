/**
 * Read from @iden3/js-iden3-auth 1.14.0's code. The libraries raise plain Errors, so rows hold the exact message; a
 * message no row matches is an error, never a pass. Rows marked "first" are checked by verify.ts before the library.
 */
import { ProofCheckUnavailableError } from './groth16.js';
import { InvalidTokenError, MalformedResponseError, ResponseMismatchError, VerifierUnavailableError, type ZkpError } from './errors.js';

/** A test fails when another version is installed: read its code, update the rows. */
export const FAILURE_TABLE_VERSIONS = {
  '@iden3/js-iden3-auth': '1.14.0',
  '@0xpolygonid/js-sdk': '1.39.4',
  '@iden3/js-jwz': '1.12.2',
} as const;

export type FailurePackage = keyof typeof FAILURE_TABLE_VERSIONS;
type FailureSource = { package: FailurePackage; files: readonly string[] } | { module: 'src/zkp/groth16.ts' };
export type FailureVerdict = 'not-valid' | 'error' | 'refused';

export interface LibraryFailure {
  id: string;
  source: FailureSource;
  match: { errorClass: abstract new (...args: never[]) => Error } | { message: string };
  verdict: FailureVerdict;
  refuse?: new (message: string) => ZkpError;
  /** Never the library's text, which may quote values. */
  reason: (circuit: string) => string;
}

const AUTH = (file: string): FailureSource => ({ package: '@iden3/js-iden3-auth', files: [`dist/node/cjs/${file}`] });
const ATOMIC: FailureSource = {
  package: '@iden3/js-iden3-auth',
  files: ['dist/node/cjs/circuits/atomicMtpV2.js', 'dist/node/cjs/circuits/atomicSigV2.js', 'dist/node/cjs/circuits/atomicV3.js'],
};
const ATOMIC_V3 = AUTH('circuits/atomicV3.js');
const SDK: FailureSource = { package: '@0xpolygonid/js-sdk', files: ['dist/node/cjs/index.cjs'] };
const JWZ: FailureSource = { package: '@iden3/js-jwz', files: ['dist/node/cjs/index.cjs'] };
const RESOLVER = AUTH('state/resolver.js');

const row = (id: string, source: FailureSource, message: string, verdict: 'not-valid' | 'error', reason: string | ((circuit: string) => string)):
LibraryFailure => ({ id, source, match: { message }, verdict, reason: typeof reason === 'string' ? () => reason : reason });
const refusal = (id: string, source: FailureSource, message: string, refuse: LibraryFailure['refuse'], reason: string): LibraryFailure =>
  ({ id, source, match: { message }, verdict: 'refused', refuse, reason: () => reason });

const ANOTHER_QUERY = 'the proof answers another query (operator or values differ from the request)';
const ANOTHER_ATTRIBUTE = 'the proof is about another attribute than the one requested';
const BAD_GROUP = 'the request groups queries that cannot be proved together';

export const FAILURE_TABLE: readonly LibraryFailure[] = [
  // The answer as a whole (both paths).
  row('message-expired', SDK, 'Message expired', 'not-valid', 'the authorization request expired'), // first (410)
  refusal('message-not-signed', AUTH('auth/auth.js'), 'message for signing from request is not presented in response',
    ResponseMismatchError, 'the answer does not carry the message the request asked to sign'), // first
  refusal('not-addressed', AUTH('auth/auth.js'), 'sender of the request is not a target of response - expected {}, given {}',
    ResponseMismatchError, 'the answer is not addressed to the verifier that made the request'), // first
  row('accept-unsupported', AUTH('auth/auth.js'), 'no packer with profile which meets `accept` header requirements', 'error',
    "the request's accept profiles name no envelope this verifier can unpack"),
  row('group-type', AUTH('auth/auth.js'), 'all requests in the group should have the same type', 'error', BAD_GROUP),
  row('group-context', AUTH('auth/auth.js'), 'all requests in the group should have the same context', 'error', BAD_GROUP),
  row('group-issuer', AUTH('auth/auth.js'), 'all requests in the group should have the same issuer', 'error', BAD_GROUP),
  row('no-proof', AUTH('auth/auth.js'), 'proof is not given for requestId {}', 'not-valid', 'no proof was given for the request id'), // first
  refusal('no-sender', AUTH('auth/auth.js'), "proof response doesn't contain from field", MalformedResponseError,
    'the message has no from (the holder DID)'), // first (400)

  // One rule: the Groth16 proof and its circuit.
  {
    id: 'proof-check-unavailable', source: { module: 'src/zkp/groth16.ts' }, match: { errorClass: ProofCheckUnavailableError },
    verdict: 'error', reason: (c) => `the Groth16 check of the ${c} proof could not run (verification key or worker thread unavailable)`,
  },
  row('proof-invalid', AUTH('auth/auth.js'), 'Proof with circuit id {} and request id {} is not valid', 'not-valid',
    (c) => `the zero-knowledge proof does not verify against the ${c} verification key (tampered or made for other public inputs)`),
  row('circuit-mismatch', AUTH('auth/auth.js'), 'proof is not given for requested circuit expected: {}, given {}', 'not-valid',
    (c) => `the proof was made with another circuit than the requested ${c}`),
  row('circuit-unsupported', AUTH('auth/auth.js'), 'circuit {} is not supported by the library', 'error',
    (c) => `the verifier library cannot check ${c} proofs`),
  row('request-id-missing', AUTH('circuits/atomicMtpV2.js'), 'requestId is not presented in proof public signals', 'not-valid',
    'the proof carries no request id'),

  // One rule: the query (query.js and the js-sdk checks it calls).
  row('query-type-missing', AUTH('circuits/query.js'), 'proof query type is undefined', 'error',
    'the request names no credential type to check the proof against'), // first
  row('context-unavailable', AUTH('circuits/query.js'), "can't load schema for request query", 'error',
    'the JSON-LD context of the query is not available to the verifier'),
  row('issuer-not-allowed', SDK, 'issuer is not in allowed list', 'not-valid', 'the credential was issued by an issuer this scenario does not trust'),
  row('schema-mismatch', SDK, 'schema that was used is not equal to requested in query', 'not-valid',
    'the proof is about another credential type (schema) than the one requested'),
  row('revocation-not-checked', SDK, 'check revocation is required', 'not-valid', 'the proof skipped the revocation check of the credential'),
  row('queries-count', SDK, 'circuit {} supports only {} queries', 'error', (c) => `the request asks more than one ${c} proof can show`), // first
  row('circuit-rules-missing', SDK, 'circuit validation for {} is not found', 'error', (c) => `the verifier library has no query rules for ${c}`),
  row('proof-outdated', SDK, 'generated proof is outdated', 'not-valid', 'the proof is older than the accepted proof age'),
  row('operator-unsupported', SDK, 'circuit {} not support {} operator', 'not-valid', ANOTHER_QUERY),
  row('operators', AUTH('circuits/query.js'), 'failed to validate operators: {}', 'not-valid', ANOTHER_QUERY),
  row('disclosure', AUTH('circuits/query.js'), 'failed to validate selective disclosure: {}', 'not-valid',
    'the proof does not disclose the value the request asks for'),
  row('field-missing', SDK, "proof doesn't contains target query key", 'not-valid', ANOTHER_ATTRIBUTE),
  row('field-path', SDK, 'proof was generated for another path', 'not-valid', ANOTHER_ATTRIBUTE),
  row('field-slot', SDK, 'wrong claim slot was used in claim', 'not-valid', ANOTHER_ATTRIBUTE),

  // One rule: what only the V3 circuits (and linkedMultiQuery) prove.
  row('proof-type-bjj', ATOMIC_V3, 'wrong proof type for BJJSignature', 'not-valid',
    "the proof was not made with the credential's BJJSignature2021 proof, which the rule asks for"),
  row('proof-type-mtp', ATOMIC_V3, 'wrong proof type for Iden3SparseMerkleTreeProof', 'not-valid',
    "the proof was not made with the credential's Iden3SparseMerkleTreeProof, which the rule asks for"),
  row('nullifier-missing', ATOMIC_V3, 'nullifier should be provided for nullification and should not be 0', 'not-valid',
    'the proof carries no nullifier, which the rule asks for'),
  row('nullifier-verifier', ATOMIC_V3, 'wrong verifier is used for nullification', 'not-valid', 'the nullifier was made for another verifier'),
  row('nullifier-session', ATOMIC_V3, 'wrong verifier session id is used for nullification, expected {}, got {}', 'not-valid',
    "the nullifier was made for another session than the rule's nullifierSessionId"),
  row('nullifier-unrequested', ATOMIC_V3, "Nullifier id is generated but wasn't requested", 'not-valid',
    'the proof carries a nullifier the rule does not ask for'),
  row('link-unrequested', ATOMIC_V3, 'proof contains link id, but group id is not provided', 'not-valid',
    'the proof is linked to other proofs, which the rule does not ask for'),
  row('link-missing', ATOMIC_V3, "proof doesn't contain link id, but group id is provided", 'not-valid',
    'the proof is not linked to the other proofs of its group'),
  row('linked-query-hash', AUTH('circuits/linkedMultiQuery.js'), 'query hashes do not match', 'not-valid', ANOTHER_QUERY),

  // One rule: states (the verifier's checks, and what js-iden3-auth's EthStateResolver answers).
  row('issuer-resolver-missing', ATOMIC, 'resolver not found for issuerID {}', 'not-valid',
    "no state resolver is configured for the issuer's chain (ZKP_STATE_RESOLVERS)"),
  row('issuer-state-outdated', ATOMIC, 'issuer state is outdated', 'not-valid',
    "the proof uses an issuer state that was replaced too long ago (the credential's status may have changed)"),
  row('state-not-registered', RESOLVER, 'State is not genesis and not registered in the smart contract', 'not-valid',
    'the issuer state in the proof is not published on chain'),
  row('state-other-identity', RESOLVER, 'state was recorded for another identity', 'not-valid',
    'the state in the proof is published on chain for another identity'),
  row('state-no-transition', RESOLVER, 'no information about state transition', 'not-valid',
    'the state contract knows no transition for the state in the proof'),
  // One rule: the proof was made for this sender and this request.
  row('sender-not-prover', AUTH('circuits/ownershipVerifier.js'),
    'sender id is not used for proof creation, expected {}, user from public signals: {}', 'not-valid',
    'the proof was made for another identity than the sender of the answer'),
  row('challenge-mismatch', AUTH('circuits/ownershipVerifier.js'),
    'challenge is not used for proof creation, expected {}, challenge from public signals: {}  ', 'not-valid',
    'the proof was made for another request id'),

  // The JWZ envelope (fullVerify: js-sdk's packer, js-jwz, the authV2/authV3 state check).
  row('response-not-accepted', AUTH('auth/auth.js'), 'response type is not in accept profiles of the request', 'not-valid',
    "the answer's envelope is not one the request accepts"),
  row('jwz-typ-missing', SDK, "missing header 'typ' in the envelope", 'not-valid', 'the token header names no supported typ'),
  row('jwz-no-packer', SDK, 'packer for media type {} not found', 'not-valid', "the token's typ names an envelope this verifier does not unpack"),
  row('jwz-segments', JWZ, 'iden3/js-jwz: compact JWZ format must have three segments', 'not-valid', 'the token does not have three parts'), // first
  row('jwz-critical-header', JWZ, 'iden3/js-jwz: header is listed in critical {}, but not presented', 'not-valid',
    'a header the token lists as critical is missing'),
  row('jwz-circuit-unsupported', SDK, 'message was packed with unsupported circuit', 'error',
    (c) => `the verifier holds no verification key for ${c}, the circuit of the token`),
  row('jwz-challenge', JWZ, 'challenge is not equal to message hash', 'not-valid', "the token's proof was not made over this message"),
  row('jwz-proof-invalid', SDK, 'message proof is invalid', 'not-valid', "the token's zero-knowledge proof does not verify"),
  row('jwz-sender', SDK, 'sender of message is not used for jwz token creation', 'not-valid',
    'the token was not proved by the identity that sent it'),
  row('user-resolver-missing', AUTH('circuits/authV2.js'), 'resolver not found for id {}', 'not-valid',
    "no state resolver is configured for the holder's chain (ZKP_STATE_RESOLVERS)"),
  row('global-state-outdated', AUTH('circuits/authV2.js'), 'global state is outdated', 'not-valid',
    "the token's proof uses a global state (GIST root) that was replaced too long ago"),
  row('gist-root-unknown', RESOLVER, 'GIST root does not exist in the smart contract', 'not-valid',
    "the global state (GIST root) in the token's proof is not published on chain"),
  row('gist-root-mismatch', RESOLVER, 'gist info contains invalid state', 'not-valid', 'the state contract answered for another GIST root'),
  row('gist-replaced-time-unknown', RESOLVER, 'state was replaced, but replaced time unknown', 'error',
    'the state contract does not say when the GIST root in the proof was replaced'),
];

export const MESSAGE_HOLE = '{}';
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function recogniser(failure: LibraryFailure): (e: unknown) => boolean {
  if ('errorClass' in failure.match) {
    const errorClass = failure.match.errorClass;
    return (e) => e instanceof errorClass;
  }
  const { message } = failure.match;
  if (!message.includes(MESSAGE_HOLE)) return (e) => e instanceof Error && e.message === message;
  const pattern = new RegExp(`^${message.split(MESSAGE_HOLE).map(escapeRegExp).join('[\\s\\S]*')}$`);
  return (e) => e instanceof Error && pattern.test(e.message);
}

const RECOGNISERS = [...FAILURE_TABLE]
  .sort((a, b) => Number('message' in a.match) - Number('message' in b.match))
  .map((failure) => ({ failure, test: recogniser(failure) }));

export function findFailure(e: unknown): LibraryFailure | undefined {
  return RECOGNISERS.find((r) => r.test(e))?.failure;
}

/** What a state contract answers about the proof's state: a fact, not a failure of the resolver. */
export function isResolverFact(e: unknown): boolean {
  const failure = findFailure(e);
  return failure !== undefined && failure.source === RESOLVER && failure.verdict === 'not-valid';
}

export interface FailureJudgement {
  id: string;
  verdict: FailureVerdict;
  reason: string;
  refuse?: new (message: string) => ZkpError;
}

export const UNRECOGNISED_FAILURE = 'unrecognised';

export function judgeFailure(e: unknown, circuit: string): FailureJudgement {
  const failure = findFailure(e);
  if (failure) return { id: failure.id, verdict: failure.verdict, reason: failure.reason(circuit), refuse: failure.refuse };
  const message = (e instanceof Error ? `${e.name}: ${e.message}` : String(e)).slice(0, 200);
  return {
    id: UNRECOGNISED_FAILURE,
    verdict: 'error',
    reason: `the verifier library failed in a way this service does not recognise (not in its failure table): ${message}`,
  };
}

/** The JWZ envelope holds no verdict: a failure there refuses the whole answer. */
export function envelopeRefusal(judged: FailureJudgement, cause: unknown): ZkpError {
  const Refusal = judged.refuse;
  if (judged.verdict === 'refused' && Refusal) return new Refusal(judged.reason);
  if (judged.verdict === 'not-valid') return new InvalidTokenError(`the JWZ token does not verify: ${judged.reason}`, { cause });
  return new VerifierUnavailableError(`the answer could not be verified: ${judged.reason}`, { cause });
}
