/** Each scalar value becomes a leaf, so their count bounds the Poseidon hashes a credential can cost. */
import { isRecord } from '../schemas/json.js';

export interface CredentialLimits {
  bytes: number;
  leaves: number;
}

export interface CredentialSize {
  over: 'bytes' | 'leaves';
}

const hasOwn = Object.prototype.hasOwnProperty;

function countLeaves(value: unknown, max: number, count: number): number {
  if (count > max) return count;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && count <= max; i++) count = countLeaves(value[i], max, count);
    return count;
  }
  if (!isRecord(value)) return count + 1;
  for (const key in value) {
    if (!hasOwn.call(value, key)) continue;
    count = countLeaves(value[key], max, count);
    if (count > max) return count;
  }
  return count;
}

/** Leaves first: that count stops early. */
export function measureCredential(credential: unknown, limits: CredentialLimits): CredentialSize | undefined {
  if (!isRecord(credential)) return undefined;
  let leaves = 0;
  for (const key in credential) {
    if (key === 'proof' || !hasOwn.call(credential, key)) continue;
    leaves = countLeaves(credential[key], limits.leaves, leaves);
    if (leaves > limits.leaves) return { over: 'leaves' };
  }
  if (Buffer.byteLength(JSON.stringify(credential)) > limits.bytes) return { over: 'bytes' };
  return undefined;
}
