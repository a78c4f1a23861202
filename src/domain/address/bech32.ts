/** Ours says *why* a string is not bech32. */
import { bech32 } from '@scure/base';
import type { AddressCheck } from './family.js';

export type Bech32Decoded = { ok: true; hrp: string; words: number[] } | { ok: false; shaped: boolean; reason: string };

const BECH32_DATA = /^[qpzry9x8gf2tvdw0s3jn54khce6mua7l]+$/;

function unshaped(reason: string): Bech32Decoded {
  return { ok: false, shaped: false, reason };
}

/** Cardano addresses pass BIP-173's 90 characters. */
export function decodeBech32(s: string): Bech32Decoded {
  // Before case folding, so no unicode case mapping sneaks in.
  if (!/^[\x21-\x7e]+$/.test(s)) return unshaped('not printable ASCII');
  const lower = s.toLowerCase();
  if (s !== lower && s !== s.toUpperCase()) return unshaped('mixed case');
  const pos = lower.lastIndexOf('1');
  if (pos < 1 || pos + 7 > lower.length) return unshaped('no separator');
  if (!BECH32_DATA.test(lower.slice(pos + 1))) return unshaped('character outside the bech32 alphabet');
  const decoded = bech32.decodeUnsafe(lower, false);
  if (!decoded) return { ok: false, shaped: true, reason: 'bech32 checksum is invalid' };
  return { ok: true, hrp: decoded.prefix, words: decoded.words };
}

/** Strict: at most 4 padding bits, all zero. */
export function wordsToBytes(words: number[]): Uint8Array | undefined {
  return bech32.fromWordsUnsafe(words) || undefined;
}

export function bech32Check(checkDecoded: (hrp: string, words: number[]) => string | undefined): AddressCheck {
  return (address) => {
    const d = decodeBech32(address);
    return d.ok ? checkDecoded(d.hrp, d.words) : d.reason;
  };
}
