/**
 * js-merkletree re-hashes the path to the root on every insert; a sparse Merkle tree's shape depends only on its keys,
 * so the library's `merklizeJSONLD` runs unchanged while its trees collect their entries, and `root()` hashes each
 * node once. `add` refuses what js-merkletree's refuses, in the same order and with the same errors.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { poseidon } from '@iden3/js-crypto';
import { Merklizer, Path } from '@iden3/js-jsonld-merklization';
import * as mtNs from '@iden3/js-merkletree';
import { librarySubset, type Hash } from './iden3.js';
import type { DocumentLoader } from '../jsonld/documents.js';

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

interface Collected {
  leaves: Array<[bigint, bigint]>;
  keys: Set<bigint>;
  /** key mod 2^(maxLevels - 1) -> a key: two equal ones are refused (js-merkletree: reached maximum level). */
  prefixes: Set<bigint>;
  root?: Hash;
}

/** Throws where js-merkletree would. */
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

/**
 * The library walks a quad's parents up to a quad without one, appending each to the path: where a credential's nodes
 * reference each other in a cycle (its top `id` as the object of a property of its credentialSubject, say), that walk
 * never ends and holds a verification thread at full CPU. Real paths have a few parts (two per level of nesting).
 */
const MAX_PATH_PARTS = 256;
export const CYCLE_MESSAGE = 'the credential\'s nodes reference each other in a cycle';
let pathBounded = false;
function boundPaths(): void {
  if (pathBounded) return;
  pathBounded = true;
  const proto = Path.prototype as { append(p: Array<string | number>): void; parts: Array<string | number> };
  const append = proto.append;
  proto.append = function (this: { parts: Array<string | number> }, p: Array<string | number>): void {
    if (this.parts.length + p.length > MAX_PATH_PARTS) throw new Error(CYCLE_MESSAGE);
    append.call(this, p);
  };
}

boundPaths(); // on load: every merklization of this process, js-sdk's included, ends

const collecting = new AsyncLocalStorage<true>();
const collected = new WeakMap<object, Collected>();
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  const proto = mt.Merkletree.prototype;
  const { add, root, getNode } = proto;
  proto.add = function (this: TreeInstance, k: bigint, v: bigint): Promise<void> {
    if (collecting.getStore() !== true && !collected.has(this)) return add.call(this, k, v);
    return (async () => {
      // js-merkletree's checks in its order: writable, key and value in the field, then addLeaf's.
      if (!this._writable) throw mt.ErrNotWritable;
      mt.Hash.fromBigInt(k);
      mt.Hash.fromBigInt(v);
      let c = collected.get(this);
      if (c === undefined) collected.set(this, (c = { leaves: [], keys: new Set(), prefixes: new Set() }));
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

export function withCollectingTrees<T>(fn: () => Promise<T>): Promise<T> {
  install();
  return collecting.run(true, fn);
}

export function merklizeForRoot(docText: string, options: { documentLoader: DocumentLoader }): Promise<Merklizer> {
  return withCollectingTrees(() => Merklizer.merklizeJSONLD(docText, options));
}
