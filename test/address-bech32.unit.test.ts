import { describe, it, expect } from 'vitest';
import { parseAddress } from '../src/domain/address.js';
import { bytesOf, CHARSET, corrupt, EIP55_VECTORS, encode, encodeWords, messageOf, okAs, toWords } from './address-helpers.js';

describe('the test bech32 encoder', () => {
  it('reproduces BIP-173 valid strings', () => {
    expect(encodeWords('a', [])).toBe('a12uel5l');
    expect(encodeWords('abcdef', [...CHARSET].map((c) => CHARSET.indexOf(c)))).toBe(
      'abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw',
    );
    expect(encodeWords('split', [...'checkupstagehandshakeupstreamerranterredcaperred'].map((c) => CHARSET.indexOf(c)))).toBe(
      'split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w',
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('Cosmos (bech32)', () => {
  const cosmos20 = encode('cosmos', bytesOf(20, 1));
  const osmo20 = encode('osmo', bytesOf(20, 2));
  const juno32 = encode('juno', bytesOf(32, 3));
  it('accepts bech32 addresses with 20- or 32-byte payloads and valid checksums', () => {
    expect(cosmos20).toMatch(/^cosmos1[a-z0-9]{38}$/);
    for (const a of [cosmos20, osmo20, juno32, encode('cosmosvaloper', bytesOf(20, 4))]) {
      expect(parseAddress(a)).toEqual({ ok: true, address: a, namespace: 'cosmos' });
    }
    expect(okAs(parseAddress(cosmos20.toUpperCase()))).toBe('cosmos');
    expect(okAs(parseAddress({ address: osmo20, chain: 'cosmos:osmosis-1' }))).toBe('cosmos');
  });
  it('rejects bad checksums, mixed case, wrong payload sizes and foreign characters', () => {
    const mixed = `C${cosmos20.slice(1)}`;
    for (const a of [
      corrupt(cosmos20),
      corrupt(juno32),
      mixed,
      encode('cosmos', bytesOf(19, 1)),
      encode('cosmos', bytesOf(33, 1)),
      encode('cosmos', bytesOf(21, 1)),
      `${cosmos20.slice(0, 20)}b${cosmos20.slice(21)}`, // b is not in the bech32 alphabet
      cosmos20.slice(0, -1),
    ]) {
      expect(parseAddress(a).ok, a).toBe(false);
      expect(parseAddress({ address: a, namespace: 'cosmos' }).ok, a).toBe(false);
    }
    expect(messageOf(parseAddress(corrupt(cosmos20)))).toMatch(/checksum/);
    expect(messageOf(parseAddress({ address: corrupt(cosmos20), namespace: 'cosmos' }))).toMatch(/checksum/);
    expect(messageOf(parseAddress({ address: EIP55_VECTORS[0], namespace: 'cosmos' }))).toMatch(/cosmos/i);
  });
  it('does not take a Bitcoin segwit address for a Cosmos one', () => {
    // BIP-173 P2WPKH example.
    expect(parseAddress('bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4').ok).toBe(false);
  });
});

describe('Cardano (CIP-19 bech32)', () => {
  // CIP-19 test vectors (payment key hash 9493315c..., stake key hash 337b62cf...).
  const cip19 = {
    base: 'addr1qx2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzer3n0d3vllmyqwsx5wktcd8cc3sq835lu7drv2xwl2wywfgse35a3x',
    pointer: 'addr1gx2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzer5pnz75xxcrzqf96k',
    enterprise: 'addr1vx2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzers66hrl8',
    stake: 'stake1uyehkck0lajq8gr28t9uxnuvgcqrc6070x3k9r8048z8y5gh6ffgw',
    testBase: 'addr_test1qz2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzer3n0d3vllmyqwsx5wktcd8cc3sq835lu7drv2xwl2wywfgs68faae',
    testEnterprise: 'addr_test1vz2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzerspjrlsz',
  };
  it('accepts the CIP-19 vectors, including those longer than 90 characters', () => {
    expect(cip19.base.length).toBeGreaterThan(90);
    for (const a of Object.values(cip19)) {
      expect(parseAddress(a), a).toEqual({ ok: true, address: a, namespace: 'cardano' });
    }
    expect(okAs(parseAddress({ address: cip19.base, namespace: 'cardano' }))).toBe('cardano');
    expect(okAs(parseAddress({ address: cip19.base, chain: 'cip34:1-764824073' }))).toBe('cardano');
  });
  it('accepts addresses built by the test encoder', () => {
    const built = [
      encode('addr', [0x01, ...bytesOf(56, 5)]),
      encode('addr', [0x61, ...bytesOf(28, 6)]),
      encode('addr_test', [0x60, ...bytesOf(28, 7)]),
      encode('stake', [0xe1, ...bytesOf(28, 8)]),
      encode('stake_test', [0xf0, ...bytesOf(28, 9)]),
    ];
    for (const a of built) expect(okAs(parseAddress(a)), a).toBe('cardano');
  });
  it('rejects bad checksums and headers that do not fit the prefix', () => {
    for (const a of [
      corrupt(cip19.base),
      corrupt(cip19.stake),
      encode('addr', [0x00, ...bytesOf(56, 5)]), // testnet tag under addr
      encode('addr_test', [0x01, ...bytesOf(56, 5)]), // mainnet tag under addr_test
      encode('addr', [0x01, ...bytesOf(28, 5)]), // base address too short
      encode('stake', [0x61, ...bytesOf(28, 5)]), // enterprise header under stake
      encode('addr', [0xe1, ...bytesOf(28, 5)]), // reward header under addr
      encode('addr', [0x81, ...bytesOf(28, 5)]), // Byron type
    ]) {
      expect(parseAddress(a).ok, a).toBe(false);
      expect(parseAddress({ address: a, namespace: 'cardano' }).ok, a).toBe(false);
    }
    expect(messageOf(parseAddress(corrupt(cip19.base)))).toMatch(/checksum/);
    expect(messageOf(parseAddress({ address: encode('cosmos', bytesOf(20, 1)), namespace: 'cardano' }))).toMatch(
      /cardano/i,
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Where a library decoder (@scure/base) could answer differently from the hand-written one it replaced.

describe('bech32 edge cases', () => {
  const cosmos20 = encode('cosmos', bytesOf(20, 1));
  const cosmosFailure = (reason: string) =>
    'address is not valid for namespace cosmos: expected a Cosmos bech32 address such as cosmos1... (valid checksum, ' +
    `20- or 32-byte payload); ${reason}`;
  const asCosmos = (address: string) => messageOf(parseAddress({ address, namespace: 'cosmos' }));

  it('has no 90-character limit, only the 256 characters of any address', () => {
    const long = encode('a'.repeat(60), bytesOf(32, 1));
    expect(long.length).toBeGreaterThan(90);
    expect(okAs(parseAddress(long))).toBe('cosmos');
    expect(okAs(parseAddress(long.toUpperCase()))).toBe('cosmos');
    const longest = encode('a'.repeat(217), bytesOf(20, 1));
    expect(longest).toHaveLength(256);
    expect(okAs(parseAddress(longest))).toBe('cosmos');
    expect(messageOf(parseAddress(encode('a'.repeat(218), bytesOf(20, 1))))).toBe('address is longer than 256 characters');
    const cardano = encode('addr', [0x01, ...bytesOf(56, 5)]);
    expect(okAs(parseAddress(cardano.toUpperCase()))).toBe('cardano');
  });

  it('gives the same reason as before for each way of not being bech32', () => {
    const letter = 7 + cosmos20.slice(7).search(/[a-z]/);
    const oneUpper = `${cosmos20.slice(0, letter)}${cosmos20.charAt(letter).toUpperCase()}${cosmos20.slice(letter + 1)}`;
    expect(asCosmos(oneUpper)).toBe(cosmosFailure('mixed case'));
    expect(asCosmos(`COSMOS${cosmos20.slice(6)}`)).toBe(cosmosFailure('mixed case'));
    expect(asCosmos(cosmos20.replace(/k/g, '\u212a').replace(/^cosmos/, 'cosmo\u212a'))).toBe(
      cosmosFailure('not printable ASCII'),
    );
    expect(asCosmos('cosmos1qqqqq')).toBe(cosmosFailure('no separator'));
    expect(asCosmos(`1${cosmos20.slice(7)}`)).toBe(cosmosFailure('no separator'));
    expect(asCosmos('cosmosqqqqqqqqqqqqqq')).toBe(cosmosFailure('no separator'));
    expect(asCosmos(`${cosmos20.slice(0, 20)}b${cosmos20.slice(21)}`)).toBe(
      cosmosFailure('character outside the bech32 alphabet'),
    );
    expect(asCosmos(corrupt(cosmos20))).toBe(cosmosFailure('bech32 checksum is invalid'));
    expect(asCosmos(encode('Cosmos', bytesOf(20, 1)))).toBe(cosmosFailure('mixed case'));
    expect(asCosmos(encode('cosmos_x', bytesOf(20, 1)))).toBe(
      cosmosFailure('human-readable prefix must be lowercase letters and digits'),
    );
  });

  it('refuses a bech32m checksum (BIP-350) as a bad bech32 one', () => {
    const m = encodeWords('cosmos', toWords(bytesOf(20, 1)), 0x2bc830a3);
    expect(messageOf(parseAddress(m))).toBe(
      'address looks like a bech32 (Cosmos or Cardano) address but its bech32 checksum is invalid',
    );
    expect(asCosmos(m)).toBe(cosmosFailure('bech32 checksum is invalid'));
  });

  it('refuses padding that is too long or not zero', () => {
    const words32 = toWords(bytesOf(32, 1)); // 52 words: 260 bits, 4 of them padding
    expect(okAs(parseAddress(encodeWords('cosmos', words32)))).toBe('cosmos');
    const dirty = [...words32.slice(0, -1), (words32.at(-1) ?? 0) | 1];
    expect(asCosmos(encodeWords('cosmos', dirty))).toBe(cosmosFailure('payload must be 20 or 32 bytes'));
    const excess = [...toWords(bytesOf(20, 1)), 0]; // 33 words: 165 bits, 5 of them padding
    expect(asCosmos(encodeWords('cosmos', excess))).toBe(cosmosFailure('payload must be 20 or 32 bytes'));
    const cardano = (words: number[]) => messageOf(parseAddress(encodeWords('addr', words)));
    expect(cardano([...toWords([0x61, ...bytesOf(28, 6)]), 0, 0])).toMatch(/; payload is not whole bytes$/);
    expect(cardano([])).toMatch(/; payload is not whole bytes$/);
  });

  it('reads a prefix named like an Object property as any other prefix', () => {
    expect(okAs(parseAddress(encode('constructor', bytesOf(20, 1))))).toBe('cosmos');
    expect(okAs(parseAddress(encode('tostring', bytesOf(32, 1))))).toBe('cosmos');
    expect(messageOf(parseAddress(encode('__proto__', [0x61, ...bytesOf(28, 6)])))).toMatch(/not recognised/);
    expect(messageOf(parseAddress({ address: encode('constructor', [0x61, ...bytesOf(28, 6)]), namespace: 'cardano' })))
      .toMatch(/; prefix is not addr, addr_test, stake or stake_test$/);
  });
});
