/** A Starknet address is a felt, below 2^251. */
import { SHAPE, type AddressFamily } from './family.js';

const HEX1_64 = /^[0-9a-fA-F]{1,64}$/;
const STARKNET_BOUND = 1n << 251n;

export function hasShortHexShape(address: string): boolean {
  return address.startsWith('0x') && HEX1_64.test(address.slice(2));
}

export const aptos: AddressFamily = {
  namespace: 'aptos',
  description: 'an Aptos address (0x followed by 1 to 64 hex digits)',
  check: (address) => (hasShortHexShape(address) ? undefined : SHAPE),
};

export const starknet: AddressFamily = {
  namespace: 'starknet',
  description: 'a Starknet address (0x followed by 1 to 64 hex digits, below 2^251)',
  check: (address) => {
    if (!hasShortHexShape(address)) return SHAPE;
    return BigInt(address) < STARKNET_BOUND ? undefined : 'value is not below 2^251';
  },
};
