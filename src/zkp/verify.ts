/**
 * Order: decode (400), thread id (409), expiry (410), recipient and request ids (422), the JWZ envelope (422, or 503
 * when a resolver is down), each rule's proof, the replay guard (409). Create the verifier once: it reads the keys.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { auth } from '@iden3/js-iden3-auth';
import { didAddressMatches } from '../trust/holder.js';
import { createDocumentLoader } from '../jsonld/documents.js';
import { offloadGroth16 } from './groth16.js';
import {
  ProofReplayedError, RequestExpiredError, ResponseMismatchError, ThreadMismatchError, VerifierUnavailableError, ZkpError,
  ZkpOptionsError,
} from './errors.js';
import { InMemoryReplayGuard, proofFingerprint } from './replay.js';
import { jsonCopy, type AuthorizationRequest, type PendingAuthorization } from './request.js';
import { watchDependencies, type DependencyWatch } from './verify-dependencies.js';
import { decodeResponse, type ResponseMessage } from './verify-envelope.js';
import { isRecord } from '../schemas/json.js';
import { envelopeRefusal, judgeFailure } from './verify-failures.js';
import { judgeAcrossRules } from './verify-groups.js';
import { judgeRule, type CheckAuthResponse } from './verify-rule.js';
import type { VerifyCallOptions, ZkpVerdict, ZkpVerification, ZkpVerifier, ZkpVerifierOptions } from './verify-types.js';

export {
  type VerdictStatus, type VerifyCallOptions, type ZkpVerdict, type ZkpVerification, type ZkpVerifier, type ZkpVerifierOptions,
} from './verify-types.js';
export { MAX_TOKEN_LENGTH, peekThreadId } from './verify-envelope.js';

function checkPending(p: PendingAuthorization): void {
  const ok = isRecord(p) && typeof p.thid === 'string' && typeof p.verifierDid === 'string' && Number.isFinite(p.expiresAt) &&
    Array.isArray(p.rules) && isRecord(p.request) && isRecord(p.request.body) && Array.isArray(p.request.body.scope);
  if (!ok) throw new ZkpOptionsError('the pending authorization is not one built by buildAuthorizationRequest');
}

function checkAnswer(message: ResponseMessage, pending: PendingAuthorization, now: number, address: string | undefined): void {
  if (message.thid !== pending.thid) {
    throw new ThreadMismatchError('the answer belongs to another authorization request (its thread id differs): ' +
      'it cannot be used for this execution');
  }
  if (now > pending.expiresAt * 1000) throw new RequestExpiredError(new Date(pending.expiresAt * 1000));
  if (message.to !== pending.verifierDid) {
    throw new ResponseMismatchError(`the answer is addressed to ${JSON.stringify(String(message.to ?? '(nobody)').slice(0, 200))}, ` +
      `not to this verifier (${pending.verifierDid})`);
  }
  if (address !== undefined && didAddressMatches(message.from, address) === false) {
    throw new ResponseMismatchError("the proving identity is made from another Ethereum address than the execution's address: " +
      'the answer must come from the holder of that address');
  }
  if ((pending.request.body.message ?? '') !== (message.body.message ?? '')) {
    throw new ResponseMismatchError('the answer does not carry the message the request asked to sign');
  }
  const asked = new Set(pending.rules.map((r) => r.requestId));
  for (const p of message.body.scope) {
    if (!asked.has(p.id)) throw new ResponseMismatchError(`the answer holds a proof for request id ${p.id}, which this request did not ask for`);
  }
}

type FullVerify = (token: string, request: AuthorizationRequest) => Promise<unknown>;

async function checkEnvelope(fullVerify: FullVerify, watch: DependencyWatch, token: string, circuitId: string, request: AuthorizationRequest) {
  const checked = await watch.run(() => fullVerify(token, { ...request, body: { ...request.body, scope: [] } }));
  if (checked.ok) return;
  const e = checked.error;
  if (e instanceof ZkpError) throw e;
  if (checked.failed.length > 0) {
    throw new VerifierUnavailableError(`the answer could not be verified now: ${checked.failed.join('; ')}`, { cause: e });
  }
  throw envelopeRefusal(judgeFailure(e, circuitId), e);
}

export function defaultCircuitsDir(): string {
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve('@iden3/js-iden3-auth/package.json')), 'circuits');
}

export async function createZkpVerifier(options: ZkpVerifierOptions): Promise<ZkpVerifier> {
  if (!options || typeof options.stateResolvers !== 'object' || options.stateResolvers === null) {
    throw new ZkpOptionsError('stateResolvers is required (createRpcStateResolvers, or alwaysLatestStateResolvers in tests)');
  }
  const positive = (x: number, name: string) => {
    if (!Number.isFinite(x) || x <= 0) throw new ZkpOptionsError(`${name} must be a positive number of milliseconds`);
    return x;
  };
  const proofMaxAgeMs = positive(options.proofMaxAgeMs, 'proofMaxAgeMs');
  const clockSkewMs = positive(options.clockSkewMs, 'clockSkewMs');
  const stateTransitionDelayMs = positive(options.stateTransitionDelayMs, 'stateTransitionDelayMs');
  const allowPlain = options.allowPlainMessages === true;
  const replayGuard = options.replayGuard === undefined ? new InMemoryReplayGuard() : options.replayGuard;
  const watch = watchDependencies(options.stateResolvers, options.documentLoader ?? createDocumentLoader());

  const lib = await auth.Verifier.newVerifier({
    stateResolver: watch.resolvers,
    circuitsDir: options.circuitsDir ?? defaultCircuitsDir(),
    documentLoader: watch.loader,
  });
  await offloadGroth16(lib);
  const libOpts = {
    acceptedProofGenerationDelay: proofMaxAgeMs,
    acceptedStateTransitionDelay: stateTransitionDelayMs,
    // Expiry is judged by this module with the caller's clock (and expires_time is removed from the copies below).
    allowExpiredMessages: true,
  };
  const checkAuthResponse: CheckAuthResponse = (response, request) => lib.verifyAuthResponse(response, request, libOpts);
  const fullVerify: FullVerify = (token, request) => lib.fullVerify(token, request, libOpts);

  async function verify(token: string, pending: PendingAuthorization, call: VerifyCallOptions = {}): Promise<ZkpVerification> {
    checkPending(pending);
    const now = call.now ?? Date.now();
    const { envelope, message, circuitId } = decodeResponse(token, allowPlain);
    checkAnswer(message, pending, now, call.address);
    await call.beforeProof?.();

    // A copy of the request the library may read (and mutate): without expires_time, see libOpts.
    const request = jsonCopy(pending.request);
    delete request.expires_time;
    if (envelope === 'jwz') await checkEnvelope(fullVerify, watch, token.trim(), circuitId ?? 'authV2', request);

    const byId = new Map(message.body.scope.map((p) => [p.id, p]));
    const context = { checkAuthResponse, watch, now, proofMaxAgeMs, clockSkewMs, request, message };
    const verdicts: ZkpVerdict[] = [];
    // The linkedMultiQuery rules of a group share one request id and its proof: judged once.
    const judged = new Map<number, ZkpVerdict>();
    for (const rule of pending.rules) {
      const entry = request.body.scope.find((s) => s.id === rule.requestId);
      if (!entry) throw new ZkpOptionsError(`the pending authorization has no scope entry for request id ${rule.requestId}`);
      const first = judged.get(rule.requestId) ?? await judgeRule(context, rule, entry, byId.get(rule.requestId));
      judged.set(rule.requestId, first);
      verdicts.push({ ...structuredClone(first), objectId: rule.objectId, circuitId: rule.circuitId });
    }
    judgeAcrossRules(pending.rules, verdicts, byId);
    const accepted: Array<{ requestId: number; fingerprint: string }> = [];
    pending.rules.forEach((rule, i) => {
      const proof = byId.get(rule.requestId);
      if (verdicts[i]?.is_valid && proof && !accepted.some((a) => a.requestId === rule.requestId)) {
        accepted.push({ requestId: rule.requestId, fingerprint: proofFingerprint(proof.circuitId, proof.pub_signals) });
      }
    });

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

export function verifyAuthorizationResponse(
  token: string,
  pending: PendingAuthorization,
  options: VerifyCallOptions & { verifier: ZkpVerifier },
): Promise<ZkpVerification> {
  return options.verifier.verify(token, pending, { now: options.now, address: options.address });
}
