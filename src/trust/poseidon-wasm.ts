/**
 * Poseidon over BN254's scalar field (iden3's parameters: js-crypto's optimised constants and order of rounds) with
 * Montgomery arithmetic in WebAssembly: field elements as 8 limbs of 32 bits, each product a fully unrolled CIOS
 * multiplication in i64. The module is written out here, byte by byte, when first used; nothing is fetched or built
 * beforehand. Checked against @iden3/js-crypto's reference on every arity in test/trust/poseidon.unit.test.ts.
 * Memory is read and written through a Uint32Array: little-endian hosts only (poseidon.ts uses js-crypto elsewhere).
 */
import { OPT } from '@iden3/js-crypto';

/** BN254's scalar field: the modulus of every Poseidon input and output. */
export const FIELD = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;
const P = FIELD;
const LIMBS = 8;
const BYTES = 32;
const MASK32 = 0xffffffffn;
const N_ROUNDS_F = 8;
const N_ROUNDS_P = [56, 57, 56, 60, 60, 63, 64, 63, 60, 66, 60, 65, 70, 60, 64, 68];

const limbsOf = (x: bigint): bigint[] => Array.from({ length: LIMBS }, (_, i) => (x >> BigInt(32 * i)) & MASK32);
const P_LIMBS = limbsOf(P);
/** -p^-1 mod 2^32 (Newton's iteration on the lowest limb). */
const N0 = (() => {
  const p0 = P_LIMBS[0] ?? 0n;
  let inv = 1n;
  for (let i = 0; i < 5; i++) inv = (inv * (2n - p0 * inv)) & MASK32;
  return (-inv) & MASK32;
})();
const R = (1n << 256n) % P;
const R2 = (R * R) % P;

// --- a minimal WebAssembly encoder -------------------------------------------------------------------------------
const I32 = 0x7f;
const I64 = 0x7e;
const uleb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
};
const sleb = (v: bigint): number[] => {
  const out: number[] = [];
  for (;;) {
    const byte = Number(v & 0x7fn);
    v >>= 7n;
    const done = (v === 0n && (byte & 0x40) === 0) || (v === -1n && (byte & 0x40) !== 0);
    out.push(done ? byte : byte | 0x80);
    if (done) return out;
  }
};
const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];
const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];

/** Instructions of one function body; locals by index. */
class Code {
  readonly bytes: number[] = [];
  get(i: number) { this.bytes.push(0x20, ...uleb(i)); return this; }
  set(i: number) { this.bytes.push(0x21, ...uleb(i)); return this; }
  tee(i: number) { this.bytes.push(0x22, ...uleb(i)); return this; }
  i64(v: bigint) { this.bytes.push(0x42, ...sleb(BigInt.asIntN(64, v))); return this; }
  i32(v: number) { this.bytes.push(0x41, ...sleb(BigInt(v | 0))); return this; }
  load32u(offset: number) { this.bytes.push(0x35, 2, ...uleb(offset)); return this; }
  store32(offset: number) { this.bytes.push(0x3e, 2, ...uleb(offset)); return this; }
  op(...codes: number[]) { this.bytes.push(...codes); return this; }
  call(f: number) { this.bytes.push(0x10, ...uleb(f)); return this; }
}
const ADD = 0x7c;
const SUB = 0x7d;
const MUL = 0x7e;
const AND = 0x83;
const SHR_U = 0x88;
const SELECT = 0x1b;
const I32_WRAP = 0xa7;

/**
 * r = a * b * 2^-256 mod p (Montgomery), all three pointers to 8 limbs; a and b below p, r below p. r may be a or b.
 * CIOS with the two inner loops fused and no carry word beyond the 8 limbs, sound because p's top limb is below
 * 2^31 - 2 (gnark's "no-carry" condition): every sum below is at most (2^32 - 1) + (2^32 - 1)^2 + (2^32 - 1) = 2^64 - 1.
 * Locals: 0 r, 1 a, 2 b; then a0..a7, t0..t7, carry A, carry C, m, x, bi.
 */
function montgomeryMul(): { locals: number; code: number[] } {
  const c = new Code();
  const A = (k: number) => 3 + k;
  const T = (k: number) => 11 + k;
  const CA = 19;
  const CC = 20;
  const M = 21;
  const X = 22;
  const BI = 23;
  const p = (j: number) => P_LIMBS[j] ?? 0n;
  for (let k = 0; k < LIMBS; k++) c.get(1).load32u(4 * k).set(A(k));
  for (let i = 0; i < LIMBS; i++) {
    c.get(2).load32u(4 * i).set(BI);
    // (A, t0) = t0 + a0 b_i; m = t0 n0' mod 2^32; C = (t0 + m p0) >> 32
    c.get(T(0)).get(A(0)).get(BI).op(MUL, ADD).tee(X).i64(32n).op(SHR_U).set(CA);
    c.get(X).i64(MASK32).op(AND).tee(T(0)).i64(N0).op(MUL).i64(MASK32).op(AND).set(M);
    c.get(T(0)).get(M).i64(p(0)).op(MUL, ADD).i64(32n).op(SHR_U).set(CC);
    for (let j = 1; j < LIMBS; j++) {
      // (A, t_j) = t_j + a_j b_i + A; (C, t_{j-1}) = t_j + m p_j + C
      c.get(T(j)).get(A(j)).get(BI).op(MUL, ADD).get(CA).op(ADD).tee(X).i64(32n).op(SHR_U).set(CA);
      c.get(X).i64(MASK32).op(AND).get(M).i64(p(j)).op(MUL, ADD).get(CC).op(ADD).tee(X).i64(32n).op(SHR_U).set(CC);
      c.get(X).i64(MASK32).op(AND).set(T(j - 1));
    }
    c.get(CC).get(CA).op(ADD).set(T(7));
  }
  // The loads of a are done with: their locals hold the difference.
  reduceOnce(c, T, X, CA, A);
  return { locals: 21, code: c.bytes };
}

/**
 * Stores t (limbs T(0..7), below 2p) minus p when that is not negative, else t, at local 0's address. Uses the
 * locals D(0..7) as scratch for the difference.
 */
function reduceOnce(c: Code, T: (k: number) => number, X: number, BORROW: number, D: (k: number) => number): void {
  c.i64(0n).set(BORROW);
  for (let j = 0; j < LIMBS; j++) {
    c.get(T(j)).i64(P_LIMBS[j] ?? 0n).op(SUB).get(BORROW).op(SUB).set(X);
    c.get(X).i64(MASK32).op(AND).set(D(j));
    c.get(X).i64(63n).op(SHR_U).set(BORROW);
  }
  // No borrow out of the top limb: t >= p, keep the difference.
  for (let j = 0; j < LIMBS; j++) {
    c.get(0).get(D(j)).get(T(j)).get(BORROW).op(I32_WRAP, 0x45 /* i32.eqz */, SELECT).store32(4 * j);
  }
}

/** r = a + b mod p; a and b below p. Locals: 0 r, 1 a, 2 b; then s0..s7, d0..d7, x, carry. */
function modularAdd(): { locals: number; code: number[] } {
  const c = new Code();
  const S = (k: number) => 3 + k;
  const D = (k: number) => 11 + k;
  const X = 19;
  const CARRY = 20;
  c.i64(0n).set(CARRY);
  for (let j = 0; j < LIMBS; j++) {
    c.get(1).load32u(4 * j).get(2).load32u(4 * j).op(ADD).get(CARRY).op(ADD).tee(X).i64(MASK32).op(AND).set(S(j));
    c.get(X).i64(32n).op(SHR_U).set(CARRY);
  }
  // a + b < 2p < 2^255: no carry out of the top limb.
  reduceOnce(c, S, X, CARRY, D);
  return { locals: 18, code: c.bytes };
}

/** Scratch elements of the module's own functions, below the addresses the hash allocates. */
const TMP = 0;
const TMP2 = BYTES;
const RESERVED = 2 * BYTES;
const F_MUL = 0;
const F_ADD = 1;

/** A loop over n (local `n`) elements: `body` once per element, then each pointer local advanced by 32 bytes. */
function loop(c: Code, n: number, pointers: number[], body: (c: Code) => void): void {
  c.op(0x02, 0x40, 0x03, 0x40); // block, loop
  c.get(n).op(0x45, 0x0d, 1); // br_if 1 when n == 0
  body(c);
  for (const at of pointers) c.get(at).i32(BYTES).op(0x6a).set(at);
  c.get(n).i32(1).op(0x6b).set(n);
  c.op(0x0c, 0, 0x0b, 0x0b); // br 0, end loop, end block
}

/** dst += x * y (through TMP), the three addresses in locals. */
const mulAdd = (dst: number, x: number, y: number) => (c: Code) => {
  c.i32(TMP).get(x).get(y).call(F_MUL);
  c.get(dst).get(dst).i32(TMP).call(F_ADD);
};

/** out = sum of row[j] * vec[j], j < n (n >= 1). Locals: 0 out, 1 row, 2 vec, 3 n. */
function dot(): { locals: number; code: number[] } {
  const c = new Code();
  // The first product is stored, not added: out needs no zeroing.
  c.get(0).get(1).get(2).call(F_MUL);
  c.get(1).i32(BYTES).op(0x6a).set(1);
  c.get(2).i32(BYTES).op(0x6a).set(2);
  c.get(3).i32(1).op(0x6b).set(3);
  loop(c, 3, [1, 2], mulAdd(0, 1, 2));
  return { locals: 0, code: c.bytes };
}

/** vec[k] += s * row[k], k < n. Locals: 0 vec, 1 s, 2 row, 3 n. */
function axpy(): { locals: number; code: number[] } {
  const c = new Code();
  loop(c, 3, [0, 2], mulAdd(0, 1, 2));
  return { locals: 0, code: c.bytes };
}

/** x = x^5. Locals: 0 x. */
function pow5(): { locals: number; code: number[] } {
  const c = new Code();
  c.i32(TMP2).get(0).get(0).call(F_MUL);
  c.i32(TMP2).i32(TMP2).i32(TMP2).call(F_MUL);
  c.get(0).i32(TMP2).get(0).call(F_MUL);
  return { locals: 0, code: c.bytes };
}

function moduleBytes(): Uint8Array<ArrayBuffer> {
  const fns = [
    { type: 0, ...montgomeryMul() }, { type: 0, ...modularAdd() }, { type: 1, ...dot() }, { type: 1, ...axpy() }, { type: 2, ...pow5() },
  ];
  const exported: Array<[string, number]> = [['mul', 0], ['add', 1], ['dot', 2], ['axpy', 3], ['pow5', 4]];
  const name = (text: string) => vec([...text].map((ch) => [ch.charCodeAt(0)]));
  const bytes = [
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, vec([
      [0x60, ...vec([[I32], [I32], [I32]]), 0x00],
      [0x60, ...vec([[I32], [I32], [I32], [I32]]), 0x00],
      [0x60, ...vec([[I32]]), 0x00],
    ])),
    ...section(3, vec(fns.map(({ type }) => [type]))),
    ...section(5, vec([[0x00, 1]])),
    ...section(7, vec([...exported.map(([text, f]) => [...name(text), 0x00, f]), [...name('memory'), 0x02, 0]])),
    ...section(10, vec(fns.map(({ locals, code }) => {
      const body = [...(locals > 0 ? vec([[...uleb(locals), I64]]) : [0]), ...code, 0x0b];
      return [...uleb(body.length), ...body];
    }))),
  ];
  return Uint8Array.from(bytes);
}

// --- the hash ---------------------------------------------------------------------------------------------------
interface Field {
  mul(r: number, a: number, b: number): void;
  add(r: number, a: number, b: number): void;
  dot(out: number, row: number, vec: number, n: number): void;
  axpy(vec: number, s: number, row: number, n: number): void;
  pow5(x: number): void;
  words: Uint32Array;
}

interface Layout {
  t: number;
  rp: number;
  loaded: boolean;
  C: number;
  S: number;
  M: number;
  P: number;
}

const opt = OPT as { C: bigint[][]; S: bigint[][]; M: bigint[][][]; P: bigint[][][] };

class WasmPoseidon {
  private readonly f: Field;
  private readonly layouts: Layout[] = [];
  /** Addresses of the scratch elements. */
  private readonly state: number;
  private readonly next: number;
  private readonly tmp: number;
  private readonly acc: number;
  private readonly r2: number;
  private readonly one: number;

  constructor() {
    const module = new WebAssembly.Module(moduleBytes() as Uint8Array<ArrayBuffer>);
    const exports = new WebAssembly.Instance(module).exports as unknown as Omit<Field, 'words'> & { memory: WebAssembly.Memory };
    let top = RESERVED;
    const alloc = (n: number): number => {
      const at = top;
      top += n * BYTES;
      return at;
    };
    // Addresses for every arity now; each arity's constants written at its first hash (~3 ms for 16 inputs).
    for (let t = 2; t <= 17; t++) {
      const rp = N_ROUNDS_P[t - 2] ?? 0;
      const C = alloc(opt.C[t - 2]?.length ?? 0);
      const S = alloc(opt.S[t - 2]?.length ?? 0);
      this.layouts[t] = { t, rp, C, S, M: alloc(t * t), P: alloc(t * t), loaded: false };
    }
    this.state = alloc(17);
    this.next = alloc(17);
    this.tmp = alloc(1);
    this.acc = alloc(1);
    this.r2 = alloc(1);
    this.one = alloc(1);
    const pages = Math.ceil(top / 65536);
    if (pages > 1) exports.memory.grow(pages - 1);
    const { mul, add, dot, axpy, pow5 } = exports;
    this.f = { mul, add, dot, axpy, pow5, words: new Uint32Array(exports.memory.buffer) };
    this.write(this.r2, R2);
    this.write(this.one, 1n);
  }

  /** Writes arity t's constants in Montgomery form, the matrices transposed (row i: the coefficients of output i). */
  private load(l: Layout): void {
    const { t } = l;
    const put = (base: number, xs: readonly bigint[]) => xs.forEach((x, i) => this.write(base + i * BYTES, (x * R) % P));
    const transposed = (m: bigint[][] | undefined) => Array.from({ length: t * t }, (_, k) => m?.[k % t]?.[Math.floor(k / t)] ?? 0n);
    put(l.C, opt.C[t - 2] ?? []);
    put(l.S, opt.S[t - 2] ?? []);
    put(l.M, transposed(opt.M[t - 2]));
    put(l.P, transposed(opt.P[t - 2]));
    l.loaded = true;
  }

  private write(at: number, x: bigint): void {
    const w = this.f.words;
    const base = at >> 2;
    let v = x;
    for (let k = 0; k < LIMBS; k++) {
      w[base + k] = Number(v & MASK32);
      v >>= 32n;
    }
  }

  private read(at: number): bigint {
    const w = this.f.words;
    const base = at >> 2;
    let hex = '';
    for (let k = LIMBS - 1; k >= 0; k--) hex += (w[base + k] ?? 0).toString(16).padStart(8, '0');
    return BigInt(`0x${hex}`);
  }

  /** state = matrix * sbox(state), with the constants at `constantsAt` added after the S-box when given. */
  private full(l: Layout, matrix: number, constantsAt: number | undefined): void {
    const { add, dot, pow5, words } = this.f;
    const { t } = l;
    const { state, next } = this;
    for (let i = 0; i < t; i++) {
      const at = state + i * BYTES;
      pow5(at);
      if (constantsAt !== undefined) add(at, at, l.C + (constantsAt + i) * BYTES);
    }
    for (let i = 0; i < t; i++) dot(next + i * BYTES, matrix + i * t * BYTES, state, t);
    words.copyWithin(state >> 2, next >> 2, (next >> 2) + t * LIMBS);
  }

  hash(inputs: readonly bigint[]): bigint {
    const l = this.layouts[inputs.length + 1];
    if (l === undefined) throw new Error('Invalid inputs');
    if (!l.loaded) this.load(l);
    const { mul, add, dot, axpy, pow5, words } = this.f;
    const { t, rp } = l;
    const { state, tmp, acc } = this;
    // state[0] = C[0]; state[i] = input[i-1] (in Montgomery form) + C[i]
    words.copyWithin(state >> 2, l.C >> 2, (l.C >> 2) + LIMBS);
    for (let i = 1; i < t; i++) {
      const at = state + i * BYTES;
      this.write(at, inputs[i - 1] ?? 0n);
      mul(at, at, this.r2);
      add(at, at, l.C + i * BYTES);
    }
    for (let r = 0; r < N_ROUNDS_F / 2 - 1; r++) this.full(l, l.M, (r + 1) * t);
    this.full(l, l.P, (N_ROUNDS_F / 2) * t);
    const base = (N_ROUNDS_F / 2 + 1) * t;
    for (let r = 0; r < rp; r++) {
      pow5(state);
      add(state, state, l.C + (base + r) * BYTES);
      const row = l.S + (t * 2 - 1) * r * BYTES;
      // acc = sum of S[row + j] * state[j]; state[k] += state[0] * S[row + t + k - 1] (k >= 1); state[0] = acc
      dot(acc, row, state, t);
      axpy(state + BYTES, state, row + t * BYTES, t - 1);
      words.copyWithin(state >> 2, acc >> 2, (acc >> 2) + LIMBS);
    }
    for (let r = 0; r < N_ROUNDS_F / 2 - 1; r++) this.full(l, l.M, base + rp + r * t);
    this.full(l, l.M, undefined);
    mul(tmp, state, this.one);
    return this.read(tmp);
  }
}

let instance: WasmPoseidon | undefined;

/** Poseidon of 1 to 16 field elements; throws as js-crypto does on any other count or on a value outside [0, p). */
export function wasmPoseidon(inputs: readonly bigint[]): bigint {
  if (!(inputs.length > 0 && inputs.length <= 16)) throw new Error('Invalid inputs');
  for (const x of inputs) {
    if (typeof x !== 'bigint' || x < 0n || x >= P) throw new Error(`One or more inputs are not in the field: ${P}`);
  }
  instance ??= new WasmPoseidon();
  // The inputs are copied in before any hashing: a getter of the array cannot run in the middle of it.
  return instance.hash([...inputs]);
}
