/**
 * The merklization of a credential for the one thing the cold check needs from its tree: the root.
 *
 * @iden3/js-jsonld-merklization's `Merklizer.merklizeJSONLD` turns the credential into ~20 (key, value) entries and
 * inserts them one by one into an @iden3/js-merkletree `Merkletree` held in an in-memory database. Each insertion
 * re-hashes the path from the new leaf to the root and writes every node into the database: for a demo credential
 * ~75 Poseidon hashes and half the cost of merklizing it (~12 of ~24 ms). The tree is a sparse Merkle tree, whose
 * shape depends only on its set of keys, so its root can be computed in one pass, each node hashed once (~30 hashes,
 * most of the rest remembered by poseidon.ts).
 *
 * `merklizeForRoot` runs the library's `merklizeJSONLD` unchanged (same JSON-LD processing, entries, paths, values,
 * hashes, errors) with the tree's `add` collecting the entries instead of inserting them, while it runs; `root()` of
 * that tree is then `sparseMerkleRoot` of them. The collecting is scoped with an AsyncLocalStorage: every other tree
 * in the thread (a demo issuer's, js-sdk's) is untouched. Such a tree answers root() only: a read of its nodes (get,
 * generateProof, walk: all go through getNode) throws instead of answering from an empty database.
 *
 * Same answers: `add` performs the checks js-merkletree's `add` makes, in the same order, with the same errors (not
 * writable; key or value outside the field; the key already in the tree; a key whose first maxLevels - 1 path bits
 * equal another's, which js-merkletree refuses as "reached maximum level of the merkle tree"), at the same insertion.
 * test/trust/merklize.test.ts compares roots and errors with js-merkletree's on random and colliding keys and on every
 * credential the trust tests know.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { poseidon } from '@iden3/js-crypto';
import { Merklizer } from '@iden3/js-jsonld-merklization';
import * as mtNs from '@iden3/js-merkletree';
import { librarySubset, type Hash } from './iden3.js';
import type { DocumentLoader } from '../jsonld/documents.js';

/** The parts of js-merkletree's Merkletree this file replaces or reads (its declarations cannot be resolved: iden3.ts). */
interface TreeInstance {
  _writable: boolean;
  readonly maxLevels: number;
}
interface TreePrototype {
  add(this: TreeInstance, k: bigint, v: bigint): Promise<void>;
  root(this: TreeInstance): Promise<Hash>;
  getNode(this: TreeInstance, k: Hash): Promise<unknown>;
}
const mt = librarySubset<{
  Merkletree: { prototype: TreePrototype };
  Hash: { fromBigInt(i: bigint): Hash };
  ErrEntryIndexAlreadyExists: string;
  ErrNotWritable: string;
  ErrReachedMaxLevel: string;
}>(mtNs, { Merkletree: true, Hash: true, ErrEntryIndexAlreadyExists: true, ErrNotWritable: true, ErrReachedMaxLevel: true });

/** The entries collected for one tree, and its root once asked. */
interface Collected {
  leaves: Array<[bigint, bigint]>;
  keys: Set<bigint>;
  /** key mod 2^(maxLevels - 1) -> a key: two equal ones are refused (js-merkletree: reached maximum level). */
  prefixes: Set<bigint>;
  root?: Hash;
}

/**
 * The root of an iden3 sparse Merkle tree holding these (key, value) leaves: a leaf hashes to Poseidon(k, v, 1), a
 * middle node to Poseidon(left, right), an empty subtree is 0, the branch at level i follows bit i of the key (least
 * significant first), and a subtree holding one leaf is that leaf. Keys must be distinct and no two may share their
 * first maxLevels - 1 bits (the caller checks: merklizeForRoot's add); throws otherwise.
 */
export function sparseMerkleRoot(leaves: ReadonlyArray<readonly [bigint, bigint]>, maxLevels: number): bigint {
  const node = (items: ReadonlyArray<readonly [bigint, bigint]>, level: number): bigint => {
    const first = items[0];
    if (first === undefined) return 0n;
    if (items.length === 1) return poseidon.hash([first[0], first[1], 1n]);
    if (level > maxLevels - 2) throw new Error(mt.ErrReachedMaxLevel);
    const bit = 1n << BigInt(level);
    const left: Array<readonly [bigint, bigint]> = [];
    const right: Array<readonly [bigint, bigint]> = [];
    for (const item of items) (item[0] & bit ? right : left).push(item);
    return poseidon.hash([node(left, level + 1), node(right, level + 1)]);
  };
  return node(leaves, 0);
}

const collecting = new AsyncLocalStorage<true>();
const collected = new WeakMap<object, Collected>();
let installed = false;

/** Puts the collecting add, root and getNode on js-merkletree's Merkletree, once per thread. */
function install(): void {
  if (installed) return;
  installed = true;
  const proto = mt.Merkletree.prototype;
  const { add, root, getNode } = proto;
  proto.add = function (this: TreeInstance, k: bigint, v: bigint): Promise<void> {
    if (collecting.getStore() !== true && !collected.has(this)) return add.call(this, k, v);
    return (async () => {
      // js-merkletree's add: the writable check, then Hash.fromBigInt of the key and the value (in the field).
      if (!this._writable) throw mt.ErrNotWritable;
      mt.Hash.fromBigInt(k);
      mt.Hash.fromBigInt(v);
      let c = collected.get(this);
      if (c === undefined) collected.set(this, (c = { leaves: [], keys: new Set(), prefixes: new Set() }));
      // addLeaf: an equal key is refused first, then one sharing the first maxLevels - 1 path bits (pushLeaf).
      if (c.keys.has(k)) throw mt.ErrEntryIndexAlreadyExists;
      const prefix = k & ((1n << BigInt(this.maxLevels - 1)) - 1n);
      if (c.prefixes.has(prefix)) throw new Error(mt.ErrReachedMaxLevel);
      c.keys.add(k);
      c.prefixes.add(prefix);
      c.leaves.push([k, v]);
      c.root = undefined;
    })();
  };
  proto.root = function (this: TreeInstance): Promise<Hash> {
    const c = collected.get(this);
    if (c === undefined) return root.call(this);
    return (async () => (c.root ??= mt.Hash.fromBigInt(sparseMerkleRoot(c.leaves, this.maxLevels))))();
  };
  proto.getNode = function (this: TreeInstance, k: Hash): Promise<unknown> {
    if (collected.has(this)) return Promise.reject(new Error('this Merkle tree was built for its root only (trust/merklize.ts)'));
    return getNode.call(this, k);
  };
}

/**
 * Runs fn with every js-merkletree tree it adds to collecting its leaves instead of inserting them (module comment):
 * such a tree answers root() only. For merklizeForRoot, and for the tests that compare it with js-merkletree.
 */
export function withCollectingTrees<T>(fn: () => Promise<T>): Promise<T> {
  install();
  return collecting.run(true, fn);
}

/**
 * Merklizer.merklizeJSONLD(docText, options), whose tree answers root() only (module comment). The Merklizer's entries,
 * paths, values and types are the library's own.
 */
export function merklizeForRoot(docText: string, options: { documentLoader: DocumentLoader }): Promise<Merklizer> {
  return withCollectingTrees(() => Merklizer.merklizeJSONLD(docText, options));
}
