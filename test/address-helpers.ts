/**
 * Shared by the test/address*.test.ts files: an independent bech32 encoder (BIP-173), written from the spec for the
 * tests (anchored on BIP-173's own valid strings in address-bech32.test.ts, so that the checksums it computes for the
 * Cosmos and Cardano cases are known good), EIP-55 vectors, and small readers of a ParsedAddress.
 */
import type { ParsedAddress } from '../src/domain/address.js';

export const CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

function polymod(values: number[]): number {
  const gen = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
  let chk = 1;
  for (const value of values) {
    const b = Math.floor(chk / 2 ** 25);
    chk = ((chk % 2 ** 25) * 32) ^ value;
    gen.forEach((g, i) => {
      if (Math.floor(b / 2 ** i) % 2 === 1) chk ^= g;
    });
  }
  return chk;
}

/** `constant` is BIP-173's 1 unless told (BIP-350's bech32m uses 0x2bc830a3). */
export function encodeWords(hrp: string, words: number[], constant = 1): string {
  const expanded = [...[...hrp].map((c) => c.charCodeAt(0) >> 5), 0, ...[...hrp].map((c) => c.charCodeAt(0) & 31)];
  const mod = polymod([...expanded, ...words, 0, 0, 0, 0, 0, 0]) ^ constant;
  const checksum = [0, 1, 2, 3, 4, 5].map((i) => (mod >> (5 * (5 - i))) & 31);
  return `${hrp}1${[...words, ...checksum].map((w) => CHARSET[w]).join('')}`;
}

export function toWords(bytes: number[]): number[] {
  const bits = bytes.map((b) => b.toString(2).padStart(8, '0')).join('');
  const padded = bits.padEnd(Math.ceil(bits.length / 5) * 5, '0');
  const words: number[] = [];
  for (let i = 0; i < padded.length; i += 5) words.push(parseInt(padded.slice(i, i + 5), 2));
  return words;
}

export const encode = (hrp: string, bytes: number[]) => encodeWords(hrp, toWords(bytes));
export const bytesOf = (n: number, seed: number) => Array.from({ length: n }, (_, i) => (i * 37 + seed * 11 + 5) & 0xff);

/** Changes one data character (not the hrp) so that the checksum no longer matches. */
export function corrupt(s: string): string {
  const i = s.length - 10;
  const c = s[i] === 'q' ? 'p' : 'q';
  return s.slice(0, i) + c + s.slice(i + 1);
}

export const okAs = (r: ParsedAddress) => (r.ok ? r.namespace : `error: ${r.message}`);
export const messageOf = (r: ParsedAddress) => (r.ok ? '' : r.message);

/** EIP-55's own mixed-case vectors. */
export const EIP55_VECTORS = [
  '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
  '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
  '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
] as const;
/** Also from EIP-55: addresses whose checksummed form is all caps / all lowercase. */
export const EIP55_ALL_CAPS = ['0x52908400098527886E0F7030069857D2E4169EE7', '0x8617E340B3D01FA5F11F306F4090FD50E238070D'];
export const EIP55_ALL_LOWER = ['0xde709f2102306220921060314715629080e2fb77', '0x27b1fdb04752bbc536007a920d24acb045561c26'];

/** The address with the case of its nth hex letter flipped (which breaks a mixed-case EIP-55 checksum). */
export function flipOneLetter(address: string, nth: number): string {
  let seen = -1;
  for (let i = 2; i < address.length; i++) {
    const c = address.charAt(i);
    if (/[a-fA-F]/.test(c) && ++seen === nth) {
      const flipped = c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase();
      return address.slice(0, i) + flipped + address.slice(i + 1);
    }
  }
  throw new Error('not enough letters');
}
