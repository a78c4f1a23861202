/**
 * One way per row of the failure table (src/zkp/verify-failures.ts) to make the installed library raise that
 * failure: mostly the library's Verifier on the public test vector, changed where the row needs it; the js-sdk
 * check itself where the vector cannot reach it (a proof with other signals would not verify); js-iden3-auth's
 * EthStateResolver over a made-up State contract for what a chain answers. Each returns what the library threw.
 */
import { resolver } from '@iden3/js-iden3-auth';
import { fixtureConfiguration, ISSUER_DID, USER_DID, v3Message, v3Vector } from './fixtures.js';
import {
  acceptAnyAuthProof, failureOf, forgeJwz, iden3Require, JWZ_HEADER, LIB_OPTS, libRequest, libResponse, USER_ID,
  type Library, type Message, type StateMode, type steeredResolvers,
} from './library.js';

export interface TriggerEnv {
  lib: Library;
  steer: ReturnType<typeof steeredResolvers>;
}
type Trigger = (env: TriggerEnv) => Promise<unknown>;
type Request = ReturnType<typeof libRequest>;
type Query = Request['body']['scope'][number]['query'] & Record<string, unknown>;

interface SdkModule {
  checkCircuitOperator(circuitId: string, operator: number): void;
  verifyFieldValueInclusionV2(outputs: object, metadata: object): void;
  VerifiableConstants: { ERRORS: { STATE_DOES_NOT_EXIST: string; ROOT_DOES_NOT_EXIST: string } };
}
const sdk = iden3Require('@0xpolygonid/js-sdk') as SdkModule;
const BigNumber = (iden3Require('ethers') as { BigNumber: { from(v: bigint | number): unknown } }).BigNumber;

const checkAnswer = ({ lib }: TriggerEnv, response: Message = libResponse(), request: Request = libRequest(), opts: object = LIB_OPTS) =>
  failureOf(() => lib.verifyAuthResponse(response, request, opts));

/** The vector's request with its query (or the whole scope entry) changed. */
function changed(change: (query: Query, entry: Request['body']['scope'][number]) => void): Request {
  const request = libRequest();
  const entry = request.body.scope[0];
  if (!entry) throw new Error('the vector request has a scope entry');
  change(entry.query as Query, entry);
  return request;
}

/** The vector's answer with its proof's signal `index` set to `value` (and the circuit id given). */
function withSignal(index: number, value: string, circuitId?: string): Message {
  const response = libResponse();
  const proof = response.body.scope[0] as { pub_signals: string[]; circuitId: string };
  proof.pub_signals[index] = value;
  if (circuitId) proof.circuitId = circuitId;
  return response;
}

/** Runs `run` with the resolvers in `mode`. */
async function inMode<T>({ steer }: TriggerEnv, mode: StateMode, run: () => Promise<T>): Promise<T> {
  steer.set(mode);
  try {
    return await run();
  } finally {
    steer.set('latest');
  }
}

/** Runs `run` with a prover that accepts every proof: what follows the Groth16 check, on signals no proof has. */
async function anyProof<T>({ lib }: TriggerEnv, run: () => Promise<T>): Promise<T> {
  const prover = lib.prover;
  lib.prover = { verify: async () => true };
  try {
    return await run();
  } finally {
    lib.prover = prover;
  }
}

/** Runs `run` with every JWZ auth proof accepted: what the packer checks after a valid proof. */
async function anyAuthProof<T>(run: () => Promise<T>): Promise<T> {
  const undo = await acceptAnyAuthProof();
  try {
    return await run();
  } finally {
    await undo();
  }
}

/** The vector's query twice (request ids 23 and 24) in one group, changed. */
function grouped(change: (first: Query, second: Query) => void): Request {
  const request = changed((query) => { query.groupId = 1; });
  const first = request.body.scope[0];
  if (!first) throw new Error('the vector request has a scope entry');
  const second = { ...structuredClone(first), id: 24 };
  change(first.query as Query, second.query as Query);
  request.body.scope.push(second);
  return request;
}

/** The vector's request with these accept profiles. */
function accepting(accept: string[]): Request {
  const request = libRequest();
  request.body.accept = accept;
  return request;
}

/** What the library's JWZ check (fullVerify) throws for `token`. */
async function fullVerify({ lib }: TriggerEnv, token: Promise<string>, request: Request = libRequest()): Promise<unknown> {
  const jwz = await token;
  return failureOf(() => lib.fullVerify(jwz, request, LIB_OPTS));
}
/** The forged JWZ with its header changed. */
const header = (over: Record<string, unknown>) => forgeJwz({ header: { ...JWZ_HEADER, ...over } });

/** The issuer of the vector (its issuerID signal), and a state of it that is not its genesis state. */
const ISSUER_ID = 27752766823371471408248225708681313764866231655187366071881070918984471042n;
const STATE = 1n;
/** js-iden3-auth's EthStateResolver over a State contract that answers as `contract` says. */
function chain(contract: Record<string, (...args: unknown[]) => Promise<unknown>>): resolver.EthStateResolver {
  const r = new resolver.EthStateResolver('http://127.0.0.1:9', `0x${'0'.repeat(40)}`);
  Object.assign(r as unknown as { _contract: unknown }, { _contract: contract });
  return r;
}
const stateInfo = (id: bigint, state: bigint) => async () => ({
  id: BigNumber.from(id), state: BigNumber.from(state), replacedAtTimestamp: BigNumber.from(0),
});
const rootInfo = (root: bigint, replacedBy: number) => async () => ({
  root: BigNumber.from(root), replacedByRoot: BigNumber.from(replacedBy), replacedAtTimestamp: BigNumber.from(0),
});
const SIGNED = 'iden3comm/v1;env=application/iden3comm-signed-json;alg=ES256K-R';
const PLAIN = 'iden3comm/v1;env=application/iden3comm-plain-json';

type V3Entry = (typeof v3Vector.scope)[number];
/**
 * The V3 vector's answer checked against its request with scope entry `id` alone (1: BJJ, group 2; 2: MTP, group 1,
 * nullifier session 12345), changed by `change`; `response` changes the answer.
 */
function checkV3({ lib }: TriggerEnv, id: 1 | 2, change: (entry: V3Entry, request: Record<string, unknown>) => void,
  response: (message: ReturnType<typeof v3Message>) => void = () => {}) {
  const entry = structuredClone(v3Vector.scope.find((e) => e.id === id) as V3Entry);
  const message = v3Message();
  const request: Record<string, unknown> = {
    id: message.thid, thid: message.thid, typ: 'application/iden3comm-plain-json', type: 'https://iden3-communication.io/authorization/1.0/request',
    from: v3Vector.verifierDid, body: { callbackUrl: 'https://svc.example/cb', reason: 'test', message: v3Vector.message, scope: [entry] },
  };
  change(entry, request);
  response(message);
  return failureOf(() => lib.verifyAuthResponse(message, request, LIB_OPTS));
}

export const TRIGGERS: Readonly<Record<string, Trigger>> = {
  'proof-type-bjj': (env) => checkV3(env, 2, (e) => { e.query.proofType = 'BJJSignature2021'; }),
  'proof-type-mtp': (env) => checkV3(env, 1, (e) => { e.query.proofType = 'Iden3SparseMerkleTreeProof'; }),
  'nullifier-missing': (env) => checkV3(env, 1, (e) => { e.params = { nullifierSessionId: '5' }; }),
  'nullifier-verifier': (env) => checkV3(env, 2, (_e, request) => { request.from = ISSUER_DID; }, (m) => { m.to = ISSUER_DID; }),
  'nullifier-session': (env) => checkV3(env, 2, (e) => { e.params = { nullifierSessionId: '999' }; }),
  'nullifier-unrequested': (env) => checkV3(env, 2, (e) => { delete e.params; }),
  'link-unrequested': (env) => checkV3(env, 1, (e) => { delete e.query.groupId; }),
  'link-missing': (env) => anyProof(env, () => checkV3(env, 1, () => {}, (m) => { (m.body.scope[0] as { pub_signals: string[] }).pub_signals[3] = '0'; })),
  // A linkedMultiQuery3 answer whose query hashes are none of the request's (made-up signals: no such proof exists).
  'linked-query-hash': (env) => anyProof(env, () => checkV3(env, 1, (e) => { e.id = 9; e.circuitId = 'linkedMultiQuery'; }, (m) => {
    const proof = m.body.scope[0] as { id: number; circuitId: string; pub_signals: string[] };
    Object.assign(proof, { id: 9, circuitId: 'linkedMultiQuery3', pub_signals: ['7', '0', '0', '0', '0', '1', '2', '3'] });
  })),

  'message-expired': ({ lib }) => failureOf(() => lib.verifyAuthResponse(libResponse(), { ...libRequest(), expires_time: 1 }, {})),
  'message-not-signed': (env) => checkAnswer(env, libResponse({ message: 'another message' })),
  'not-addressed': (env) => checkAnswer(env, libResponse({ to: USER_DID })),
  'accept-unsupported': ({ lib }) => failureOf(() => lib.verifyAuthRequest(accepting([SIGNED]))),
  'group-type': ({ lib }) => failureOf(() => lib.verifyAuthRequest(grouped((_first, second) => { second.type = 'KYCAgeCredential'; }))),
  'group-context': ({ lib }) => failureOf(() => lib.verifyAuthRequest(grouped((_first, second) => { second.context = 'https://x.example/c'; }))),
  'group-issuer': ({ lib }) => failureOf(() => lib.verifyAuthRequest(grouped((first, second) => {
    first.allowedIssuers = [ISSUER_DID];
    second.allowedIssuers = [USER_DID];
  }))),
  'no-proof': (env) => checkAnswer(env, { ...libResponse(), body: { ...libResponse().body, scope: [] } }),
  'no-sender': (env) => {
    const response = libResponse();
    delete response.from;
    return checkAnswer(env, response);
  },
  'proof-check-unavailable': async (env) => {
    const storage = env.lib.circuitStorage;
    const load = storage.loadCircuitData;
    storage.loadCircuitData = async () => { throw new Error('ENOENT: no such file or directory'); };
    try {
      return await checkAnswer(env);
    } finally {
      storage.loadCircuitData = load;
    }
  },
  'proof-invalid': (env) => {
    const response = libResponse();
    const proof = response.body.scope[0] as { proof: { pi_a: string[] } };
    proof.proof.pi_a[0] = (BigInt(proof.proof.pi_a[0] ?? '0') + 1n).toString();
    return checkAnswer(env, response);
  },
  'circuit-mismatch': (env) => checkAnswer(env, undefined, libRequest(fixtureConfiguration({ circuitId: 'credentialAtomicQuerySigV2' }))),
  'circuit-unsupported': (env) => anyProof(env, () => checkAnswer(env, withSignal(0, '1', 'credentialAtomicQueryMTPV2OnChain'),
    changed((_q, entry) => { (entry as { circuitId: string }).circuitId = 'credentialAtomicQueryMTPV2OnChain'; }))),
  // MTPV2 signals: merklized, userID, requestID (2), issuerID, issuerClaimIdenState, isRevocationChecked (5), ...
  'request-id-missing': (env) => anyProof(env, () => checkAnswer(env, withSignal(2, '0'))),
  'query-type-missing': (env) => checkAnswer(env, undefined, changed((query) => { delete (query as Partial<Query>).type; })),
  'context-unavailable': (env) => checkAnswer(env, undefined, libRequest(fixtureConfiguration({ context: 'https://elsewhere.example/kyc.jsonld' }))),
  'issuer-not-allowed': (env) => checkAnswer(env, undefined, libRequest(undefined, { allowedIssuers: [USER_DID] })),
  'schema-mismatch': (env) => checkAnswer(env, undefined, libRequest(fixtureConfiguration({ type: 'KYCAgeCredential', attribute: 'documentType' }))),
  'revocation-not-checked': (env) => anyProof(env, () => checkAnswer(env, withSignal(5, '0'))),
  'queries-count': (env) => checkAnswer(env, undefined, changed((query) => {
    query.credentialSubject = { ...query.credentialSubject, documentType: { $eq: 1 } };
  })),
  'circuit-rules-missing': async () => failureOf(() => sdk.checkCircuitOperator('credentialAtomicQueryNone', 1)),
  'proof-outdated': (env) => checkAnswer(env, undefined, undefined, { ...LIB_OPTS, acceptedProofGenerationDelay: 1 }),
  'operator-unsupported': async () => failureOf(() => sdk.checkCircuitOperator('credentialAtomicQueryMTPV2', 11)),
  operators: (env) => checkAnswer(env, undefined, libRequest(fixtureConfiguration({ value: [840, 120, 340] }))),
  disclosure: (env) => checkAnswer(env, undefined, changed((query) => { query.credentialSubject = { countryCode: {} }; })),
  'field-missing': async () => failureOf(() => sdk.verifyFieldValueInclusionV2({ operator: 1, merklized: 1, claimPathNotExists: 1 }, {})),
  'field-path': (env) => checkAnswer(env, undefined, libRequest(fixtureConfiguration({ attribute: 'documentType' }))),
  'field-slot': async () => failureOf(() => sdk.verifyFieldValueInclusionV2({ operator: 1, merklized: 0, slotIndex: 2 }, { slotIndex: 3 })),
  'issuer-resolver-missing': (env) => inMode(env, 'none', () => checkAnswer(env)),
  'issuer-state-outdated': (env) => inMode(env, 'replaced', () => checkAnswer(env)),
  'state-not-registered': async () => failureOf(() => chain({
    getStateInfoByIdAndState: async () => { throw new Error(sdk.VerifiableConstants.ERRORS.STATE_DOES_NOT_EXIST); },
  }).resolve(ISSUER_ID, STATE)),
  'state-other-identity': async () => failureOf(() => chain({ getStateInfoByIdAndState: stateInfo(ISSUER_ID + 1n, STATE) })
    .resolve(ISSUER_ID, STATE)),
  'state-no-transition': async () => failureOf(() => chain({ getStateInfoByIdAndState: stateInfo(ISSUER_ID, STATE + 1n) }).resolve(ISSUER_ID, STATE)),
  'sender-not-prover': (env) => checkAnswer(env, libResponse({ from: ISSUER_DID })),
  'challenge-mismatch': (env) => {
    const response = libResponse();
    (response.body.scope[0] as { id: number }).id = 24;
    return checkAnswer(env, response, libRequest(fixtureConfiguration({ requestId: 24 })));
  },

  'response-not-accepted': (env) => anyAuthProof(() => fullVerify(env, forgeJwz(), accepting([PLAIN]))),
  'jwz-typ-missing': (env) => fullVerify(env, header({ typ: undefined })),
  'jwz-no-packer': (env) => fullVerify(env, header({ typ: 'application/iden3comm-plain-json' })),
  'jwz-segments': (env) => fullVerify(env, forgeJwz().then((t) => t.split('.').slice(0, 2).join('.'))),
  'jwz-critical-header': (env) => fullVerify(env, forgeJwz({
    header: { ...JWZ_HEADER, crit: ['circuitId', 'nonce'] }, signals: [USER_ID, '1', '1'],
  })),
  'jwz-circuit-unsupported': (env) => fullVerify(env, header({ circuitId: 'auth' })),
  'jwz-challenge': (env) => fullVerify(env, forgeJwz({ signals: [USER_ID, '1', '1'] })),
  'jwz-proof-invalid': (env) => fullVerify(env, forgeJwz()),
  'jwz-sender': (env) => anyAuthProof(() => fullVerify(env, forgeJwz({ from: ISSUER_DID }))),
  'user-resolver-missing': (env) => anyAuthProof(() => inMode(env, 'none', () => fullVerify(env, forgeJwz()))),
  'global-state-outdated': (env) => anyAuthProof(() => inMode(env, 'replaced', () => fullVerify(env, forgeJwz()))),
  'gist-root-unknown': async () => failureOf(() => chain({
    getGISTRootInfo: async () => { throw new Error(sdk.VerifiableConstants.ERRORS.ROOT_DOES_NOT_EXIST); },
  }).rootResolve(STATE)),
  'gist-root-mismatch': async () => failureOf(() => chain({ getGISTRootInfo: rootInfo(STATE + 1n, 0) }).rootResolve(STATE)),
  'gist-replaced-time-unknown': async () => failureOf(() => chain({ getGISTRootInfo: rootInfo(STATE, 5) }).rootResolve(STATE)),
};
