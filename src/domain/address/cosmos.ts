import { bech32Check, wordsToBytes } from './bech32.js';
import { isCardanoPrefix } from './cardano.js';
import type { AddressFamily } from './family.js';

export function checkCosmosPayload(hrp: string, words: number[]): string | undefined {
  if (!/^[a-z][a-z0-9]*$/.test(hrp)) return 'human-readable prefix must be lowercase letters and digits';
  if (isCardanoPrefix(hrp)) return 'prefix is a Cardano prefix';
  const bytes = wordsToBytes(words);
  if (!bytes || (bytes.length !== 20 && bytes.length !== 32)) return 'payload must be 20 or 32 bytes';
  return undefined;
}

export const cosmos: AddressFamily = {
  namespace: 'cosmos',
  description: 'a Cosmos bech32 address such as cosmos1... (valid checksum, 20- or 32-byte payload)',
  check: bech32Check(checkCosmosPayload),
};
