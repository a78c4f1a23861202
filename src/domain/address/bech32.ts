/**
 * bech32 (BIP-173) decoding for the Cosmos and Cardano families, on @scure/base. The checksum and the 5-bit to 8-bit
 * regrouping are the library's; what is ours is telling *why* a string is not bech32, in the words the messages
 * have always used, and whether it looked enough like bech32 for a checksum failure to be worth reporting as such.
 */
import { bech32 } from '@scure/base';
import type { AddressCheck } from './family.js';

export type Bech32Decoded = { ok: true; hrp: string; words: number[] } | { ok: false; shaped: boolean; reason: string };

/** The data part (after the last `1`) in the bech32 alphabet, lowercase. */
const BECH32_DATA = /^[qpzry9x8gf2tvdw0s3jn54khce6mua7l]+$/;

function unshaped(reason: string): Bech32Decoded {
  return { ok: false, shaped: false, reason };
}

/**
 * Decodes a bech32 string (lowercase or all uppercase; the hrp is returned lowercase), with no length limit: Cardano
 * addresses are longer than BIP-173's 90 characters, and the caller has already capped the length. `shaped` tells
 * whether the string at least looked like bech32 (so that a failure is worth reporting as such).
 */
export function decodeBech32(s: string): Bech32Decoded {
  // Printable ASCII only: checked before any case folding so that no unicode case mapping can sneak in.
  if (!/^[\x21-\x7e]+$/.test(s)) return unshaped('not printable ASCII');
  const lower = s.toLowerCase();
  if (s !== lower && s !== s.toUpperCase()) return unshaped('mixed case');
  const pos = lower.lastIndexOf('1');
  if (pos < 1 || pos + 7 > lower.length) return unshaped('no separator');
  if (!BECH32_DATA.test(lower.slice(pos + 1))) return unshaped('character outside the bech32 alphabet');
  // Everything the library could refuse other than the checksum has been refused above, with its own reason.
  const decoded = bech32.decodeUnsafe(lower, false);
  if (!decoded) return { ok: false, shaped: true, reason: 'bech32 checksum is invalid' };
  return { ok: true, hrp: decoded.prefix, words: decoded.words };
}

/** 5-bit words to bytes, strict (at most 4 padding bits, all zero), or undefined. */
export function wordsToBytes(words: number[]): Uint8Array | undefined {
  return bech32.fromWordsUnsafe(words) || undefined;
}

/** A family check that decodes bech32, then checks the prefix and payload with `checkDecoded`. */
export function bech32Check(checkDecoded: (hrp: string, words: number[]) => string | undefined): AddressCheck {
  return (address) => {
    const d = decodeBech32(address);
    return d.ok ? checkDecoded(d.hrp, d.words) : d.reason;
  };
}
