/** Answers as @iden3/js-crypto's `PublicKey.verifyPoseidon`, false where that throws or never returns (README.md). */
import { poseidon } from '@iden3/js-crypto';
import { edwards, type EdwardsPoint } from '@noble/curves/abstract/edwards.js';
import { Field } from '@noble/curves/abstract/modular.js';
import { LRUCache } from 'lru-cache';

const P = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;
const A = 168700n;
const D = 168696n;
const SUB_ORDER = 2736030358979909402780800718157159386076813972158567259200215660948447373041n;
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

/** For coordinates already in [0, p). */
function onCurve(x: bigint, y: bigint): boolean {
  const x2 = (x * x) % P;
  const y2 = (y * y) % P;
  return (A * x2 + y2) % P === (1n + D * ((x2 * y2) % P)) % P;
}

function point(x: bigint, y: bigint): EdwardsPoint {
  return Point.fromAffine({ x, y });
}

/**
 * [8]A per issuer key: one key signs every credential of its issuer. Only keys of fully verified proofs are kept
 * (rememberIssuerKey), so a flood of throwaway keys evicts nothing and builds no table. A key remembered twice gets a
 * window table (noble keeps it per point object, ~143 KB at width 4: 32 keys ~4.5 MB per thread), so that [hm][8]A
 * costs ~64 additions instead of ~380.
 */
const KEYS = 32;
const keys = new LRUCache<string, { eightA: EdwardsPoint; tabled: boolean }>({ max: KEYS });
const keyId = (ax: bigint, ay: bigint) => `${ax.toString(16)},${ay.toString(16)}`;

function eightTimes(ax: bigint, ay: bigint): EdwardsPoint {
  return keys.get(keyId(ax, ay))?.eightA ?? point(ax, ay).multiplyUnsafe(8n);
}

/** Called once a proof signed by this key verified whole (signature, key in the claims tree, state, content). */
export function rememberIssuerKey(ax: bigint, ay: bigint): void {
  const id = keyId(ax, ay);
  const known = keys.get(id);
  if (known === undefined) {
    keys.set(id, { eightA: point(ax, ay).multiplyUnsafe(8n), tabled: false });
  } else if (!known.tabled) {
    known.tabled = true;
    known.eightA.precompute(4);
  }
}

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
    const right = point(rx, ry).add(eightTimes(ax, ay).multiplyUnsafe(hm % SUB_ORDER));
    return left.equals(right);
  } catch {
    return false;
  }
}
