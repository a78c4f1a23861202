/**
 * The params outside the query hash (src/chain/request-params.ts) on their own; the Hardhat tests of
 * iden3-requests.test.ts read the same params from the real validators.
 */
import { describe, expect, it } from 'vitest';
import { compareParams, issuerIdsOf } from '../../src/chain/request-params.js';
import type { StoredQuery } from '../../src/chain/proof-status.js';
import type { Query } from '../../src/schemas/scenario.js';

const ISSUER = 'did:iden3:polygon:amoy:x9GjpMsjNkcHtSoWMdvhbhZrmXfH1tk9RxjSx8FXa';
const rule: Query = { type: 'T', requestId: 1, attribute: 'a', operator: '$lt', value: 1 };
const v2 = (circuitIds: string[], extra: Partial<StoredQuery> = {}): StoredQuery => ({
  kind: 'v2', circuitIds, schema: 1n, claimPathKey: 1n, operator: 2n, slotIndex: 0n, values: [1n], queryHash: 1n,
  allowedIssuers: [], skipClaimRevocationCheck: false, ...extra,
});

describe('issuerIdsOf', () => {
  it('does not narrow for absent, null or "*", and keeps the iden3 ids of the DIDs it can read', () => {
    expect(issuerIdsOf(undefined)).toBeUndefined();
    expect(issuerIdsOf(null)).toBeUndefined();
    expect(issuerIdsOf(['*', ISSUER])).toBeUndefined();
    const ids = issuerIdsOf([ISSUER, 'did:iden3:polygon:amoy:not-an-id']);
    expect([...ids!.values()]).toEqual([ISSUER]);
  });
});

describe('compareParams', () => {
  it('says a scenario that trusts no iden3 issuer is asked less by a request open to any', () => {
    expect(compareParams(rule, v2(['credentialAtomicQuerySigV2OnChain']), new Map()).differences)
      .toEqual(['it accepts credentials of any issuer; the scenario trusts no iden3 issuer (its trustedIssuers)']);
  });

  it('reads a V2 request\'s proof type from its circuit name', () => {
    const mtp = { ...rule, proofType: 'Iden3SparseMerkleTreeProof' as const };
    expect(compareParams(mtp, v2(['credentialAtomicQueryMTPV2OnChain']), undefined).differences).toEqual([]);
    expect(compareParams(mtp, v2(['credentialAtomicQuerySigV2OnChain']), undefined).differences)
      .toEqual(['it accepts BJJSignature2021, the rule asks Iden3SparseMerkleTreeProof']);
    // A V2 request fixes its proof type by its circuit: not "asking more" than a rule that leaves it open.
    expect(compareParams(rule, v2(['credentialAtomicQuerySigV2OnChain']), undefined)).toEqual({ differences: [], notes: [] });
  });
});
