/**
 * Poseidon for the cold verification path: the same function as @iden3/js-crypto's `poseidon.hash` and
 * `poseidon.hashBytes`, computed by a faster library and remembered.
 *
 * Why: verifying a credential seen for the first time merklizes it (JSON-LD -> RDF -> sparse Merkle tree), which takes
 * ~350 Poseidon hashes, ~90 of them `hashBytes` of strings (a 16-input sponge each). In @iden3/js-crypto (BigInt
 * arithmetic) that was ~200 ms of the ~250 ms a cold credential cost. Two changes, each with equal outputs:
 *
 * 1. The permutation comes from @railgun-community/poseidon-hash-wasm (Rust, compiled to WebAssembly; the same BN254
 *    Poseidon with circomlib's constants, 1 to 16 inputs): ~1.7x faster than js-crypto's. test/trust/poseidon.unit.test.ts
 *    proves equal outputs on js-crypto's and go-iden3-crypto's published vectors and on random inputs of every arity.
 * 2. Results are remembered (bounded LRU). Most hashes of a credential are the same for every credential of its schema
 *    (the hashed IRIs of its JSON-LD paths, the path keys, the types, the issuer, the context URLs, the leaves of
 *    fields with common values): across the three demo credentials, 41 of 270 hashBytes and 295 of 786 hashes were
 *    distinct. So the per-schema work is done once, and a fresh credential of a known schema pays for its own values
 *    and its tree nodes only (~70 hashes).
 *
 * `installFastPoseidon()` puts both into js-crypto's `poseidon` object (a class whose static methods every iden3
 * library calls through: js-merkletree's node hashes, js-jsonld-merklization's default hasher, js-iden3-core's claim
 * hashes, the BJJ signature's message hash), once per thread. Its inputs are checked as js-crypto checks them (1 to 16
 * field elements), so an input js-crypto refuses is refused alike.
 */
import { poseidon } from '@iden3/js-crypto';
import { poseidon as wasmPoseidon } from '@railgun-community/poseidon-hash-wasm';
import { LRUCache } from 'lru-cache';

/** The BN254 scalar field: Poseidon's inputs must be below it. */
export const FIELD = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

const HASH_MEMO = 65_536;
const BYTES_MEMO = 16_384;

type HashFn = (inputs: bigint[]) => bigint;
type HashBytesFn = (msg: Uint8Array) => bigint;

/** js-crypto's own functions, kept for the equality tests and the benchmark. */
export const referencePoseidon: { hash: HashFn; hashBytes: HashBytesFn } = {
  hash: poseidon.hash.bind(poseidon),
  hashBytes: poseidon.hashBytes.bind(poseidon),
};

/** The permutation alone, from WebAssembly, with js-crypto's input checks. */
export function fastHash(inputs: bigint[]): bigint {
  if (!(inputs.length > 0 && inputs.length <= 16)) throw new Error('Invalid inputs');
  for (const x of inputs) {
    if (typeof x !== 'bigint' || x < 0n || x >= FIELD) throw new Error(`One or more inputs are not in the field: ${FIELD}`);
  }
  return wasmPoseidon(inputs);
}

let installed = false;

/** Replaces js-crypto's poseidon.hash and poseidon.hashBytes in this thread by the remembered fast ones. Idempotent. */
export function installFastPoseidon(): void {
  if (installed) return;
  installed = true;
  const hashes = new LRUCache<string, bigint>({ max: HASH_MEMO });
  const bytes = new LRUCache<string, bigint>({ max: BYTES_MEMO });
  const reference = referencePoseidon.hashBytes;
  poseidon.hash = (inputs: bigint[]): bigint => {
    // The key is the inputs' decimal text: distinct input lists give distinct keys (a comma never occurs in a number).
    const key = inputs.join(',');
    let h = hashes.get(key);
    if (h === undefined) {
      h = fastHash(inputs);
      hashes.set(key, h);
    }
    return h;
  };
  poseidon.hashBytes = (msg: Uint8Array): bigint => {
    // Every byte becomes one latin1 character: distinct messages, distinct keys.
    const key = Buffer.from(msg.buffer, msg.byteOffset, msg.byteLength).toString('latin1');
    let h = bytes.get(key);
    if (h === undefined) {
      // js-crypto's sponge, whose inner Poseidon calls are the fast hash above (it calls them through the same class).
      h = reference(msg);
      bytes.set(key, h);
    }
    return h;
  };
}
