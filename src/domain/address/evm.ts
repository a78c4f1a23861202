/** EVM addresses: `0x` + 40 hex; mixed case must pass the EIP-55 checksum. */
import { keccak_256 } from '@noble/hashes/sha3';
import { utf8ToBytes } from '@noble/hashes/utils';
import { SHAPE, type AddressFamily } from './family.js';

export const BAD_CHECKSUM = 'address is not a valid EIP-55 checksummed address';

const HEX40 = /^[0-9a-fA-F]{40}$/;

export function hasEvmShape(address: string): boolean {
  return address.startsWith('0x') && HEX40.test(address.slice(2));
}

/** EIP-55: a letter is uppercase when its nibble of keccak-256(lowercase hex) is 8 or more. */
function checksumBody(hex40: string): string {
  const lower = hex40.toLowerCase();
  const hash = keccak_256(utf8ToBytes(lower));
  let out = '';
  for (let i = 0; i < lower.length; i++) {
    const c = lower.charAt(i);
    const byte = hash[i >> 1] ?? 0;
    const nibble = i % 2 === 0 ? byte >> 4 : byte & 0x0f;
    out += c >= 'a' && c <= 'f' && nibble >= 8 ? c.toUpperCase() : c;
  }
  return out;
}

/** Throws a TypeError on anything but 40 hex digits, unlike parseAddress. */
export function toChecksumAddress(hex40: string): `0x${string}` {
  const body = typeof hex40 === 'string' && hex40.startsWith('0x') ? hex40.slice(2) : hex40;
  if (typeof body !== 'string' || !HEX40.test(body)) {
    throw new TypeError('toChecksumAddress expects 40 hex digits, optionally prefixed with 0x');
  }
  return `0x${checksumBody(body)}`;
}

function checkEvm(address: string): string | undefined {
  if (!hasEvmShape(address)) return SHAPE;
  const body = address.slice(2);
  if (body === body.toLowerCase() || body === body.toUpperCase()) return undefined;
  return checksumBody(body) === body ? undefined : BAD_CHECKSUM;
}

export const evm: AddressFamily = {
  namespace: 'eip155',
  description: 'an EVM address (0x followed by 40 hex digits)',
  check: checkEvm,
};
