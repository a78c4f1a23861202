/**
 * The base58 families, Tezos and Polkadot (SS58). Only the shape is checked: the base58check (Tezos) and blake2b
 * (SS58) checksums are not verified, so no base58 decoding happens here.
 */
import { SHAPE, type AddressFamily } from './family.js';

/** Base58 alphabet: 1-9, A-Z without I and O, a-z without l. */
const TEZOS = /^(?:tz[1-4]|KT1)[1-9A-HJ-NP-Za-km-z]{33}$/;
const SS58 = /^[1-9A-HJ-NP-Za-km-z]{46,48}$/;

export const tezos: AddressFamily = {
  namespace: 'tezos',
  description: 'a Tezos address (tz1, tz2, tz3, tz4 or KT1 followed by 33 base58 characters)',
  check: (address) => (TEZOS.test(address) ? undefined : SHAPE),
};

export const polkadot: AddressFamily = {
  namespace: 'polkadot',
  description: 'a Polkadot/Substrate SS58 address (46 to 48 base58 characters)',
  check: (address) => (SS58.test(address) ? undefined : SHAPE),
};
