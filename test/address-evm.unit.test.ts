import { describe, it, expect } from 'vitest';
import { parseAddress, toChecksumAddress } from '../src/domain/address.js';
import { bytesOf, EIP55_ALL_CAPS, EIP55_ALL_LOWER, EIP55_VECTORS, flipOneLetter, messageOf, okAs } from './address-helpers.js';

describe('EVM (eip155)', () => {
  it('accepts the EIP-55 checksummed vectors, returning them unchanged', () => {
    for (const a of [...EIP55_VECTORS, ...EIP55_ALL_CAPS, ...EIP55_ALL_LOWER]) {
      expect(parseAddress(a)).toEqual({ ok: true, address: a, namespace: 'eip155' });
    }
  });

  it('rejects a vector with one letter case flipped', () => {
    for (const a of EIP55_VECTORS) {
      for (const nth of [0, 3, 7]) {
        const r = parseAddress(flipOneLetter(a, nth));
        expect(r.ok).toBe(false);
        expect(messageOf(r)).toMatch(/EIP-55/);
      }
    }
  });

  it('accepts all-lowercase and all-uppercase hex whatever the checksum', () => {
    for (const a of EIP55_VECTORS) {
      const lower = `0x${a.slice(2).toLowerCase()}`;
      const upper = `0x${a.slice(2).toUpperCase()}`;
      expect(parseAddress(lower)).toEqual({ ok: true, address: lower, namespace: 'eip155' });
      expect(parseAddress(upper)).toEqual({ ok: true, address: upper, namespace: 'eip155' });
    }
    expect(okAs(parseAddress('0x0000000000000000000000000000000000000000'))).toBe('eip155');
  });

  it('checks the checksum when the namespace or chain says eip155', () => {
    expect(okAs(parseAddress({ address: EIP55_VECTORS[0], chain: 'eip155:1' }))).toBe('eip155');
    expect(okAs(parseAddress({ address: EIP55_VECTORS[1], namespace: 'eip155', chain: 'eip155:137' }))).toBe('eip155');
    expect(messageOf(parseAddress({ address: flipOneLetter(EIP55_VECTORS[2], 1), namespace: 'eip155' }))).toMatch(/EIP-55/);
  });

  it('rejects malformed EVM addresses', () => {
    const bad = [
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe', // 39 hex: not EVM; no namespace so it is read as Aptos
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAedd',
      '5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      '0X5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg',
      '0x',
    ] as const;
    for (const a of bad) {
      expect(parseAddress({ address: a, namespace: 'eip155' }).ok, a).toBe(false);
    }
    expect(messageOf(parseAddress({ address: bad[0], namespace: 'eip155' }))).toMatch(/eip155/);
    expect(parseAddress(bad[2]).ok).toBe(false);
    expect(parseAddress(bad[3]).ok).toBe(false);
    expect(parseAddress(bad[4]).ok).toBe(false);
    expect(parseAddress(bad[5]).ok).toBe(false);
  });
});

describe('toChecksumAddress', () => {
  it('reproduces the EIP-55 vectors from any case, with or without 0x', () => {
    for (const a of [...EIP55_VECTORS, ...EIP55_ALL_CAPS, ...EIP55_ALL_LOWER]) {
      const body = a.slice(2);
      expect(toChecksumAddress(a)).toBe(a);
      expect(toChecksumAddress(`0x${body.toLowerCase()}`)).toBe(a);
      expect(toChecksumAddress(body.toUpperCase())).toBe(a);
    }
  });

  it('round trips: its output parses, and is a fixed point', () => {
    for (let seed = 0; seed < 50; seed++) {
      const hex = bytesOf(20, seed)
        .map((b) => b.toString(16).padStart(2, '0'))
        .join('');
      const c = toChecksumAddress(hex);
      expect(toChecksumAddress(c)).toBe(c);
      expect(parseAddress(c)).toEqual({ ok: true, address: c, namespace: 'eip155' });
    }
  });

  it('throws on something that is not 40 hex digits', () => {
    expect(() => toChecksumAddress('0x1234')).toThrow(TypeError);
    expect(() => toChecksumAddress('')).toThrow(TypeError);
    expect(() => toChecksumAddress(' 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed')).toThrow(TypeError);
  });
});
