/** The multi-request a deployment recorded as sent, against the verifier's read of its id (the follower's check). */
import type { SmartContractDeployment } from '../domain/deployments.js';
import type { StoredRequestEntry } from './proof-status.js';

type Recorded = NonNullable<SmartContractDeployment['multiRequest']>;

export function multiRequestDifferences(expected: Recorded, entry: StoredRequestEntry | undefined): string[] {
  const what = `multi-request ${expected.multiRequestId} (requests ${expected.requestIds.join(', ') || 'none'}; groups ${expected.groupIds.join(', ') || 'none'})`;
  if (entry === undefined || 'error' in entry) return [`the verifier has no ${what}${entry === undefined ? '' : `: ${entry.error}`}`];
  if (!('requests' in entry)) return [`${expected.multiRequestId} on the verifier is a single request, not the ${what}`];
  // In the order sent: the contract keeps them so, and its id hashes that order.
  const same = (a: readonly bigint[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === BigInt(b[i]!));
  const requestIds = entry.requests.map((r) => BigInt(r.requestId));
  if (same(requestIds, expected.requestIds) && same(entry.groupIds, expected.groupIds)) return [];
  return [`the verifier's multi-request ${expected.multiRequestId} holds requests ${requestIds.join(', ') || 'none'} and groups ` +
    `${entry.groupIds.join(', ') || 'none'}, the deployment sent the ${what}`];
}
