/** Hex addresses compare by value, bech32 ones case-insensitively. Reasons never quote the subject DID or its address. */
import { DID, Id, type Id as IdT } from './iden3.js';
import { keccak_256 } from '@noble/hashes/sha3';
import type { TrustVerdict } from '../engine/types.js';
import { notValid, OK } from './structure.js';

export type HolderAddress =
  | { kind: 'none' }
  | { kind: 'address'; namespace: string; address: string }
  | { kind: 'malformed'; why: string };

const HEX40 = /^0x[0-9a-fA-F]{40}$/;
const HEX = /^0x[0-9a-fA-F]{1,64}$/;

function hex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += b.toString(16).padStart(2, '0');
  return out;
}

const P = 2n ** 256n - 2n ** 32n - 977n;

function modPow(base: bigint, exp: bigint, m: bigint): bigint {
  let r = 1n;
  let b = base % m;
  let e = exp;
  while (e > 0n) {
    if (e & 1n) r = (r * b) % m;
    b = (b * b) % m;
    e >>= 1n;
  }
  return r;
}

export function ethAddressOfPublicKey(keyHex: string): string | undefined {
  const h = keyHex.startsWith('0x') ? keyHex.slice(2) : keyHex;
  let x: bigint;
  let y: bigint;
  if (/^0[23][0-9a-fA-F]{64}$/.test(h)) {
    x = BigInt('0x' + h.slice(2));
    if (x >= P) return undefined;
    const y2 = (modPow(x, 3n, P) + 7n) % P;
    y = modPow(y2, (P + 1n) / 4n, P);
    if ((y * y) % P !== y2) return undefined; // not on the curve
    if ((y & 1n) !== BigInt(h[1] === '3' ? 1 : 0)) y = P - y;
  } else if (/^04[0-9a-fA-F]{128}$/.test(h)) {
    x = BigInt('0x' + h.slice(2, 66));
    y = BigInt('0x' + h.slice(66));
    if (x >= P || y >= P || (y * y - (x * x * x + 7n)) % P !== 0n) return undefined;
  } else {
    return undefined;
  }
  const bytes = new Uint8Array(64);
  const xs = x.toString(16).padStart(64, '0') + y.toString(16).padStart(64, '0');
  for (let i = 0; i < 64; i++) bytes[i] = parseInt(xs.slice(i * 2, i * 2 + 2), 16);
  return '0x' + hex(keccak_256(bytes).slice(12));
}

/** Never throws. */
export function holderAddressOf(subjectId: unknown): HolderAddress {
  if (subjectId === undefined || subjectId === null) return { kind: 'none' };
  if (typeof subjectId !== 'string') return { kind: 'malformed', why: 'credentialSubject.id is not a string' };
  if (!subjectId.startsWith('did:')) return { kind: 'none' };
  const parts = subjectId.split(':');
  const method = parts[1];
  if (method === 'pkh') {
    // did:pkh:<namespace>:<reference>:<address>
    const namespace = parts[2];
    const address = parts[4];
    if (parts.length !== 5 || !namespace || !parts[3] || !address) {
      return { kind: 'malformed', why: 'credentialSubject.id is a did:pkh DID without namespace, reference and address' };
    }
    return { kind: 'address', namespace, address };
  }
  if (method === 'ethr') {
    const last = parts.at(-1);
    if (parts.length < 3 || parts.length > 4 || last === undefined) return { kind: 'malformed', why: 'credentialSubject.id is not a valid did:ethr DID' };
    if (HEX40.test(last)) return { kind: 'address', namespace: 'eip155', address: last };
    const fromKey = ethAddressOfPublicKey(last);
    if (fromKey !== undefined) return { kind: 'address', namespace: 'eip155', address: fromKey };
    return { kind: 'malformed', why: 'credentialSubject.id is a did:ethr DID with neither an address nor a secp256k1 public key' };
  }
  let id: IdT;
  try {
    const did = DID.parse(subjectId);
    id = DID.idFromDID(did);
  } catch {
    return { kind: 'none' }; // not an iden3 DID: encodes no address we know of
  }
  try {
    const addr = Id.ethAddressFromId(id);
    return { kind: 'address', namespace: 'eip155', address: '0x' + hex(addr) };
  } catch {
    return { kind: 'none' }; // an iden3 identity not made from an Ethereum address (e.g. BabyJubJub key)
  }
}

function sameAddress(namespace: string, a: string, b: string): boolean {
  if (HEX.test(a) && HEX.test(b)) return BigInt(a) === BigInt(b);
  if (namespace === 'eip155') return false; // an EVM subject against a non-hex request address
  if (namespace === 'cosmos' || namespace === 'cardano') return a.toLowerCase() === b.toLowerCase();
  return a === b;
}

/** Never throws. */
export function didAddressMatches(did: unknown, address: string): boolean | undefined {
  const h = holderAddressOf(did);
  return h.kind === 'address' ? sameAddress(h.namespace, h.address, address) : undefined;
}

export function checkHolder(credentialSubject: Record<string, unknown>, requestAddress: string, required: boolean): TrustVerdict {
  const h = holderAddressOf(credentialSubject.id);
  switch (h.kind) {
    case 'malformed':
      return notValid(`${h.why}, so it cannot be bound to the request's address`);
    case 'none':
      return required
        ? notValid('credentialSubject.id does not encode a blockchain address, and holder binding is required')
        : OK;
    default:
      return sameAddress(h.namespace, h.address, requestAddress)
        ? OK
        : notValid("belongs to another holder: credentialSubject.id encodes an address other than the request's address");
  }
}
