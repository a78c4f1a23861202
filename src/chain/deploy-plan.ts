/**
 * What a deploy sends, given what the verifier holds (DeployerChain.held()): setRequests never overwrites a request or
 * adds to a group, so those held as the rules make them are reused, and one held otherwise is the author's to rename.
 */
import type { Address, Hex } from 'viem';
import type { QueryConfiguration } from '../schemas/scenario.js';
import type { BuiltRequests, VerifierRequest } from './deploy-requests.js';

export interface HeldRequest {
  validator: Address;
  params: Hex;
  creator: Address;
}

/** The verifier's answers for a deploy's ids. */
export interface Held {
  /** Per request id: what the verifier holds, undefined when it holds none. */
  requests: Map<bigint, HeldRequest | undefined>;
  /** Per group id of the deploy: the request ids the verifier groups under it (none: a new group). */
  groups: Map<bigint, bigint[]>;
  /** The verifier holds the deploy's multi-request (its id hashes its requests, groups and creator: equal). */
  multi: boolean;
}

export interface SendPlan {
  /** What setRequests sends; the others are reused as the verifier holds them. */
  requests: VerifierRequest[];
  reused: bigint[];
  /** 'send': setMultiRequest is to be sent; 'held': the verifier holds it already; undefined: the rules need none. */
  multi?: 'send' | 'held';
}

export interface HeldProblem {
  pointer: string;
  message: string;
}

/** A request or group the verifier holds otherwise than the rules make it: setRequests cannot change it. */
export class HeldConflict extends Error {
  constructor(readonly problems: HeldProblem[]) {
    super(problems.map((p) => p.message).join('; '));
  }
}

const sameRequest = (h: HeldRequest, r: VerifierRequest) =>
  h.validator.toLowerCase() === r.validator.toLowerCase() && h.params.toLowerCase() === r.params.toLowerCase() && h.creator.toLowerCase() === r.creator.toLowerCase();

const list = (ids: readonly bigint[]) => ids.join(', ') || 'none';

/** Throws HeldConflict naming each rule whose request or group the verifier holds otherwise. */
export function planSends(rules: readonly QueryConfiguration[], built: BuiltRequests, held: Held, verifier: Address): SendPlan {
  const indexes = (id: bigint) => built.rules.flatMap((r, i) => (r.requestId === String(id) ? [i] : []));
  const problems: HeldProblem[] = [];
  const send: VerifierRequest[] = [];
  const reused: bigint[] = [];
  for (const r of built.requests) {
    const h = held.requests.get(r.requestId);
    if (h === undefined) send.push(r);
    else if (sameRequest(h, r)) reused.push(r.requestId);
    else {
      // The id hashes the params and the creator: only the validator (or the metadata, not compared) can differ.
      const what = h.validator.toLowerCase() !== r.validator.toLowerCase() ? `validator ${h.validator} (this deploy's: ${r.validator})` : 'other params';
      for (const i of indexes(r.requestId)) {
        problems.push({
          pointer: `/queryConfigurations/${i}/query/requestId`,
          message: `rule "${rules[i]?.id}": the verifier ${verifier} holds request ${r.requestId} already, with ${what}, and setRequests ` +
            'cannot overwrite a request: choose a new id (the id hashes the rule\'s request: change the rule) or deploy with the validator it holds (body.validators)',
        });
      }
    }
  }
  const groups = new Map<bigint, bigint[]>();
  for (const m of built.members) if (m.groupId !== 0n) groups.set(m.groupId, [...(groups.get(m.groupId) ?? []), m.requestId]);
  for (const [groupId, ids] of groups) {
    const onChain = held.groups.get(groupId) ?? [];
    if (onChain.length === 0) continue;
    const same = onChain.length === ids.length && ids.every((id) => onChain.includes(id) && reused.includes(id));
    if (same) continue;
    for (const id of ids) {
      for (const i of indexes(id)) {
        problems.push({
          pointer: `/queryConfigurations/${i}/query/groupId`,
          message: `rule "${rules[i]?.id}": the verifier ${verifier} holds group ${groupId} already, of requests ${list(onChain)} (this deploy's: ` +
            `${list(ids)}), and setRequests cannot change a group: choose a new groupId for the group's rules`,
        });
      }
    }
  }
  if (problems.length > 0) throw new HeldConflict(problems);
  const multi = built.multiRequest === undefined ? undefined : held.multi ? 'held' : 'send';
  return { requests: send, reused, ...(multi && { multi }) };
}
