/**
 * Size limits of a credential to be verified, checked before any hashing: its JSON text in bytes, and its scalar values
 * outside the proof (strings, numbers, booleans, nulls: each becomes at least one leaf of the merklized tree the proof
 * check builds, so they bound the Poseidon hashes a credential can cost). Without them one credential whose subject
 * held a 4,000-entry array cost 42 s of CPU.
 */
import { isRecord } from '../schemas/json.js';

export interface CredentialLimits {
  bytes: number;
  leaves: number;
}

export interface CredentialSize {
  /** Which limit the credential is over. */
  over: 'bytes' | 'leaves';
}

const hasOwn = Object.prototype.hasOwnProperty;

/** Counts scalar values, stopping past `max`; returns the count (max + 1 when over). */
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

/** undefined when the credential is within both limits, else which one it is over. Leaves first: it stops early. */
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
