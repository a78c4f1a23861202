/** Tezos and Polkadot (SS58): shape only, their checksums are not verified. */
import { SHAPE, type AddressFamily } from './family.js';

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
