import {
  AtomicQueryMTPV2PubSignals, AtomicQuerySigV2PubSignals, AtomicQueryV3PubSignals, circuitValidator, getGroupedCircuitIdsWithSubVersions,
  LinkedMultiQueryPubSignals,
} from './sdk.js';
import { DID } from '../trust/iden3.js';
import { isRecord } from '../schemas/json.js';
import type { DependencyWatch } from './verify-dependencies.js';
import type { ProofResponse, ResponseMessage } from './verify-envelope.js';
import { judgeFailure, UNRECOGNISED_FAILURE } from './verify-failures.js';
import type { ZkpVerdict } from './verify-types.js';
import { jsonCopy, type AuthorizationRequest, type PendingRule, type ZkpScopeEntry } from './request.js';

export type CheckAuthResponse = (response: ResponseMessage, request: AuthorizationRequest) => Promise<void>;

export interface RuleContext {
  checkAuthResponse: CheckAuthResponse;
  watch: DependencyWatch;
  now: number;
  proofMaxAgeMs: number;
  clockSkewMs: number;
  /** A copy the library may read. */
  request: AuthorizationRequest;
  message: ResponseMessage;
}

interface ProofFacts {
  /** None for linkedMultiQuery (its V3 proof of the group carries the time). */
  timestampMs?: number;
  issuer?: string;
  nullifier?: string;
  linkId?: string;
}

const nonZero = (x: bigint) => (x === 0n ? undefined : x.toString());
const linkedCount = (circuitId: string) => Number(/^linkedMultiQuery(\d+)/.exec(circuitId)?.[1] ?? 10);

function readSignals(circuitId: string, signals: readonly string[]): ProofFacts | string {
  try {
    const bytes = Buffer.from(JSON.stringify(signals));
    if (circuitId.startsWith('linkedMultiQuery')) {
      return { linkId: nonZero(new LinkedMultiQueryPubSignals(linkedCount(circuitId)).pubSignalsUnmarshal(bytes).linkID) };
    }
    const v3 = circuitId.startsWith('credentialAtomicQueryV3') ? new AtomicQueryV3PubSignals().pubSignalsUnmarshal(bytes) : undefined;
    const s = v3 ?? (circuitId === 'credentialAtomicQueryMTPV2'
      ? new AtomicQueryMTPV2PubSignals().pubSignalsUnmarshal(bytes)
      : new AtomicQuerySigV2PubSignals().pubSignalsUnmarshal(bytes));
    let issuer: string | undefined;
    try {
      issuer = DID.parseFromId(s.issuerID).string();
    } catch {
      issuer = undefined;
    }
    const facts: ProofFacts = { timestampMs: Number(s.timestamp) * 1000, issuer };
    if (v3) Object.assign(facts, { linkId: nonZero(v3.linkID), nullifier: nonZero(v3.nullifier) });
    return facts;
  } catch (e) {
    return `the proof's public signals are not those of ${circuitId} (${(e instanceof Error ? e.message : String(e)).slice(0, 120)})`;
  }
}

function judgeAge(ctx: RuleContext, verdict: ZkpVerdict, proof: ProofResponse): boolean {
  const facts = readSignals(proof.circuitId, proof.pub_signals);
  if (typeof facts === 'string') {
    verdict.reasons.push(facts);
    return false;
  }
  if (facts.linkId !== undefined) verdict.linkId = facts.linkId;
  if (facts.nullifier !== undefined) verdict.nullifier = facts.nullifier;
  if (facts.timestampMs === undefined) return false;
  verdict.issuer = facts.issuer;
  if (Number.isFinite(facts.timestampMs) && facts.timestampMs > -8.64e15 && facts.timestampMs < 8.64e15) {
    verdict.proofTimestamp = new Date(facts.timestampMs).toISOString();
  }
  if (ctx.now - facts.timestampMs > ctx.proofMaxAgeMs) {
    verdict.reasons.push(`the proof was made at ${verdict.proofTimestamp ?? 'an unreadable time'}, ` +
      `more than ${Math.round(ctx.proofMaxAgeMs / 1000)} s before it was verified`);
    return true;
  }
  if (facts.timestampMs - ctx.now > ctx.clockSkewMs) {
    verdict.reasons.push(`the proof claims to be made in the future (${verdict.proofTimestamp ?? 'unreadable time'})`);
  }
  return false;
}

/** js-iden3-auth refuses the same answers, naming the requested family only. */
function otherCircuit(requested: string, given: string): string | undefined {
  const family = getGroupedCircuitIdsWithSubVersions(requested);
  if (family.includes(given)) return undefined;
  const subversions = family.filter((c) => c !== requested);
  return `the proof was made with ${given.slice(0, 64)}, not with the requested ${requested}` +
    (subversions.length > 0 ? ` or one of its subversions (${subversions.join(', ')})` : '');
}

/**
 * js-iden3-auth compares only as many conditions as the proof's circuit holds: a linkedMultiQuery3 proof answering 4
 * conditions would leave the 4th unproved and still pass there.
 */
function tooFewConditions(entry: ZkpScopeEntry, given: string): string | undefined {
  const shown = circuitValidator[entry.circuitId]?.subVersions?.find((s) => s.targetCircuitId === given)?.queryCount ??
    circuitValidator[given]?.validation.maxQueriesCount;
  const subject = entry.query.credentialSubject;
  // One condition per operator of each field, as js-sdk's parseQueriesMetadata reads them (a field without one: $noop).
  const asked = isRecord(subject)
    ? Object.values(subject).reduce<number>((n, ops) => n + (isRecord(ops) ? Math.max(1, Object.keys(ops).length) : 1), 0)
    : 0;
  if (shown === undefined || asked <= shown) return undefined;
  return `the proof was made with ${given.slice(0, 64)}, which shows at most ${shown} conditions, and request id ${entry.id} asks ${asked}`;
}

export async function judgeRule(ctx: RuleContext, rule: PendingRule, entry: ZkpScopeEntry, proof: ProofResponse | undefined): Promise<ZkpVerdict> {
  const verdict: ZkpVerdict = {
    objectId: rule.objectId, requestId: rule.requestId, circuitId: rule.circuitId, status: 'valid', is_valid: false, reasons: [],
  };
  if (!proof) {
    verdict.status = 'not-valid';
    verdict.reasons.push(`no proof was given for request id ${rule.requestId}`);
    return verdict;
  }
  const other = otherCircuit(entry.circuitId, proof.circuitId) ?? tooFewConditions(entry, proof.circuitId);
  if (other !== undefined) {
    verdict.status = 'not-valid';
    verdict.reasons.push(other);
    return verdict;
  }
  const tooOld = judgeAge(ctx, verdict, proof);
  const request = { ...ctx.request, body: { ...ctx.request.body, scope: [jsonCopy(entry)] } };
  const response = { ...ctx.message, body: { ...ctx.message.body, scope: [proof] } };
  const checked = await ctx.watch.run(() => ctx.checkAuthResponse(response, request));
  if (!checked.ok) {
    const judged = judgeFailure(checked.error, rule.circuitId);
    if (checked.failed.length > 0) {
      // A dependency failed: undecided, whatever the library made of it (an unrecognised failure is explained here).
      if (judged.id !== UNRECOGNISED_FAILURE) verdict.reasons.push(judged.reason);
      verdict.status = 'error';
      verdict.reasons.push(`this rule could not be decided: ${checked.failed.join('; ')}`);
    } else if (judged.verdict === 'refused' && judged.refuse) {
      const Refusal = judged.refuse;
      throw new Refusal(judged.reason);
    } else {
      // The library's own age check says what judgeAge said already.
      if (!(judged.id === 'proof-outdated' && tooOld)) verdict.reasons.push(judged.reason);
      if (judged.verdict === 'error') verdict.status = 'error';
    }
  }
  if (verdict.reasons.length === 0) verdict.is_valid = true;
  else if (verdict.status === 'valid') verdict.status = 'not-valid';
  return verdict;
}
