/** Remembered: most hashes repeat across a schema's credentials. Inputs are checked as js-crypto checks them. */
import { poseidon } from '@iden3/js-crypto';
import { poseidon as wasmPoseidon } from '@railgun-community/poseidon-hash-wasm';
import { LRUCache } from 'lru-cache';

export const FIELD = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

const HASH_MEMO = 65_536;
const BYTES_MEMO = 16_384;

type HashFn = (inputs: bigint[]) => bigint;
type HashBytesFn = (msg: Uint8Array) => bigint;

export const referencePoseidon: { hash: HashFn; hashBytes: HashBytesFn } = {
  hash: poseidon.hash.bind(poseidon),
  hashBytes: poseidon.hashBytes.bind(poseidon),
};

export function fastHash(inputs: bigint[]): bigint {
  if (!(inputs.length > 0 && inputs.length <= 16)) throw new Error('Invalid inputs');
  for (const x of inputs) {
    if (typeof x !== 'bigint' || x < 0n || x >= FIELD) throw new Error(`One or more inputs are not in the field: ${FIELD}`);
  }
  return wasmPoseidon(inputs);
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
