import { describe, it, expect } from 'vitest';
import { parseAddress } from '../src/domain/address.js';
import { bytesOf, CHARSET, corrupt, EIP55_VECTORS, encode, encodeWords, messageOf, okAs } from './address-helpers.js';

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
