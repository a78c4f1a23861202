/**
 * The multi-request a deployment's rules make (deploy-requests.ts multiRequestOf) against the verifier's: what the
 * follower checks before Deployed. Loads viem: import it lazily.
 */
import type { Address } from 'viem';
import type { QueryConfiguration } from '../schemas/scenario.js';
import { multiRequestOf, type MultiRequest } from './deploy-requests.js';
import { requestIdOf, type StoredRequestEntry } from './proof-status.js';

/** Every rule with a groupId is in a group on chain (V3 grouped or linkedMultiQuery): it goes in by its group. */
export function expectedMultiRequest(rules: readonly QueryConfiguration[], entries: readonly StoredRequestEntry[]): MultiRequest | string | undefined {
  const members = rules.flatMap((qc) => {
    const requestId = requestIdOf(qc.query.requestId);
    // As deploy-requests.ts groups them: a V2 circuit takes no group.
    const groupId = qc.query.circuitId?.endsWith('V2') === true ? 0n : BigInt(qc.query.groupId ?? 0);
    return requestId === undefined ? [] : [{ requestId: BigInt(requestId), groupId }];
  });
  const creators = new Set(entries.flatMap((e) => ('creator' in e && typeof e.creator === 'string' ? [e.creator.toLowerCase()] : [])));
  if (new Set(members.map((m) => m.requestId)).size < 2) return undefined;
  if (creators.size !== 1) {
    return creators.size === 0
      ? 'the verifier names no creator of the rules\' requests, so their multi-request cannot be found'
      : `the rules' requests have ${creators.size} creators, so no one multi-request holds them`;
  }
  return multiRequestOf(members, [...creators][0] as Address);
}

/** What differs between `expected` and the verifier's read of its id (an entry of readRequests). */
export function multiRequestDifferences(expected: MultiRequest, entry: StoredRequestEntry | undefined): string[] {
  const what = `multi-request ${expected.multiRequestId} (requests ${expected.requestIds.join(', ') || 'none'}; groups ${expected.groupIds.join(', ') || 'none'})`;
  if (entry === undefined || 'error' in entry) return [`the verifier has no ${what}${entry === undefined ? '' : `: ${entry.error}`}`];
  if (!('requests' in entry)) return [`${expected.multiRequestId} on the verifier is a single request, not the ${what}`];
  const same = (a: readonly bigint[], b: readonly bigint[]) => a.length === b.length && a.every((x, i) => x === b[i]);
  const requestIds = entry.requests.map((r) => BigInt(r.requestId));
  if (same(requestIds, expected.requestIds) && same(entry.groupIds, expected.groupIds)) return [];
  return [`the verifier's multi-request ${expected.multiRequestId} holds requests ${requestIds.join(', ') || 'none'} and groups ` +
    `${entry.groupIds.join(', ') || 'none'}, the rules make the ${what}`];
}
