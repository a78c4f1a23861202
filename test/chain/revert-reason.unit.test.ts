/** The follower's revert reasons fit the schema's errorMessage (4,096 characters) whatever the contract's error holds. */
import { describe, expect, it } from 'vitest';
import { encodeErrorResult } from 'viem';
import { verifierErrorsAbi } from '../../src/chain/abi.js';
import { revertReason } from '../../src/chain/revert-reason.js';

describe('revertReason', () => {
  it('clips a long string argument of a UniversalVerifier custom error (AuthMethodIsNotActive) and of Error(string)', () => {
    const custom = revertReason(encodeErrorResult({ abi: verifierErrorsAbi, errorName: 'AuthMethodIsNotActive', args: ['A'.repeat(100_000)] }));
    expect(custom.length).toBeLessThanOrEqual(4096);
    expect(custom).toMatch(/^reverted: AuthMethodIsNotActive\(A+…\)$/);
    const plain = revertReason(encodeErrorResult({ abi: [{ type: 'error', name: 'Error', inputs: [{ type: 'string', name: 'm' }] }], errorName: 'Error', args: ['B'.repeat(100_000)] }));
    expect(plain.length).toBeLessThanOrEqual(4096);
    expect(plain.startsWith('reverted: BBB')).toBe(true);
  });
});
