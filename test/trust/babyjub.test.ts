/**
 * src/trust/babyjub.ts (BabyJubJub EdDSA-Poseidon verification on @noble/curves) gives the same answer as
 * @iden3/js-crypto's `PublicKey.verifyPoseidon`, on valid signatures, on every kind of tampering and on random inputs.
 * Every case asks both functions and compares both answers with the expected literal; where js-crypto throws, the
 * expected js-crypto answer is 'throws' and ours is false (the mapping documented in babyjub.ts).
 *
 * Fixtures are made with js-crypto's own arithmetic (babyJub.addPoint, mulPointEScalar: ~18 ms per multiplication),
 * never with noble, so that the implementation under test does not grade itself.
 */
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { babyJub, ffUtils, Hex, PrivateKey, PublicKey, Signature, poseidon } from '@iden3/js-crypto';
import { rememberIssuerKey, verifyPoseidonSignature } from '../../src/trust/babyjub.js';
import { at } from '../elements.js';

type Pt = [bigint, bigint];
interface Case {
  A: Pt;
  msg: bigint;
  R8: Pt;
  S: bigint;
}
type Answer = boolean | 'throws';

// js-crypto's exports are typed `any` here: its .d.ts re-exports './babyjub' without an extension, which NodeNext
// resolution does not follow. Hence the explicit types.
const F = babyJub.F;
const p: bigint = babyJub.p;
const l: bigint = babyJub.subOrder;
const B8: Pt = [babyJub.Base8[0], babyJub.Base8[1]];
const O: Pt = [0n, 1n];

const add = (a: Pt, b: Pt): Pt => babyJub.addPoint(a, b);
const mul = (a: Pt, k: bigint): Pt => babyJub.mulPointEScalar(a, k);
const neg = (a: Pt): Pt => [F.neg(a[0]), a[1]];
const eqPt = (a: Pt, b: Pt): boolean => a[0] === b[0] && a[1] === b[1];
/** A uniformly random integer in [0, n), from 64 random bytes. */
const randBelow = (n: bigint): bigint => BigInt(`0x${randomBytes(64).toString('hex')}`) % n;

/** The curve point with this y and an x chosen by js-crypto's sqrt, if x² = (1 - y²)/(a - d·y²) has a root. */
function pointFromY(y: bigint): Pt | null {
  const y2 = F.square(y);
  const x = F.sqrt(F.div(F.sub(F.one, y2), F.sub(babyJub.A, F.mul(babyJub.D, y2))));
  return x === null ? null : [x, y];
}

/** js-crypto's answer: `new PublicKey(A).verifyPoseidon(msg, new Signature(R8, S))`, or 'throws'. */
function reference(c: Case): Answer {
  try {
    return new PublicKey([c.A[0], c.A[1]]).verifyPoseidon(c.msg, new Signature([c.R8[0], c.R8[1]], c.S));
  } catch {
    return 'throws';
  }
}

function ours(c: Case): boolean {
  return verifyPoseidonSignature(c.A, c.msg, { R8: c.R8, S: c.S });
}

/** js-crypto answers `expected`; ours answers true exactly when that is true (false when js-crypto throws). */
function check(c: Case, expected: Answer, label = ''): void {
  expect(reference(c), `js-crypto ${label}`).toBe(expected);
  expect(ours(c), `ours ${label}`).toBe(expected === true);
}

/** A signature made by hand, as signPoseidon does: A = [k]B8, R8 = [r]B8, S = r + 8·k·hm mod l, hm over `key`. */
function signWith(k: bigint, key: Pt, msg: bigint, r = randBelow(l - 1n) + 1n): Case {
  const R8 = mul(B8, r);
  const hm: bigint = poseidon.hash([R8[0], R8[1], key[0], key[1], msg]);
  return { A: key, msg, R8, S: (r + 8n * k * hm) % l };
}

function jsSigned(sk: PrivateKey, msg: bigint): Case {
  const sig = sk.signPoseidon(msg);
  return { A: sk.public().p, msg, R8: sig.R8, S: sig.S };
}

/** Small-order points: torsion[i] = [i]T8 for a point T8 of order 8 (torsion[0] = O, torsion[4] = (0, p - 1)). */
let torsion: Pt[];
/** Curve points outside the prime-order subgroup, found from y = 1000, 1001, ... */
let dirty: Pt[];
/** A valid js-crypto signature and its private scalar k (A = [k]B8). */
let valid: Case;
let k: bigint;

beforeAll(() => {
  const T2: Pt = [0n, p - 1n];
  // a·x² = 1: the two points of order 4.
  const x4 = F.sqrt(F.inv(babyJub.A));
  if (x4 === null) throw new Error('a is not a square');
  const T4: Pt = [x4, 0n];
  expect(eqPt(add(T4, T4), T2)).toBe(true);
  // [l]Q lies in the 8-torsion for every Q; it has order 8 when [4]([l]Q) is not O.
  let T8: Pt | null = null;
  dirty = [];
  for (let y = 1000n; dirty.length < 6; y++) {
    const q = pointFromY(y);
    if (q === null) continue;
    const t = mul(q, l);
    if (eqPt(t, O)) continue;
    dirty.push(q);
    if (T8 === null && !eqPt(mul(t, 4n), O)) T8 = t;
  }
  if (T8 === null) throw new Error('no point of order 8 found');
  torsion = [O];
  for (let i = 1; i < 8; i++) torsion.push(add(at(torsion, i - 1), T8));
  expect(eqPt(at(torsion, 4), T2)).toBe(true);
  expect(eqPt(add(at(torsion, 7), T8), O)).toBe(true);

  const sk = new PrivateKey(Hex.decodeString('1f2e3d4c5b6a79880f1e2d3c4b5a69780e1d2c3b4a59687f0d1c2b3a49586f7e'));
  k = sk.bigInt();
  valid = jsSigned(sk, 123456789n);
  expect(eqPt(valid.A, mul(B8, k))).toBe(true);
}, 60_000);

describe('the curve facts the proof in babyjub.ts rests on (js-crypto arithmetic)', () => {
  it('a is a square, d and d/a are not (complete addition law, no rational points at infinity)', () => {
    const euler = (x: bigint) => F.pow(x, (p - 1n) / 2n);
    expect(euler(babyJub.A)).toBe(1n);
    expect(euler(babyJub.D)).toBe(p - 1n);
    expect(euler(F.div(babyJub.D, babyJub.A))).toBe(p - 1n);
    expect(babyJub.A).toBe(168700n);
    expect(babyJub.D).toBe(168696n);
  });

  it('#E = 8·l: [l]B8 = O, [8·l]Q = O for points outside the subgroup, and [8]Q has order l', () => {
    expect(babyJub.order).toBe(8n * l);
    expect(eqPt(B8, O)).toBe(false);
    expect(eqPt(mul(B8, l), O)).toBe(true);
    for (const q of dirty.slice(0, 3)) {
      expect(eqPt(mul(q, l), O)).toBe(false);
      expect(eqPt(mul(q, 8n * l), O)).toBe(true);
      const q8 = mul(q, 8n);
      expect(eqPt(mul(q8, l), O)).toBe(true);
      // hence [8·h]Q = [h mod l]([8]Q), for h above l as poseidon's hm usually is
      const h = l + 12345n;
      expect(eqPt(mul(q, 8n * h), mul(q8, h % l))).toBe(true);
    }
  });
});

describe('valid signatures', () => {
  it('made by js-crypto signPoseidon for random keys and messages: both true, and false for another message', () => {
    const msgs = [0n, 1n, p - 1n];
    for (let i = 0; i < 24; i++) {
      const skHex = randomBytes(32).toString('hex');
      const sk = new PrivateKey(Hex.decodeString(skHex));
      const msg = msgs[i] ?? randBelow(p);
      const c = jsSigned(sk, msg);
      check(c, true, `key ${skHex} msg ${msg}`);
      check({ ...c, msg: (msg + 1n) % p }, false, `key ${skHex} msg ${msg} + 1`);
    }
  });

  it('a remembered key (twice: its window table built), beside keys evicted from the 32 kept: both agree, valid and tampered', () => {
    const sk = new PrivateKey(randomBytes(32));
    const cases = Array.from({ length: 8 }, () => jsSigned(sk, randBelow(p)));
    // 34 keys remembered twice each: the first ones are evicted and answer from a fresh [8]A again, the last tabled.
    const crowd = Array.from({ length: 34 }, (_, i) => jsSigned(new PrivateKey(randomBytes(32)), BigInt(i)));
    for (const c of crowd) for (let n = 0; n < 2; n++) rememberIssuerKey(c.A[0], c.A[1]);
    for (const [i, c] of crowd.entries()) {
      check(c, true, `crowd key ${i}`);
      check({ ...c, S: (c.S + 1n) % l }, false, `crowd key ${i}, S + 1`);
    }
    const key = at(cases, 0).A;
    rememberIssuerKey(key[0], key[1]);
    rememberIssuerKey(key[0], key[1]);
    for (const [i, c] of cases.entries()) {
      check(c, true, `signature ${i}`);
      check({ ...c, msg: (c.msg + 1n) % p }, false, `signature ${i}, msg + 1`);
      check({ ...c, S: (c.S + 1n) % l }, false, `signature ${i}, S + 1`);
      check({ ...c, A: add(c.A, at(torsion, 2)) }, false, `signature ${i}, key with a small-order component`);
    }
    // The same tabled key with another key's signature, and that key twice: each answer as js-crypto's.
    const other = jsSigned(new PrivateKey(randomBytes(32)), 5n);
    check({ ...other, A: at(cases, 0).A }, false, 'another signer');
    check(other, true, 'the other key, first sight');
    check(other, true, 'the other key, tabled');
  });

  it("iden3/js-crypto's own test vector (tests/babyjub.test.ts upstream; no signPoseidon vector ships in node_modules)", () => {
    const sk = new PrivateKey(Hex.decodeString('0001020304050607080900010203040506070809000102030405060708090001'));
    const msg = ffUtils.leBuff2int(Hex.decodeString('000102030405060708090000'));
    const A: Pt = [
      13277427435165878497778222415993513565335242147425444199013288855685581939618n,
      13622229784656158136036771217484571176836296686641868549125388198837476602820n,
    ];
    const R8: Pt = [
      11384336176656855268977457483345535180380036354188103142384839473266348197733n,
      15383486972088797283337779941324724402501462225528836549661220478783371668959n,
    ];
    const S = 1672775540645840396591609181675628451599263765380031905495115170613215233181n;
    expect(sk.public().p).toEqual(A);
    const sig = sk.signPoseidon(msg);
    expect(sig.R8).toEqual(R8);
    expect(sig.S).toBe(S);
    expect(Signature.newFromCompressed(sig.compress()).S).toBe(S);
    check({ A, msg, R8, S }, true);
    check({ A, msg: msg + 1n, R8, S }, false);
  });

  it('made by hand (as signPoseidon does) over keys with a small-order component: both true', () => {
    // [8·hm](A + T) = [8·hm]A, so a signer who hashes the dirty key's coordinates makes a signature js-crypto accepts.
    for (const i of [1, 2, 4, 7]) {
      const dirtyKey = add(valid.A, at(torsion, i));
      const c = signWith(k, dirtyKey, 42n);
      check(c, true, `torsion ${i}`);
      check({ ...c, A: valid.A }, false, `torsion ${i}, clean key`);
    }
  });
});

describe('tampering', () => {
  it('message changed, out of the field', () => {
    check(valid, true);
    check({ ...valid, msg: valid.msg + 1n }, false);
    check({ ...valid, msg: 0n }, false);
    check({ ...valid, msg: valid.msg + p }, 'throws');
    check({ ...valid, msg: p }, 'throws');
    check({ ...valid, msg: -1n }, 'throws');
  });

  it('S changed, S = 0, S >= subOrder', () => {
    check({ ...valid, S: valid.S + 1n }, false);
    check({ ...valid, S: valid.S - 1n }, false);
    check({ ...valid, S: 0n }, false);
    check({ ...valid, S: l - 1n }, false);
    // S + l names the same point [S]B8, but js-crypto refuses S >= l
    check({ ...valid, S: valid.S + l }, false);
    check({ ...valid, S: l }, false);
    check({ ...valid, S: 1n << 256n }, false);
  });

  it('R8 off the curve, another curve point, the identity, negated, with a small-order component', () => {
    const [x, y] = valid.R8;
    check({ ...valid, R8: [x, (y + 1n) % p] }, false);
    check({ ...valid, R8: [0n, 0n] }, false);
    check({ ...valid, R8: mul(B8, 987654321n) }, false);
    check({ ...valid, R8: at(dirty, 0) }, false);
    check({ ...valid, R8: O }, false);
    check({ ...valid, R8: neg(valid.R8) }, false);
    check({ ...valid, R8: valid.A }, false);
    for (let i = 1; i < 8; i++) check({ ...valid, R8: add(valid.R8, at(torsion, i)) }, false, `torsion ${i}`);
    // re-signed over R8 + T (hm over the dirty R8): still false, [S]B8 - [8·hm]A is the clean R8
    const r = 777n;
    const c = signWith(k, valid.A, 5n, r);
    check(c, true);
    const dirtyR8 = add(c.R8, at(torsion, 4));
    const hm: bigint = poseidon.hash([dirtyR8[0], dirtyR8[1], c.A[0], c.A[1], c.msg]);
    check({ ...c, R8: dirtyR8, S: (r + 8n * k * hm) % l }, false);
  });

  it('public key off the curve, the identity, another key, negated, with a small-order component', () => {
    const [x, y] = valid.A;
    check({ ...valid, A: [x, (y + 1n) % p] }, false);
    check({ ...valid, A: [0n, 0n] }, false);
    check({ ...valid, A: O }, false);
    check({ ...valid, A: neg(valid.A) }, false);
    check({ ...valid, A: mul(B8, k + 1n) }, false);
    check({ ...valid, A: at(dirty, 1) }, false);
    for (let i = 1; i < 8; i++) check({ ...valid, A: add(valid.A, at(torsion, i)) }, false, `torsion ${i}`);
  });

  it('small-order keys (the identity too) accept R8 = [S]B8 for any message: js-crypto true, ours true', () => {
    // [8·hm]A = O for every A of order dividing 8, so the equation is [S]B8 = R8, whatever msg is.
    for (let i = 0; i < 8; i++) {
      check({ A: at(torsion, i), msg: BigInt(i) * 1000003n, R8: B8, S: 1n }, true, `torsion ${i}`);
      check({ A: at(torsion, i), msg: 7n, R8: O, S: 0n }, true, `torsion ${i}, R8 = O, S = 0`);
      check({ A: at(torsion, i), msg: 7n, R8: B8, S: 2n }, false, `torsion ${i}, S = 2`);
    }
    // a full-order key does not: [8·hm]A is not O
    check({ A: valid.A, msg: 7n, R8: O, S: 0n }, false);
    check({ A: at(dirty, 2), msg: 7n, R8: B8, S: 1n }, false);
  });

  it('coordinates >= p or negative: js-crypto false when off the curve mod p, else throws; ours false', () => {
    const [rx, ry] = valid.R8;
    const [ax, ay] = valid.A;
    check({ ...valid, R8: [rx + p, ry] }, 'throws');
    check({ ...valid, R8: [rx, ry + p] }, 'throws');
    check({ ...valid, R8: [rx - p, ry] }, 'throws');
    check({ ...valid, A: [ax + p, ay] }, 'throws');
    check({ ...valid, A: [ax, ay + 2n * p] }, 'throws');
    check({ ...valid, A: [ax - p, ay] }, 'throws');
    check({ ...valid, A: [0n, -1n] }, 'throws'); // the order-2 point, written -1
    check({ ...valid, A: [ax + p, ay + 1n] }, false);
    check({ ...valid, R8: [rx, ry + p + 1n] }, false);
    check({ ...valid, R8: [1n << 256n, 1n << 256n] }, false);
    // out of the field and S >= l: S is checked first
    check({ ...valid, A: [ax + p, ay], S: l }, false);
  });

  it('malformed shapes (outside the declared types): js-crypto false or throws, ours false', () => {
    const js = (A: unknown, msg: unknown, sig: unknown): Answer => {
      try {
        return new PublicKey(A as Pt).verifyPoseidon(msg as bigint, sig as Signature);
      } catch {
        return 'throws';
      }
    };
    const both = (A: unknown, msg: unknown, sig: unknown, expected: Answer) => {
      expect(js(A, msg, sig)).toBe(expected);
      expect(verifyPoseidonSignature(A as Pt, msg as bigint, sig as Case & { R8: Pt })).toBe(expected === true);
    };
    const sig = { R8: valid.R8, S: valid.S };
    both(valid.A, valid.msg, sig, true); // the control
    both(valid.A, valid.msg, { R8: [...valid.R8, 0n], S: valid.S }, false);
    both([...valid.A, 0n], valid.msg, sig, false);
    both(valid.A, valid.msg, { R8: { 0: valid.R8[0], 1: valid.R8[1], length: 2 }, S: valid.S }, false);
    both(valid.A, valid.msg, 'signature', false);
    both(valid.A, valid.msg, null, 'throws');
    both(valid.A, valid.msg, { R8: [Number(valid.R8[0]), Number(valid.R8[1])], S: valid.S }, 'throws');
  });
});

describe('S < 0', () => {
  /** js-crypto's answer computed in a worker thread, or 'no answer' if none comes within `ms` of the call. */
  async function jsCryptoInWorker(c: Case, ms: number): Promise<Answer | 'no answer'> {
    const cjs = createRequire(import.meta.url).resolve('@iden3/js-crypto');
    const url = pathToFileURL(cjs.replace(/cjs[\\/]index\.cjs$/, 'esm/index.js')).href;
    const worker = new Worker(
      `const { parentPort, workerData: { url, c } } = require('node:worker_threads');
      import(url).then(({ PublicKey, Signature }) => {
        parentPort.postMessage('calling');
        let r;
        try { r = new PublicKey(c.A).verifyPoseidon(c.msg, new Signature(c.R8, c.S)); } catch { r = 'throws'; }
        parentPort.postMessage(r);
      });`,
      { eval: true, workerData: { url, c } },
    );
    try {
      return await new Promise((resolve, reject) => {
        worker.on('error', reject);
        worker.on('message', (m: Answer | 'calling') => {
          if (m === 'calling') setTimeout(() => resolve('no answer'), ms);
          else resolve(m);
        });
      });
    } finally {
      await worker.terminate();
    }
  }

  it('js-crypto never returns on an otherwise valid input (-1n >> 1n is -1n); ours answers false', async () => {
    // S - l names the same point as S: an implementation reducing S mod l would accept it
    const c = { ...valid, S: valid.S - l };
    expect(ours(c)).toBe(false);
    expect(ours({ ...valid, S: -1n })).toBe(false);
    expect(await jsCryptoInWorker(c, 3000)).toBe('no answer'); // a verification takes ~40 ms
    expect(await jsCryptoInWorker(valid, 20_000)).toBe(true); // the control: the worker does answer
    // and where an earlier check fails, js-crypto answers before reaching the loop
    check({ ...c, R8: [valid.R8[0], valid.R8[1] + 1n] }, false);
    check({ ...c, msg: p }, 'throws');
  });
});

describe('random inputs (fast-check)', () => {
  const fe = fc.bigInt({ min: 0n, max: p - 1n });
  const big = fc.bigInt({ min: 0n, max: (1n << 256n) - 1n });
  const nearP = fc.bigInt({ min: p - 3n, max: p + 3n });
  const anyCoord = fc.oneof(fe, big, nearP, fc.constantFrom(0n, 1n, p - 1n));

  it('random coordinates, S and msg (almost all off the curve): equal answers', () => {
    fc.assert(
      fc.property(anyCoord, anyCoord, anyCoord, anyCoord, anyCoord, fc.oneof(big, fe), (ax, ay, rx, ry, msg, S) => {
        const c: Case = { A: [ax, ay], msg, R8: [rx, ry], S };
        expect(ours(c)).toBe(reference(c) === true);
      }),
      { numRuns: 1000 },
    );
  });

  it('mutations of valid signatures (torsion, other points, identity, S and msg changes, out-of-field values)', () => {
    // Valid cases: js-crypto signatures, signatures over dirty keys, small-order keys with R8 = [S]B8.
    const pool: Case[] = [valid];
    for (let i = 0; i < 3; i++) pool.push(jsSigned(new PrivateKey(randomBytes(32)), randBelow(p)));
    pool.push(signWith(k, add(valid.A, at(torsion, 3)), 99n));
    pool.push({ A: at(torsion, 5), msg: 11n, R8: mul(B8, 31337n), S: 31337n });
    pool.push({ A: O, msg: 12n, R8: O, S: 0n });
    for (const c of pool) expect(reference(c)).toBe(true);
    const others: Pt[] = [...dirty, mul(B8, 5n), O, [0n, p - 1n], [1n, 1n]];

    type PointMut =
      | { kind: 'keep' }
      | { kind: 'torsion'; i: number }
      | { kind: 'other'; i: number }
      | { kind: 'neg' }
      | { kind: 'plusP'; coord: 0 | 1 }
      | { kind: 'bump'; coord: 0 | 1; by: bigint }
      | { kind: 'random'; x: bigint; y: bigint };
    const pointMut: fc.Arbitrary<PointMut> = fc.oneof(
      { weight: 6, arbitrary: fc.constant({ kind: 'keep' } as const) },
      fc.record({ kind: fc.constant('torsion' as const), i: fc.integer({ min: 1, max: 7 }) }),
      fc.record({ kind: fc.constant('other' as const), i: fc.nat(others.length - 1) }),
      fc.constant({ kind: 'neg' } as const),
      fc.record({ kind: fc.constant('plusP' as const), coord: fc.constantFrom(0 as const, 1 as const) }),
      fc.record({
        kind: fc.constant('bump' as const),
        coord: fc.constantFrom(0 as const, 1 as const),
        by: fc.bigInt({ min: 1n, max: 5n }),
      }),
      fc.record({ kind: fc.constant('random' as const), x: fe, y: fe }),
    );
    const applyPoint = (pt: Pt, m: PointMut): Pt => {
      switch (m.kind) {
        case 'keep':
          return pt;
        case 'torsion':
          return add(pt, at(torsion, m.i));
        case 'other':
          return at(others, m.i);
        case 'neg':
          return neg(pt);
        case 'plusP':
          return m.coord === 0 ? [pt[0] + p, pt[1]] : [pt[0], pt[1] + p];
        case 'bump':
          return m.coord === 0 ? [(pt[0] + m.by) % p, pt[1]] : [pt[0], (pt[1] + m.by) % p];
        case 'random':
          return [m.x, m.y];
      }
    };
    const sMut = fc.oneof(
      { weight: 6, arbitrary: fc.constant((s: bigint) => s) },
      fc.bigInt({ min: 1n, max: 3n }).map((d) => (s: bigint) => (s + d) % l),
      fc.constantFrom((s: bigint) => s + l, () => 0n, () => l, () => l - 1n),
      fc.bigInt({ min: 0n, max: l - 1n }).map((r) => () => r),
      big.map((r) => () => r),
    );
    const msgMut = fc.oneof(
      { weight: 6, arbitrary: fc.constant((m: bigint) => m) },
      fc.constantFrom((m: bigint) => (m + 1n) % p, (m: bigint) => m + p),
      fe.map((r) => () => r),
      big.map((r) => () => r),
    );

    const seen = { true: 0, false: 0, throws: 0 };
    fc.assert(
      fc.property(fc.nat(pool.length - 1), pointMut, pointMut, sMut, msgMut, (i, mA, mR, fS, fMsg) => {
        const base = at(pool, i);
        const c: Case = { A: applyPoint(base.A, mA), msg: fMsg(base.msg), R8: applyPoint(base.R8, mR), S: fS(base.S) };
        const ref = reference(c);
        seen[String(ref) as keyof typeof seen]++;
        expect(ours(c)).toBe(ref === true);
      }),
      { numRuns: 150 },
    );
    expect(seen.true).toBeGreaterThan(0);
    expect(seen.false).toBeGreaterThan(0);
    expect(seen.throws).toBeGreaterThan(0);
  });

  it('random points on the curve (mostly outside the subgroup), random S < l and msg: equal answers', () => {
    fc.assert(
      fc.property(fe, fe, fc.bigInt({ min: 0n, max: l - 1n }), fe, (ya, yr, S, msg) => {
        const A = pointFromY(ya) ?? O;
        const R8 = pointFromY(yr) ?? B8;
        const c: Case = { A, msg, R8, S };
        expect(ours(c)).toBe(reference(c) === true);
      }),
      { numRuns: 40 },
    );
  });
});
