/**
 * The one-pass Merkle root of the cold check (src/trust/merklize.ts) is js-merkletree's: the same root for the same
 * leaves, the same refusals at the same insertion, and, through the library's own merklizeJSONLD, the same credential
 * roots (and the same errors) as Merklizer.merklizeJSONLD. Trees outside merklizeForRoot are left as they were.
 */
import { readFileSync } from 'node:fs';
import { Merklizer } from '@iden3/js-jsonld-merklization';
import * as mtNs from '@iden3/js-merkletree';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createDocumentLoader } from '../../src/jsonld/documents.js';
import { FIELD } from '../../src/trust/poseidon.js';
import { merklizeForRoot, sparseMerkleRoot, withCollectingTrees } from '../../src/trust/merklize.js';
import { at } from '../elements.js';

interface Tree {
  add(k: bigint, v: bigint): Promise<void>;
  root(): Promise<{ bigInt(): bigint }>;
  generateProof(k: bigint): Promise<unknown>;
  get(k: bigint): Promise<{ value: bigint }>;
}
const mt = mtNs as unknown as {
  Merkletree: new (db: unknown, writable: boolean, maxLevels: number) => Tree;
  InMemoryDB: new (prefix: Uint8Array) => unknown;
  str2Bytes(s: string): Uint8Array;
};
const newTree = (maxLevels: number, writable = true): Tree => new mt.Merkletree(new mt.InMemoryDB(mt.str2Bytes('')), writable, maxLevels);

/** Adds the leaves in order; answers the root, or what was thrown (an Error's message, or the thrown string). */
async function build(tree: Tree, leaves: ReadonlyArray<readonly [bigint, bigint]>): Promise<{ root?: bigint; error?: string; at?: number }> {
  for (let i = 0; i < leaves.length; i++) {
    try {
      await tree.add(...at(leaves, i));
    } catch (e) {
      return { error: e instanceof Error ? e.message : String(e), at: i };
    }
  }
  return { root: (await tree.root()).bigInt() };
}

const field = fc.bigInt({ min: 0n, max: FIELD - 1n });
/** Keys sharing their low bits with others (long chains of one-child nodes), or not. */
const keys = fc.oneof(field, fc.tuple(fc.bigInt({ min: 0n, max: 7n }), fc.bigInt({ min: 0n, max: (FIELD >> 30n) - 1n })).map(([low, high]) => (high << 30n) | low | 0x2aaaaaan));
const leaves = fc.array(fc.tuple(keys, field), { minLength: 1, maxLength: 40 });

describe('sparseMerkleRoot', () => {
  it('equals the root js-merkletree builds by inserting the same leaves one by one', async () => {
    await fc.assert(
      fc.asyncProperty(leaves, async (ls) => {
        const distinct = [...new Map(ls.map(([k, v]) => [k, v])).entries()];
        const expected = await build(newTree(254), distinct);
        expect(sparseMerkleRoot(distinct, 254)).toBe(expected.root);
      }),
      { numRuns: 60 },
    );
  });

  it('is 0 for no leaf and the leaf hash for one, as js-merkletree', async () => {
    expect(sparseMerkleRoot([], 40)).toBe((await newTree(40).root()).bigInt());
    expect(sparseMerkleRoot([[5n, 7n]], 40)).toBe((await build(newTree(40), [[5n, 7n]])).root);
  });
});

describe('a collecting tree (withCollectingTrees)', () => {
  it('answers the root js-merkletree answers, and refuses what it refuses at the same insertion', async () => {
    // Small maxLevels so that keys sharing maxLevels - 1 low bits are easy to draw; duplicates drawn on purpose.
    const small = fc.array(fc.tuple(fc.bigInt({ min: 0n, max: 1023n }), fc.bigInt({ min: 0n, max: 15n })), { minLength: 1, maxLength: 24 });
    await fc.assert(
      fc.asyncProperty(small, fc.integer({ min: 2, max: 12 }), async (ls, maxLevels) => {
        const expected = await build(newTree(maxLevels), ls);
        const collected = await withCollectingTrees(() => build(newTree(maxLevels), ls));
        expect(collected).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a key or value outside the field and an add to a tree that is not writable, as js-merkletree', async () => {
    for (const [ls, writable] of [[[[FIELD, 1n]], true], [[[1n, FIELD]], true], [[[1n, 1n]], false]] as const) {
      const expected = await build(newTree(40, writable), ls);
      expect(expected.error).toBeTruthy();
      expect(await withCollectingTrees(() => build(newTree(40, writable), ls))).toEqual(expected);
    }
  });

  it('answers root() only: a read of its nodes is refused, not answered from an empty tree', async () => {
    const tree = newTree(40);
    await withCollectingTrees(() => tree.add(1n, 2n));
    await expect(tree.generateProof(1n)).rejects.toThrow(/root only/);
    await expect(tree.get(1n)).rejects.toThrow(/root only/);
  });

  it('leaves the trees made outside it as they were, while one collects', async () => {
    const outside = newTree(40);
    await withCollectingTrees(async () => {
      await newTree(40).add(3n, 4n);
      await new Promise((r) => setTimeout(r, 1));
    });
    const pending = withCollectingTrees(() => new Promise((r) => setTimeout(r, 5)));
    await outside.add(1n, 2n); // not in the collecting scope
    await pending;
    expect((await outside.get(1n)).value).toBe(2n);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Credentials: the library's merklizeJSONLD against merklizeForRoot on the same documents.

const loader = createDocumentLoader({ fetch: () => Promise.reject(new Error('offline')), timeoutMs: 1 });
const sample = JSON.parse(readFileSync(new URL('../../src/trust/documents/warmup-credential.json', import.meta.url), 'utf8')) as Record<string, unknown>;
const { proof: _proof, ...unsigned } = sample;

async function both(doc: unknown): Promise<{ library: string; ours: string }> {
  const text = JSON.stringify(doc);
  const outcome = async (f: () => Promise<{ root(): Promise<{ bigInt(): bigint }> }>): Promise<string> => {
    try {
      return `root ${(await (await f()).root()).bigInt()}`;
    } catch (e) {
      return `error ${e instanceof Error ? e.message : String(e)}`;
    }
  };
  return {
    library: await outcome(() => Merklizer.merklizeJSONLD(text, { documentLoader: loader as never })),
    ours: await outcome(() => merklizeForRoot(text, { documentLoader: loader })),
  };
}

const text = fc.string({ unit: 'grapheme', maxLength: 40 });
const subjects = fc.record({
  reviewAnswer: fc.constantFrom('GREEN', 'RED', 'YELLOW'),
  documentType: fc.oneof(text, fc.array(text, { minLength: 2, maxLength: 4 })),
  entryTime: fc.date({ min: new Date('1990-01-01'), max: new Date('2090-01-01'), noInvalidDate: true }).map((d) => d.toISOString()),
  personalData: fc.record({
    firstName: text,
    lastName: fc.oneof(text, fc.array(text, { minLength: 2, maxLength: 3 })),
    age: fc.integer({ min: 0, max: 150 }),
    citizenship: fc.oneof(text, fc.array(text, { minLength: 2, maxLength: 3 })),
    birthDate: fc.integer({ min: 19000101, max: 20991231 }),
  }),
});

describe('merklizeForRoot', () => {
  it("gives the bundled sample credential the library's root", async () => {
    const r = await both(unsigned);
    expect(r.library).toMatch(/^root \d+$/);
    expect(r.ours).toBe(r.library);
  });

  it("gives the library's root for credentials with random subjects, arrays of values included", async () => {
    await fc.assert(
      fc.asyncProperty(subjects, fc.uuid(), async (s, id) => {
        const doc = { ...unsigned, id: `urn:uuid:${id}`, credentialSubject: { ...(unsigned.credentialSubject as object), ...s } };
        const r = await both(doc);
        expect(r.ours).toBe(r.library);
      }),
      { numRuns: 25 },
    );
  });

  it('fails where the library fails, with the same error: an undefined term, a value of the wrong type', async () => {
    const cases = [
      { ...unsigned, credentialSubject: { ...(unsigned.credentialSubject as object), notInTheContext: 'x' } },
      { ...unsigned, credentialSubject: { ...(unsigned.credentialSubject as object), personalData: { age: 'forty' } } },
      { ...unsigned, issuanceDate: 'yesterday' },
    ];
    for (const doc of cases) {
      const r = await both(doc);
      expect(r.library).toMatch(/^error /);
      expect(r.ours).toBe(r.library);
    }
  });
});
