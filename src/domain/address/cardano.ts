/** CIP-19. */
import { bech32Check, wordsToBytes } from './bech32.js';
import type { AddressFamily } from './family.js';

type CardanoPrefix = { stake: boolean; network: number };

const CARDANO_PREFIXES: ReadonlyMap<string, CardanoPrefix> = new Map([
  ['addr', { stake: false, network: 1 }],
  ['addr_test', { stake: false, network: 0 }],
  ['stake', { stake: true, network: 1 }],
  ['stake_test', { stake: true, network: 0 }],
]);

export function isCardanoPrefix(hrp: string): boolean {
  return CARDANO_PREFIXES.has(hrp);
}

function checkCardanoPayload(hrp: string, words: number[]): string | undefined {
  const kind = CARDANO_PREFIXES.get(hrp);
  if (!kind) return 'prefix is not addr, addr_test, stake or stake_test';
  const bytes = wordsToBytes(words);
  const header = bytes?.[0];
  if (!bytes || header === undefined) return 'payload is not whole bytes';
  const type = header >>> 4;
  const network = header & 0x0f;
  if (network !== kind.network) {
    return `network tag ${network} does not fit the ${hrp} prefix (expected ${kind.network})`;
  }
  if (kind.stake) {
    if (type !== 14 && type !== 15) return `header type ${type} is not a stake (reward) address`;
    return bytes.length === 29 ? undefined : 'stake address payload must be 29 bytes';
  }
  if (type <= 3) return bytes.length === 57 ? undefined : 'base address payload must be 57 bytes';
  if (type <= 5) return bytes.length >= 32 ? undefined : 'pointer address payload is too short';
  if (type <= 7) return bytes.length === 29 ? undefined : 'enterprise address payload must be 29 bytes';
  return `header type ${type} is not a Shelley payment address`;
}

export const cardano: AddressFamily = {
  namespace: 'cardano',
  description: 'a Cardano bech32 address (addr1, addr_test1, stake1 or stake_test1, valid checksum)',
  check: bech32Check(checkCardanoPayload),
};
