/**
 * A contract request that asks less than the rule is a difference (the rule would answer `valid` for proofs it does
 * not mean); one that asks more is noted in the rule's reasons and stands.
 */
import type { Query } from '../schemas/scenario.js';
import { DID, Id } from '../trust/iden3.js';
import type { StoredLinkedQuery, StoredQuery } from './proof-status.js';

/** The V3 validators' proofType codes (0: either). */
const PROOF_TYPES: Readonly<Record<string, bigint>> = { BJJSignature2021: 1n, Iden3SparseMerkleTreeProof: 2n };
const proofTypeName = (code: bigint) =>
  Object.entries(PROOF_TYPES).find(([, c]) => c === code)?.[0] ?? (code === 0n ? 'either proof type' : `proof type ${code}`);

export interface ParamsComparison {
  differences: string[];
  notes: string[];
}

/** The iden3 ids of DIDs (what a validator's allowedIssuers hold), or undefined when they do not narrow ("*", none). */
export function issuerIdsOf(trustedIssuers: readonly string[] | null | undefined): Map<bigint, string> | undefined {
  if (!trustedIssuers || trustedIssuers.includes('*')) return undefined;
  const ids = new Map<bigint, string>();
  for (const did of trustedIssuers) {
    try {
      ids.set(DID.idFromDID(DID.parse(did)).bigInt(), did);
    } catch { /* a DID js-iden3-core cannot read: no contract can name it */ }
  }
  return ids;
}

/** V3 says it in proofType, V2 in the circuit's name. */
function storedProofType(stored: StoredQuery): bigint {
  if (stored.kind === 'v3') return stored.proofType ?? 0n;
  const sig = stored.circuitIds.some((c) => c.startsWith('credentialAtomicQuerySig'));
  const mtp = stored.circuitIds.some((c) => c.startsWith('credentialAtomicQueryMTP'));
  return sig === mtp ? 0n : sig ? 1n : 2n;
}

const issuerName = (id: bigint) => {
  try {
    return DID.parseFromId(Id.fromBigInt(id)).string();
  } catch {
    return `issuer id ${id}`;
  }
};

export function compareParams(
  query: Query, stored: StoredQuery | StoredLinkedQuery, trusted: ReadonlyMap<bigint, string> | undefined,
): ParamsComparison {
  if (stored.kind === 'linked') return compareLinkedParams(query, stored);
  const differences: string[] = [];
  const notes: string[] = [];

  if (trusted !== undefined) {
    const only = trusted.size === 0 ? 'no iden3 issuer (its trustedIssuers)' : `only ${[...trusted.values()].join(', ')}`;
    if (stored.allowedIssuers.length === 0) {
      differences.push(`it accepts credentials of any issuer; the scenario trusts ${only}`);
    } else {
      const others = stored.allowedIssuers.filter((id) => !trusted.has(id));
      if (others.length > 0) differences.push(`it accepts issuers the scenario does not trust: ${others.slice(0, 4).map(issuerName).join(', ')}${others.length > 4 ? ', …' : ''}`);
    }
  }
  if (stored.skipClaimRevocationCheck) differences.push('it skips the revocation check (skipClaimRevocationCheck), so a revoked credential proves it');

  if (query.circuitId !== undefined && !stored.circuitIds.some((c) => c.startsWith(query.circuitId ?? ''))) {
    differences.push(`its circuits are ${stored.circuitIds.join(', ')}, the rule's circuitId is ${query.circuitId}`);
  }

  const proofType = storedProofType(stored);
  const wanted = query.proofType === undefined ? undefined : PROOF_TYPES[query.proofType];
  if (wanted !== undefined && proofType !== wanted) {
    differences.push(`it accepts ${proofTypeName(proofType)}, the rule asks ${query.proofType}`);
  } else if (wanted === undefined && proofType !== 0n && stored.kind === 'v3') {
    notes.push(`it also asks for ${proofTypeName(proofType)} proofs`);
  }

  const session = query.params?.nullifierSessionId === undefined ? 0n : BigInt(query.params.nullifierSessionId);
  const storedSession = stored.nullifierSessionID ?? 0n;
  if (session !== 0n && storedSession !== session) {
    differences.push(storedSession === 0n
      ? `it asks for no nullifier, the rule for one of session ${session}`
      : `its nullifier session is ${storedSession}, the rule's ${session}`);
  } else if (session === 0n && storedSession !== 0n) {
    notes.push(`it also asks for a nullifier (session ${storedSession})`);
  }

  compareGroup(query, stored.groupID ?? 0n, differences, notes);
  return { differences, notes };
}

function compareGroup(query: Query, storedGroup: bigint, differences: string[], notes: string[]): void {
  const group = query.groupId === undefined ? 0n : BigInt(query.groupId);
  if (group !== 0n && storedGroup !== group) {
    differences.push(storedGroup === 0n ? `it links no group, the rule is in group ${group}` : `its group is ${storedGroup}, the rule's ${group}`);
  } else if (group === 0n && storedGroup !== 0n) {
    notes.push(`it also links the proof to group ${storedGroup}`);
  }
}

/**
 * A linked multi-query request proves conditions on the credential of its group's V3 request, which holds the
 * issuers, the revocation check, the proof type and the nullifier: only the circuit and the group are its own.
 */
function compareLinkedParams(query: Query, stored: StoredLinkedQuery): ParamsComparison {
  const differences: string[] = [];
  const notes: string[] = [];
  if (query.circuitId !== undefined && query.circuitId !== 'linkedMultiQuery') {
    differences.push(`it is a linked multi-query request (${stored.circuitIds.join(', ')}), the rule's circuitId is ${query.circuitId}`);
  }
  compareGroup(query, stored.groupID, differences, notes);
  return { differences, notes };
}
