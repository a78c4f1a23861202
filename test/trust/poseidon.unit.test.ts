/**
 * The fast Poseidon of the cold verification path (src/trust/poseidon.ts, its WebAssembly in poseidon-wasm.ts) gives the same outputs as @iden3/js-crypto's:
 * on go-iden3-crypto's published vectors, on random inputs of every arity, and for hashBytes on random messages; and
 * once installed, js-crypto's `poseidon` object answers the same, remembered or not. js-crypto's object must keep the
 * writable functions the install replaces: a release that changes them fails here. Reference outputs are taken before
 * the install (this file runs in its own worker, so the install reaches no other test file).
 */
import { poseidon } from '@iden3/js-crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fastHash, FIELD, installFastPoseidon, referencePoseidon } from '../../src/trust/poseidon.js';
import { wasmPoseidon } from '../../src/trust/poseidon-wasm.js';

const range = (n: number) => Array.from({ length: n }, (_, i) => BigInt(i + 1));

/** go-iden3-crypto's poseidon_test.go vectors (the same in js-crypto's tests), plus 16 inputs from js-crypto. */
const VECTORS: Array<[bigint[], bigint]> = [
  [[1n], 18586133768512220936620570745912940619677854269274689475585506675881198879027n],
  [[1n, 2n], 7853200120776062878684798364095072458815029376092732009249414926327459813530n],
  [[1n, 2n, 0n, 0n, 0n], 1018317224307729531995786483840663576608797660851238720571059489595066344487n],
  [[1n, 2n, 0n, 0n, 0n, 0n], 15336558801450556532856248569924170992202208561737609669134139141992924267169n],
  [[3n, 4n, 0n, 0n, 0n], 5811595552068139067952687508729883632420015185677766880877743348592482390548n],
  [[3n, 4n, 0n, 0n, 0n, 0n], 12263118664590987767234828103155242843640892839966517009184493198782366909018n],
  [range(6), 20400040500897583745843009878988256314335038853985262692600694741116813247201n],
  [range(14), 8354478399926161176778659061636406690034081872658507739535256090879947077494n],
  [range(16), 9989051620750914585850546081941653841776809718687451684622678807385399211877n],
];

const fieldElement = fc.bigInt({ min: 0n, max: FIELD - 1n });
const inputs = fc.integer({ min: 1, max: 16 }).chain((n) => fc.array(fieldElement, { minLength: n, maxLength: n }));
const messages = fc.uint8Array({ minLength: 1, maxLength: 600 });

// js-crypto's own functions, before the install replaces them.
const original = { hash: poseidon.hash, hashBytes: poseidon.hashBytes };

// Reference outputs before the install (the install changes what js-crypto's own object computes with).
const samples = fc.sample(inputs, 200);
const sampleMessages = [
  new TextEncoder().encode('https://www.w3.org/2018/credentials#credentialSubject'),
  new Uint8Array(31), new Uint8Array(32), new Uint8Array(62), new Uint8Array(31 * 16), new Uint8Array(31 * 16 + 1),
  ...fc.sample(messages, 100),
];
const referenceHashes = samples.map((x) => referencePoseidon.hash(x));
const referenceBytes = sampleMessages.map((m) => referencePoseidon.hashBytes(m));

describe('fast Poseidon', () => {
  it('gives the published vectors, as js-crypto does', () => {
    for (const [x, expected] of VECTORS) {
      expect(referencePoseidon.hash(x)).toBe(expected);
      expect(fastHash(x)).toBe(expected);
    }
  });

  it('equals js-crypto on random inputs of every arity from 1 to 16', () => {
    samples.forEach((x, i) => expect(fastHash(x)).toBe(referenceHashes[i]));
    fc.assert(fc.property(inputs, (x) => fastHash(x) === referencePoseidon.hash(x)), { numRuns: 50 });
  });

  it('the WebAssembly one equals js-crypto at every arity, on inputs that carry through every limb', () => {
    for (const [x, expected] of VECTORS) expect(wasmPoseidon(x)).toBe(expected);
    samples.forEach((x, i) => expect(wasmPoseidon(x)).toBe(referenceHashes[i]));
    // 0, 1, p - 1, p - 2, 2^32 - 1 (one full limb), 2^253 - 1 (every limb full but the top one), 2^253, p - 2^32, (2^256 - 1) mod p.
    const extremes = [0n, 1n, FIELD - 1n, FIELD - 2n, (1n << 32n) - 1n, (1n << 253n) - 1n, 1n << 253n, FIELD - (1n << 32n), ((1n << 256n) - 1n) % FIELD];
    for (let n = 1; n <= 16; n++) {
      for (const v of extremes) {
        const x = Array.from({ length: n }, () => v);
        expect(wasmPoseidon(x), `${n} x ${v}`).toBe(referencePoseidon.hash(x));
      }
      const mixed = Array.from({ length: n }, (_, i) => extremes[i % extremes.length] ?? 0n);
      expect(wasmPoseidon(mixed), `${n} mixed`).toBe(referencePoseidon.hash(mixed));
    }
  });

  it('refuses what js-crypto refuses: no input, more than 16, a value outside the field', () => {
    for (const bad of [[], range(17), [FIELD], [-1n]]) {
      expect(() => referencePoseidon.hash(bad)).toThrow();
      expect(() => fastHash(bad)).toThrow();
      expect(() => wasmPoseidon(bad)).toThrow();
    }
  });

  it('js-crypto\'s poseidon has its own writable hash(inputs) and hashBytes(msg), which the install replaces', () => {
    for (const name of ['hash', 'hashBytes'] as const) {
      const own = Object.getOwnPropertyDescriptor(poseidon, name);
      expect(own?.writable, `poseidon.${name} writable`).toBe(true);
      expect(typeof own?.value, `poseidon.${name} a function`).toBe('function');
      expect((own?.value as (x: unknown) => bigint).length, `poseidon.${name} takes one argument`).toBe(1);
    }
    expect(typeof original.hash([1n, 2n])).toBe('bigint');
    expect(typeof original.hashBytes(new Uint8Array(31))).toBe('bigint');
  });

  it('once installed, js-crypto\'s poseidon.hash and hashBytes answer the reference outputs, first and remembered', () => {
    installFastPoseidon();
    expect(poseidon.hash).not.toBe(original.hash);
    expect(poseidon.hashBytes).not.toBe(original.hashBytes);
    for (let round = 0; round < 2; round++) {
      samples.forEach((x, i) => expect(poseidon.hash([...x])).toBe(referenceHashes[i]));
      sampleMessages.forEach((m, i) => expect(poseidon.hashBytes(m)).toBe(referenceBytes[i]));
    }
    for (const [x, expected] of VECTORS) expect(poseidon.hash(x)).toBe(expected);
    expect(() => poseidon.hash([FIELD])).toThrow();
  });
});
