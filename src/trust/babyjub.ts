/**
 * BabyJubJub EdDSA-Poseidon signature verification: the same boolean as @iden3/js-crypto's
 * `PublicKey.verifyPoseidon(msg, signature)` (1.3.2), ~20x faster (~1.7 ms per call instead of ~37 ms; the first
 * call also builds noble's table of multiples of the base point, ~35 ms).
 *
 * Why: js-crypto does the curve arithmetic in affine coordinates with a modular inversion per point addition
 * (~36 ms per verification). Here the two scalar multiplications run in extended coordinates (@noble/curves: no
 * inversion per addition, a precomputed table for the base point); the message hash is still js-crypto's
 * `poseidon.hash`, called through js-crypto's own `poseidon` object as js-crypto's verifyPoseidon calls it.
 * test/trust/babyjub.test.ts compares both functions on valid signatures, on every kind of tampering (including
 * points with a small-order component and coordinates >= p) and on random inputs.
 *
 * What js-crypto's verifyPoseidon does (dist/node/esm/index.js, `Eddsa.verifyPoseidon`), in order, and what we answer:
 *
 * | input                                                                       | js-crypto                  | here  |
 * |-----------------------------------------------------------------------------|----------------------------|-------|
 * | signature not an object, R8 or the key not an array of length 2             | false                      | false |
 * | R8 or the key not on the curve: a·x² + y² ≠ 1 + d·x²·y² (mod p), computed   | false                      | false |
 * |   on the coordinates as given, so x and x ± p are the same point to it       |                            |       |
 * | S >= l (the subgroup order, `babyJub.subOrder`)                             | false                      | false |
 * | else a coordinate of R8 or of the key, or msg, outside [0, p)               | throws (poseidon.hash:     | false |
 * |                                                                             | "not in the field")        |       |
 * | else S < 0                                                                  | never returns: its         | false |
 * |                                                                             | mulPointEScalar loops on   |       |
 * |                                                                             | `rem >> 1n`, and -1n >> 1n |       |
 * |                                                                             | is -1n, never 0n           |       |
 * | else                                                                        | [S]B8 == R8 + [8·hm]A      | same  |
 *
 * with hm = poseidon.hash([R8x, R8y, Ax, Ay, msg]). So: we return true exactly when js-crypto returns true, false
 * when it returns false or throws (or hangs), and we never throw (a catch-all returns false). Nothing else is
 * checked by js-crypto, and so not here either: the key and R8 need not be in the prime-order subgroup, the key may be
 * the identity or of small order (then [8·hm]A is the identity and any message "verifies" with R8 = [S]B8).
 * Values of other types than the declared ones (numbers, strings) give false here; js-crypto then throws a TypeError
 * or, for a number msg, converts it.
 *
 * Why the arithmetic gives the same answer:
 *
 * 1. Same group law. a = 168700 is a square and d = 168696 a non-square in F_p (the tests check both by Euler's
 *    criterion), so the twisted Edwards addition law is complete (Bernstein, Birkner, Joye, Lange, Peters, "Twisted
 *    Edwards Curves", 2008, Thm 3.3): every pair of affine points adds without a zero denominator, the affine points
 *    form the whole group E(F_p), and js-crypto's addPoint computes that group law. noble's add-2008-hwcd and
 *    dbl-2008-hwcd are the same law in extended coordinates, with Z3 = Z1²Z2²(1 - d·x1x2y1y2)(1 + d·x1x2y1y2) ≠ 0
 *    for the same reason. And d/a is a non-square, so no point at infinity of the projective closure is rational.
 *
 * 2. [8·hm]A = [hm mod l]([8]A) for every A on the curve.
 *    Proof: #E(F_p) = 8·l (js-crypto's `babyJub.order`; EIP-2494), with l prime. By Lagrange, [8·l]A = O for every
 *    A in E(F_p), i.e. [l]([8]A) = O, so the order of [8]A divides l (it is 1 or l). Write hm = q·l + r with
 *    r = hm mod l: [8·hm]A = [hm]([8]A) = [q]([l]([8]A)) + [r]([8]A) = [r]([8]A). ∎
 *    This holds whatever A's small-order (torsion) component is: [8] kills it, as js-crypto's [8·hm] does. It lets us
 *    use noble's multiplyUnsafe, which refuses scalars >= l (8·hm goes up to 8·p). js-crypto's hm·8 is never
 *    negative: poseidon.hash returns a value in [0, p).
 *
 * 3. [S]B8 with 0 <= S < l is noble's BASE.multiplyUnsafe(S) (which answers the identity for S = 0, as js-crypto's
 *    loop does), and the final comparison of affine coordinates is noble's projective equals (X1·Z2 = X2·Z1 and
 *    Y1·Z2 = Y2·Z1), the same predicate. R8 is added as given, so a torsion component in R8 makes both sides differ in
 *    both implementations (the left side and [8·hm]A have order dividing l).
 */
import { poseidon } from '@iden3/js-crypto';
import { edwards, type EdwardsPoint } from '@noble/curves/abstract/edwards.js';
import { Field } from '@noble/curves/abstract/modular.js';

/** The base field: BN254's scalar field. */
const P = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;
/** Curve coefficients: a·x² + y² = 1 + d·x²·y². */
const A = 168700n;
const D = 168696n;
/** Order of the prime subgroup (js-crypto's `babyJub.subOrder`); the curve has 8·l points. */
const SUB_ORDER = 2736030358979909402780800718157159386076813972158567259200215660948447373041n;
/** js-crypto's `babyJub.Base8`: the generator of the prime subgroup that keys and R8 are made from. */
const B8X = 5299619240641551281634865583518297030282874472190772894086521144482721001553n;
const B8Y = 16950150798460657717958625567821834550301663161624707787222815936182638968203n;

const Point = edwards({ p: P, n: SUB_ORDER, h: 8n, a: A, d: D, Gx: B8X, Gy: B8Y }, { Fp: Field(P) });

type Pair = readonly [bigint, bigint];

function isPair(v: unknown): v is Pair {
  return Array.isArray(v) && v.length === 2 && typeof v[0] === 'bigint' && typeof v[1] === 'bigint';
}

function inField(v: bigint): boolean {
  return v >= 0n && v < P;
}

/** js-crypto's `babyJub.inCurve`, for coordinates already in [0, p). */
function onCurve(x: bigint, y: bigint): boolean {
  const x2 = (x * x) % P;
  const y2 = (y * y) % P;
  return (A * x2 + y2) % P === (1n + D * ((x2 * y2) % P)) % P;
}

function point(x: bigint, y: bigint): EdwardsPoint {
  return Point.fromAffine({ x, y });
}

/**
 * Whether `signature` is a valid EdDSA-Poseidon signature of `msg` under `publicKey`, exactly as @iden3/js-crypto's
 * `new PublicKey(publicKey).verifyPoseidon(msg, signature)` answers (false where that throws or never returns; see
 * the table above). Never throws.
 */
export function verifyPoseidonSignature(
  publicKey: readonly [bigint, bigint],
  msg: bigint,
  signature: { R8: readonly [bigint, bigint]; S: bigint },
): boolean {
  try {
    if (typeof signature !== 'object' || signature === null) return false;
    const { R8, S } = signature;
    if (!isPair(R8) || !isPair(publicKey) || typeof S !== 'bigint' || typeof msg !== 'bigint') return false;
    const [rx, ry] = R8;
    const [ax, ay] = publicKey;
    // Out-of-field values: js-crypto answers false (off the curve) or throws (in poseidon.hash).
    if (!inField(rx) || !inField(ry) || !inField(ax) || !inField(ay) || !inField(msg)) return false;
    // S < 0: js-crypto answers false, throws, or never returns; S >= l: false.
    if (S < 0n || S >= SUB_ORDER) return false;
    if (!onCurve(rx, ry) || !onCurve(ax, ay)) return false;
    const hm: bigint = poseidon.hash([rx, ry, ax, ay, msg]);
    const left = Point.BASE.multiplyUnsafe(S);
    const right = point(rx, ry).add(point(ax, ay).multiplyUnsafe(8n).multiplyUnsafe(hm % SUB_ORDER));
    return left.equals(right);
  } catch {
    return false;
  }
}
