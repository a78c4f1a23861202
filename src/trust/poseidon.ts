/** Remembered: most hashes repeat across a schema's credentials. Inputs are checked as js-crypto checks them. */
import os from 'node:os';
import { poseidon } from '@iden3/js-crypto';
import { LRUCache } from 'lru-cache';
import { FIELD, wasmPoseidon } from './poseidon-wasm.js';

export { FIELD };

const HASH_MEMO = 65_536;
const BYTES_MEMO = 16_384;

type HashFn = (inputs: bigint[]) => bigint;
type HashBytesFn = (msg: Uint8Array) => bigint;

export const referencePoseidon: { hash: HashFn; hashBytes: HashBytesFn } = {
  hash: poseidon.hash.bind(poseidon),
  hashBytes: poseidon.hashBytes.bind(poseidon),
};

/** The WebAssembly module reads its memory as little-endian words: elsewhere, js-crypto's own. */
const LITTLE_ENDIAN = os.endianness() === 'LE';

export function fastHash(inputs: bigint[]): bigint {
  // Montgomery arithmetic in WebAssembly (poseidon-wasm.ts): on the machine of bench/RESULTS.md (2026-11-29, third
  // stop), 36 us for 2 inputs and 311 us for 16, where @railgun-community/poseidon-hash-wasm took 94 us for 2 and the
  // BigInt implementation with js-crypto's optimised constants 584 us for 16. Both check their inputs alike.
  return LITTLE_ENDIAN ? wasmPoseidon(inputs) : referencePoseidon.hash(inputs);
}

let installed = false;

/** The iden3 libraries call them through that object: there is no narrower hook. */
export function installFastPoseidon(): void {
  if (installed) return;
  installed = true;
  const hashes = new LRUCache<string, bigint>({ max: HASH_MEMO });
  const bytes = new LRUCache<string, bigint>({ max: BYTES_MEMO });
  const reference = referencePoseidon.hashBytes;
  poseidon.hash = (inputs: bigint[]): bigint => {
    // Distinct input lists give distinct keys: no decimal number holds a comma.
    const key = inputs.join(',');
    let h = hashes.get(key);
    if (h === undefined) {
      h = fastHash(inputs);
      hashes.set(key, h);
    }
    return h;
  };
  poseidon.hashBytes = (msg: Uint8Array): bigint => {
    const key = Buffer.from(msg.buffer, msg.byteOffset, msg.byteLength).toString('latin1');
    let h = bytes.get(key);
    if (h === undefined) {
      h = reference(msg);
      bytes.set(key, h);
    }
    return h;
  };
}
