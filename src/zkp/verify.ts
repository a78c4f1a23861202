/**
 * Verification of a wallet's answer to an authorization request, with js-iden3-auth's Verifier:
 *
 *   decode (400) -> thread id matches this request (409) -> request not expired (410) -> addressed to this verifier,
 *   same signed message, only request ids that were asked (422) -> JWZ envelope: authV2/authV3 proof, user state,
 *   and the proof was made over this message by its `from` identity (422, or 503 when a resolver is down)
 *   -> per rule: Groth16 proof against the shipped verification key, circuit, query (schema, operator, values,
 *   attribute path, allowed issuer, revocation checked), proof age, issuer state, proof made for `from` and this
 *   request id -> replay guard (409).
 *
 * Typed errors (ZkpError) mean "the answer cannot be acted on": the execution must stay unchanged. Otherwise the
 * answer yields one verdict per rule. Load the verifier once (createZkpVerifier) and reuse it: verification keys
 * are read at creation, and each proof then takes ~100-200 ms of CPU.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';
import path from 'node:path';
import { auth } from '@iden3/js-iden3-auth';
import { AtomicQueryMTPV2PubSignals, AtomicQuerySigV2PubSignals } from './sdk.js';
import { isCanonicalIden3Did } from './did.js';
import { DID, type Id } from '../trust/iden3.js';
import { didAddressMatches } from '../trust/holder.js';
import { createDocumentLoader, type OfflineDocumentLoader } from './documents.js';
import { offloadGroth16 } from './groth16.js';
import {
  InvalidTokenError, MalformedResponseError, ProofReplayedError, RequestExpiredError, ResponseMismatchError,
  ThreadMismatchError, UnsupportedResponseError, VerifierUnavailableError, ZkpError, ZkpOptionsError,
} from './errors.js';
import { InMemoryReplayGuard, proofFingerprint, type ProofReplayGuard } from './replay.js';
import {
  AUTHORIZATION_RESPONSE_TYPE, PLAIN_MEDIA_TYPE, type AuthorizationRequest, type PendingAuthorization, type PendingRule,
} from './request.js';
import type { StateResolver, StateResolvers } from './state.js';

export const DEFAULT_PROOF_MAX_AGE_MS = 60 * 60_000;
export const DEFAULT_CLOCK_SKEW_MS = 5 * 60_000;
export const DEFAULT_STATE_TRANSITION_DELAY_MS = 60 * 60_000;
/** Longest token accepted (a JWZ with a few proofs is ~10-20 KiB). */
export const MAX_TOKEN_LENGTH = 1024 * 1024;

export interface ZkpVerifierOptions {
  /** Chain key ("polygon:amoy") -> state resolver (createRpcStateResolvers; alwaysLatestStateResolvers in tests). */
  stateResolvers: StateResolvers;
  /** Offline JSON-LD loader (default: the bundled documents only). */
  documentLoader?: OfflineDocumentLoader;
  /** Directory of <circuitId>/verification_key.json (env ZKP_CIRCUITS_DIR; default: the keys shipped in js-iden3-auth). */
  circuitsDir?: string;
  /** Oldest accepted proof, ms between its timestamp signal and verification (env ZKP_PROOF_MAX_AGE_SECONDS, default 3600 s). */
  proofMaxAgeMs?: number;
  /** How far in the future a proof timestamp may be, ms (env ZKP_CLOCK_SKEW_SECONDS, default 300 s). */
  clockSkewMs?: number;
  /**
   * How long after an issuer replaced its non-revocation state a proof against the old one is accepted, ms
   * (env ZKP_STATE_TRANSITION_DELAY_SECONDS, default 3600 s).
   */
  stateTransitionDelayMs?: number;
  /**
   * Accept unsigned plain iden3comm messages (JSON text) besides JWZ tokens (env ZKP_ALLOW_PLAIN_RESPONSES, default
   * false). Unsafe in production: nothing proves that the sender controls the `from` identity.
   */
  allowPlainMessages?: boolean;
  /** Replay guard (default: one InMemoryReplayGuard per verifier); null disables the check. */
  replayGuard?: ProofReplayGuard | null;
}

export type VerdictStatus = 'valid' | 'not-valid' | 'error';

/** The verdict for one rule (query configuration). */
export interface ZkpVerdict {
  objectId: string;
  requestId: number;
  circuitId: string;
  /** valid; not-valid (the proof does not show the rule holds); error (could not be decided: never a pass). */
  status: VerdictStatus;
  is_valid: boolean;
  /** Empty when valid. Never quotes credential values (a ZK proof reveals none). */
  reasons: string[];
  /** DID of the credential's issuer, from the proof's public signals. */
  issuer?: string;
  /** When the wallet made the proof (its timestamp signal), ISO 8601. */
  proofTimestamp?: string;
}

export interface ZkpVerification {
  thid: string;
  /** The holder's DID (`from`): authenticated by the JWZ proof; claimed only, for a plain message. */
  userDid: string;
  envelope: 'jwz' | 'plain';
  /** One per rule of the pending authorization, in its order. */
  verdicts: ZkpVerdict[];
  /** Every verdict valid. */
  is_valid: boolean;
}

export interface VerifyCallOptions {
  /** Epoch ms (default Date.now()): request expiry and proof age are judged at this instant. */
  now?: number;
  /**
   * The execute request's address. Where the proving identity (`from`) is made from an Ethereum address (an
   * Ethereum-controlled iden3 identity), it must be this address: the answer is refused (422) otherwise, before any
   * proof is checked. Other identities (BabyJubJub keys) encode no address: nothing in the answer binds them to it.
   */
  address?: string;
}

/** A loaded verifier: create once per process with createZkpVerifier, then call verify for each answer. */
export interface ZkpVerifier {
  verify(token: string, pending: PendingAuthorization, options?: VerifyCallOptions): Promise<ZkpVerification>;
}

// ---------------------------------------------------------------------------------------------------------------
// Decoding

interface ProofResponse {
  id: number;
  circuitId: string;
  proof: { pi_a: string[]; pi_b: string[][]; pi_c: string[]; protocol?: string; curve?: string };
  pub_signals: string[];
  vp?: unknown;
}

interface ResponseMessage {
  id: string;
  typ?: string;
  type: string;
  thid: string;
  from: string;
  to?: string;
  body: { message?: string; scope: ProofResponse[]; [k: string]: unknown };
  [k: string]: unknown;
}

interface DecodedResponse {
  envelope: 'jwz' | 'plain';
  message: ResponseMessage;
}

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
const DECIMAL = /^[0-9]{1,80}$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const AUTH_CIRCUITS = new Set(['authV2', 'authV3', 'authV3-8-32']);
const MAX_SIGNALS = 512;

function decodeJsonPart(part: string, what: string): unknown {
  if (!BASE64URL.test(part)) throw new MalformedResponseError(`the token's ${what} is not base64url`);
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    throw new MalformedResponseError(`the token's ${what} is not base64url-encoded JSON`);
  }
}

function decodeResponse(token: unknown, allowPlain: boolean): DecodedResponse {
  if (typeof token !== 'string' || token.trim().length === 0) {
    throw new MalformedResponseError('the body must be the JWZ token of an iden3comm authorization response');
  }
  if (token.length > MAX_TOKEN_LENGTH) throw new MalformedResponseError(`the token is longer than ${MAX_TOKEN_LENGTH} characters`);
  const text = token.trim();
  if (text.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new MalformedResponseError('the body is neither a JWZ token nor a JSON iden3comm message');
    }
    if (!allowPlain) {
      throw new UnsupportedResponseError('unsigned (plain JSON) responses are not accepted: send the JWZ token the wallet produced');
    }
    const message = checkMessage(parsed);
    if (message.typ !== undefined && message.typ !== PLAIN_MEDIA_TYPE) {
      throw new MalformedResponseError(`a JSON message must have typ ${PLAIN_MEDIA_TYPE}`);
    }
    return { envelope: 'plain', message };
  }
  const parts = text.split('.');
  if (parts.length === 5) throw new UnsupportedResponseError('encrypted (JWE) responses are not supported: send the JWZ token');
  if (parts.length !== 3) throw new MalformedResponseError('the token is not a JWZ (three base64url parts separated by dots)');
  const header = decodeJsonPart(parts[0], 'header');
  if (!isRecord(header)) throw new MalformedResponseError('the token header is not a JSON object');
  if (header.alg !== 'groth16') {
    throw new UnsupportedResponseError(`tokens signed with ${JSON.stringify(String(header.alg).slice(0, 32))} are not supported: ` +
      'only JWZ tokens (alg groth16) are accepted');
  }
  if (typeof header.circuitId !== 'string' || !AUTH_CIRCUITS.has(header.circuitId)) {
    throw new UnsupportedResponseError(`JWZ tokens proved with circuit ${JSON.stringify(String(header.circuitId).slice(0, 64))} are not ` +
      `supported (expected ${[...AUTH_CIRCUITS].join(', ')})`);
  }
  const message = checkMessage(decodeJsonPart(parts[1], 'payload'));
  const zkp = decodeJsonPart(parts[2], 'proof');
  if (!isRecord(zkp) || !isRecord(zkp.proof) || !Array.isArray(zkp.pub_signals)) {
    throw new MalformedResponseError('the token proof part must be {proof, pub_signals}');
  }
  return { envelope: 'jwz', message };
}

function checkMessage(x: unknown): ResponseMessage {
  if (!isRecord(x)) throw new MalformedResponseError('the message is not a JSON object');
  if (x.type !== AUTHORIZATION_RESPONSE_TYPE) {
    throw new MalformedResponseError(`the message type must be ${AUTHORIZATION_RESPONSE_TYPE}`);
  }
  if (typeof x.id !== 'string' || x.id.length === 0) throw new MalformedResponseError('the message has no id');
  if (typeof x.thid !== 'string' || x.thid.length === 0) throw new MalformedResponseError('the message has no thid (thread id)');
  if (typeof x.from !== 'string') throw new MalformedResponseError('the message has no from (the holder DID)');
  if (!isCanonicalIden3Did(x.from)) throw new MalformedResponseError('the message from is not an iden3 DID');
  if (x.to !== undefined && typeof x.to !== 'string') throw new MalformedResponseError('the message to must be a DID');
  const body = x.body;
  if (!isRecord(body)) throw new MalformedResponseError('the message has no body');
  if (body.message !== undefined && body.message !== null && typeof body.message !== 'string') {
    throw new MalformedResponseError('body.message must be a string');
  }
  if (!Array.isArray(body.scope)) throw new MalformedResponseError('body.scope must be an array of proofs');
  if (body.scope.length > 256) throw new MalformedResponseError('body.scope holds too many proofs');
  const seen = new Set<number>();
  body.scope.forEach((p, i) => {
    const at = `body.scope[${i}]`;
    if (!isRecord(p)) throw new MalformedResponseError(`${at} is not an object`);
    if (!Number.isSafeInteger(p.id) || (p.id as number) < 0) throw new MalformedResponseError(`${at}.id must be the request id (an integer)`);
    if (seen.has(p.id as number)) throw new MalformedResponseError(`${at}.id: two proofs for request id ${p.id as number}`);
    seen.add(p.id as number);
    if (typeof p.circuitId !== 'string' || p.circuitId.length === 0) throw new MalformedResponseError(`${at}.circuitId is missing`);
    const proof = p.proof;
    const point = (v: unknown, n: number) => Array.isArray(v) && v.length === n && v.every((e) => typeof e === 'string' && DECIMAL.test(e));
    if (!isRecord(proof) || !point(proof.pi_a, 3) || !point(proof.pi_c, 3) ||
      !(Array.isArray(proof.pi_b) && proof.pi_b.length === 3 && proof.pi_b.every((row) => point(row, 2)))) {
      throw new MalformedResponseError(`${at}.proof must be a Groth16 proof {pi_a[3], pi_b[3][2], pi_c[3]} of decimal strings`);
    }
    // snarkjs writes affine points with z = 1 (pi_b: [1, 0]); the verifier ignores z, so any other z is refused here
    // rather than letting two encodings of one proof through.
    const pa = proof.pi_a as string[];
    const pb = proof.pi_b as string[][];
    const pc = proof.pi_c as string[];
    if (pa[2] !== '1' || pc[2] !== '1' || pb[2][0] !== '1' || pb[2][1] !== '0') {
      throw new MalformedResponseError(`${at}.proof: points must be affine as snarkjs writes them (pi_a[2] = pi_c[2] = "1", pi_b[2] = ["1", "0"])`);
    }
    if (proof.protocol !== undefined && proof.protocol !== 'groth16') throw new MalformedResponseError(`${at}.proof.protocol must be groth16`);
    if (!Array.isArray(p.pub_signals) || p.pub_signals.length === 0 || p.pub_signals.length > MAX_SIGNALS ||
      !p.pub_signals.every((s) => typeof s === 'string' && DECIMAL.test(s))) {
      throw new MalformedResponseError(`${at}.pub_signals must be an array of decimal strings`);
    }
  });
  return x as unknown as ResponseMessage;
}

/**
 * The thread id a posted answer claims (unverified: use it only to find the pending execution; verify checks it).
 * Throws MalformedResponseError / UnsupportedResponseError like verify would.
 */
export function peekThreadId(token: string): string {
  return decodeResponse(token, true).message.thid;
}

// ---------------------------------------------------------------------------------------------------------------
// Infrastructure failures (a resolver's RPC down, a document missing) are recorded per verification, so that the
// verdict says "error" (undecided) instead of "not-valid".

interface CallContext {
  infra: string[];
}
const callContext = new AsyncLocalStorage<CallContext>();

/** Answers of a state contract that are facts about the proof, not failures of the resolver. */
const STATE_FACTS = /not genesis and not registered|recorded for another identity|no information about state transition|GIST root does not exist|gist info contains invalid state/i;

function wrapResolver(r: StateResolver, chain: string): StateResolver {
  const guard = async <T>(f: () => Promise<T>): Promise<T> => {
    try {
      return await f();
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      if (!STATE_FACTS.test(msg)) callContext.getStore()?.infra.push(`the state resolver of ${chain} failed`);
      throw e;
    }
  };
  return {
    resolve: (id, state) => guard(() => r.resolve(id, state)),
    rootResolve: (state) => guard(() => r.rootResolve(state)),
  };
}

function wrapResolvers(resolvers: StateResolvers): StateResolvers {
  const wrapped = new Map<string, StateResolver>();
  return new Proxy({} as StateResolvers, {
    get(_t, key) {
      if (typeof key !== 'string') return undefined;
      const r = resolvers[key];
      if (!r) return undefined;
      let w = wrapped.get(key);
      if (!w) wrapped.set(key, (w = wrapResolver(r, key)));
      return w;
    },
  });
}

function wrapLoader(loader: OfflineDocumentLoader): OfflineDocumentLoader {
  const wrapped = (async (url: string) => {
    try {
      return await loader(url);
    } catch (e) {
      callContext.getStore()?.infra.push(`the JSON-LD document ${JSON.stringify(String(url).slice(0, 200))} is not available to the verifier`);
      throw e;
    }
  }) as OfflineDocumentLoader;
  Object.defineProperty(wrapped, 'has', { value: (url: string) => loader.has(url) });
  Object.defineProperty(wrapped, 'urls', { value: loader.urls });
  return wrapped;
}

// ---------------------------------------------------------------------------------------------------------------
// Reasons

const REASONS: Array<[RegExp, (m: RegExpMatchArray, rule: PendingRule) => string]> = [
  [/Proof with circuit id .* is not valid/, (_m, r) => `the zero-knowledge proof does not verify against the ${r.circuitId} verification key (tampered or made for other public inputs)`],
  [/proof is not given for requested circuit/, (_m, r) => `the proof was made with another circuit than the requested ${r.circuitId}`],
  [/issuer is not in allowed list/, () => 'the credential was issued by an issuer this scenario does not trust'],
  [/schema that was used is not equal/, () => 'the proof is about another credential type (schema) than the one requested'],
  [/check revocation is required/, () => 'the proof skipped the revocation check of the credential'],
  [/generated proof is outdated/, () => 'the proof is older than the accepted proof age'],
  [/failed to validate operators|operator .* not support|not support .* operator/, () => 'the proof answers another query (operator or values differ from the request)'],
  [/proof was generated for another path|wrong claim slot|doesn't contains target query key/, () => 'the proof is about another attribute than the one requested'],
  [/issuer state is outdated/, () => "the proof uses an issuer state that was replaced too long ago (the credential's status may have changed)"],
  [/not genesis and not registered/, () => "the issuer state in the proof is not published on chain"],
  [/resolver not found for issuerID/, () => "no state resolver is configured for the issuer's chain (ZKP_STATE_RESOLVERS)"],
  [/sender id is not used for proof creation/, () => 'the proof was made for another identity than the sender of the answer'],
  [/challenge is not used for proof creation/, () => 'the proof was made for another request id'],
  [/can't load schema for request query/, () => 'the JSON-LD context of the query is not available to the verifier'],
  [/Message expired/, () => 'the authorization request expired'],
];

function describeFailure(e: unknown, rule: PendingRule): string {
  const msg = e instanceof Error ? e.message : String(e);
  for (const [re, text] of REASONS) {
    const m = msg.match(re);
    if (m) return text(m, rule);
  }
  return `the proof could not be verified: ${msg.slice(0, 300)}`;
}

// ---------------------------------------------------------------------------------------------------------------

interface ProofFacts {
  timestampMs: number;
  issuer?: string;
}

function readSignals(circuitId: string, signals: readonly string[]): ProofFacts | string {
  try {
    const bytes = Buffer.from(JSON.stringify(signals));
    const s = circuitId === 'credentialAtomicQueryMTPV2'
      ? new AtomicQueryMTPV2PubSignals().pubSignalsUnmarshal(bytes)
      : new AtomicQuerySigV2PubSignals().pubSignalsUnmarshal(bytes);
    let issuer: string | undefined;
    try {
      issuer = DID.parseFromId(s.issuerID as Id).string();
    } catch {
      issuer = undefined;
    }
    return { timestampMs: Number(s.timestamp) * 1000, issuer };
  } catch (e) {
    return `the proof's public signals are not those of ${circuitId} (${(e instanceof Error ? e.message : String(e)).slice(0, 120)})`;
  }
}

function checkPending(p: PendingAuthorization): void {
  const ok = isRecord(p) && typeof p.thid === 'string' && typeof p.verifierDid === 'string' && Number.isFinite(p.expiresAt) &&
    Array.isArray(p.rules) && isRecord(p.request) && isRecord(p.request.body) && Array.isArray(p.request.body.scope);
  if (!ok) throw new ZkpOptionsError('the pending authorization is not one built by buildAuthorizationRequest');
}

/** The shipped verification keys: <js-iden3-auth>/circuits/<circuitId>/verification_key.json. */
export function defaultCircuitsDir(): string {
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve('@iden3/js-iden3-auth/package.json')), 'circuits');
}

export async function createZkpVerifier(options: ZkpVerifierOptions): Promise<ZkpVerifier> {
  if (!options || typeof options.stateResolvers !== 'object' || options.stateResolvers === null) {
    throw new ZkpOptionsError('stateResolvers is required (createRpcStateResolvers, or alwaysLatestStateResolvers in tests)');
  }
  const positive = (v: number | undefined, d: number, name: string) => {
    const x = v ?? d;
    if (!Number.isFinite(x) || x <= 0) throw new ZkpOptionsError(`${name} must be a positive number of milliseconds`);
    return x;
  };
  const proofMaxAgeMs = positive(options.proofMaxAgeMs, DEFAULT_PROOF_MAX_AGE_MS, 'proofMaxAgeMs');
  const clockSkewMs = positive(options.clockSkewMs, DEFAULT_CLOCK_SKEW_MS, 'clockSkewMs');
  const stateTransitionDelayMs = positive(options.stateTransitionDelayMs, DEFAULT_STATE_TRANSITION_DELAY_MS, 'stateTransitionDelayMs');
  const allowPlain = options.allowPlainMessages === true;
  const replayGuard = options.replayGuard === undefined ? new InMemoryReplayGuard() : options.replayGuard;
  const loader = wrapLoader(options.documentLoader ?? createDocumentLoader());

  const lib = await auth.Verifier.newVerifier({
    stateResolver: wrapResolvers(options.stateResolvers),
    circuitsDir: options.circuitsDir ?? defaultCircuitsDir(),
    documentLoader: loader as never,
  });
  // The ~50–90 ms Groth16 checks of an answer run on a worker thread, not on the thread answering requests.
  await offloadGroth16(lib);
  const libOpts = {
    acceptedProofGenerationDelay: proofMaxAgeMs,
    acceptedStateTransitionDelay: stateTransitionDelayMs,
    // Expiry is judged by this module with the caller's clock (and expires_time is removed from the copies below).
    allowExpiredMessages: true,
  };

  async function verify(token: string, pending: PendingAuthorization, call: VerifyCallOptions = {}): Promise<ZkpVerification> {
    checkPending(pending);
    const now = call.now ?? Date.now();
    const { envelope, message } = decodeResponse(token, allowPlain);

    if (message.thid !== pending.thid) {
      throw new ThreadMismatchError('the answer belongs to another authorization request (its thread id differs): ' +
        'it cannot be used for this execution');
    }
    if (now > pending.expiresAt * 1000) throw new RequestExpiredError(new Date(pending.expiresAt * 1000));
    if (message.to !== pending.verifierDid) {
      throw new ResponseMismatchError(`the answer is addressed to ${JSON.stringify(String(message.to ?? '(nobody)').slice(0, 200))}, ` +
        `not to this verifier (${pending.verifierDid})`);
    }
    if (call.address !== undefined && didAddressMatches(message.from, call.address) === false) {
      throw new ResponseMismatchError("the proving identity is made from another Ethereum address than the execution's address: " +
        'the answer must come from the holder of that address');
    }
    if ((pending.request.body.message ?? '') !== (message.body.message ?? '')) {
      throw new ResponseMismatchError('the answer does not carry the message the request asked to sign');
    }
    const asked = new Map(pending.rules.map((r) => [r.requestId, r]));
    for (const p of message.body.scope) {
      if (!asked.has(p.id)) throw new ResponseMismatchError(`the answer holds a proof for request id ${p.id}, which this request did not ask for`);
    }

    // A copy of the request the library may read (and mutate): without expires_time, see libOpts.
    const baseRequest = JSON.parse(JSON.stringify(pending.request)) as AuthorizationRequest;
    delete baseRequest.expires_time;

    if (envelope === 'jwz') {
      const ctx: CallContext = { infra: [] };
      try {
        const emptyScope = { ...baseRequest, body: { ...baseRequest.body, scope: [] } };
        await callContext.run(ctx, () => lib.fullVerify(token.trim(), emptyScope as never, libOpts));
      } catch (e) {
        if (e instanceof ZkpError) throw e;
        const msg = (e instanceof Error ? e.message : String(e)).slice(0, 300);
        if (ctx.infra.length > 0) throw new VerifierUnavailableError(`the answer could not be verified now: ${ctx.infra.join('; ')}`, { cause: e });
        throw new InvalidTokenError(`the JWZ token does not verify: ${msg}`, { cause: e });
      }
    }

    const byId = new Map(message.body.scope.map((p) => [p.id, p]));
    const verdicts: ZkpVerdict[] = [];
    const accepted: Array<{ requestId: number; fingerprint: string }> = [];
    for (const rule of pending.rules) {
      const entry = baseRequest.body.scope.find((s) => s.id === rule.requestId);
      const proof = byId.get(rule.requestId);
      const verdict: ZkpVerdict = { objectId: rule.objectId, requestId: rule.requestId, circuitId: rule.circuitId, status: 'valid', is_valid: false, reasons: [] };
      verdicts.push(verdict);
      if (!entry) throw new ZkpOptionsError(`the pending authorization has no scope entry for request id ${rule.requestId}`);
      if (!proof) {
        verdict.status = 'not-valid';
        verdict.reasons.push(`no proof was given for request id ${rule.requestId}`);
        continue;
      }
      const facts = readSignals(rule.circuitId, proof.pub_signals);
      if (typeof facts === 'string') {
        verdict.reasons.push(facts);
      } else {
        verdict.issuer = facts.issuer;
        if (Number.isFinite(facts.timestampMs) && facts.timestampMs > -8.64e15 && facts.timestampMs < 8.64e15) {
          verdict.proofTimestamp = new Date(facts.timestampMs).toISOString();
        }
        if (now - facts.timestampMs > proofMaxAgeMs) {
          verdict.reasons.push(`the proof was made at ${verdict.proofTimestamp ?? 'an unreadable time'}, more than ${Math.round(proofMaxAgeMs / 1000)} s before it was verified`);
        } else if (facts.timestampMs - now > clockSkewMs) {
          verdict.reasons.push(`the proof claims to be made in the future (${verdict.proofTimestamp ?? 'unreadable time'})`);
        }
      }
      const ctx: CallContext = { infra: [] };
      try {
        const request = { ...baseRequest, body: { ...baseRequest.body, scope: [JSON.parse(JSON.stringify(entry))] } };
        const response = { ...message, body: { ...message.body, scope: [proof] } };
        await callContext.run(ctx, () => lib.verifyAuthResponse(response as never, request as never, libOpts));
      } catch (e) {
        const reason = describeFailure(e, rule);
        if (!(/older than the accepted proof age/.test(reason) && verdict.reasons.some((r) => r.includes('before it was verified')))) {
          verdict.reasons.push(reason);
        }
        if (ctx.infra.length > 0) {
          verdict.status = 'error';
          verdict.reasons.push(`this rule could not be decided: ${ctx.infra.join('; ')}`);
        }
      }
      if (verdict.reasons.length === 0) {
        verdict.is_valid = true;
        accepted.push({ requestId: rule.requestId, fingerprint: proofFingerprint(proof.circuitId, proof.pub_signals) });
      } else if (verdict.status === 'valid') {
        verdict.status = 'not-valid';
      }
    }

    if (replayGuard && accepted.length > 0) {
      const taken = await replayGuard.claim(accepted.map((a) => a.fingerprint), pending.thid, now + proofMaxAgeMs + clockSkewMs);
      if (taken !== null) throw new ProofReplayedError(accepted.find((a) => a.fingerprint === taken)?.requestId ?? -1);
    }
    return {
      thid: message.thid,
      userDid: message.from,
      envelope,
      verdicts,
      is_valid: verdicts.length > 0 && verdicts.every((v) => v.is_valid),
    };
  }

  return { verify };
}

/** verifier.verify(token, pending, options): the answer's verdicts, or a ZkpError saying why it cannot be used. */
export function verifyAuthorizationResponse(
  token: string,
  pending: PendingAuthorization,
  options: VerifyCallOptions & { verifier: ZkpVerifier },
): Promise<ZkpVerification> {
  return options.verifier.verify(token, pending, { now: options.now });
}
