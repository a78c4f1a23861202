import { describe, it, expect } from 'vitest';
import { parseAddress } from '../src/domain/address.js';
import { EIP55_VECTORS, flipOneLetter, messageOf, okAs } from './address-helpers.js';

describe('Tezos', () => {
  const good = ['tz1VSUr8wwNhLAzempoch5d6hLRiTh8Cjcjb', 'KT1PWx2mnDueood7fEmfbBDKx1D9BAnnXitn'] as const;
  it('accepts tz1/tz2/tz3/tz4/KT1 + 33 base58 characters', () => {
    for (const a of good) expect(parseAddress(a)).toEqual({ ok: true, address: a, namespace: 'tezos' });
    for (const p of ['tz2', 'tz3', 'tz4']) expect(okAs(parseAddress(p + good[0].slice(3)))).toBe('tezos');
    expect(okAs(parseAddress({ address: good[0], chain: 'tezos:NetXdQprcVkpaWU' }))).toBe('tezos');
    expect(okAs(parseAddress({ address: good[1], namespace: 'tezos' }))).toBe('tezos');
  });
  it('rejects malformed ones', () => {
    for (const a of [
      'tz5VSUr8wwNhLAzempoch5d6hLRiTh8Cjcjb',
      'tz1VSUr8wwNhLAzempoch5d6hLRiTh8Cjcj',
      'tz1VSUr8wwNhLAzempoch5d6hLRiTh8Cjcjbb',
      'tz1VSUr8wwNhLAzempoch5d6hLRiTh8Cjcj0', // 0 is not base58
      'tz1VSUr8wwNhLAzempoch5d6hLRiTh8CjcjI',
    ]) {
      expect(parseAddress({ address: a, namespace: 'tezos' }).ok, a).toBe(false);
    }
    expect(messageOf(parseAddress({ address: 'tz1abc', namespace: 'tezos' }))).toMatch(/tezos/i);
  });
});

describe('Aptos and Starknet', () => {
  const long64 = '0x049d36570d4e46f48e99674bd3fcc84644ddd6b96f7c741b1562b82f9e004dc7';
  it('reads 0x + hex that is not 40 digits as Aptos when no namespace is given', () => {
    for (const a of ['0x1', '0xA', long64, '0xa550c18e9f7b8b4c7c0b5e0a1d8e1d7d7f8c2f3e4d5c6b7a8f9e0d1c2b3a4f5e']) {
      expect(parseAddress(a)).toEqual({ ok: true, address: a, namespace: 'aptos' });
    }
  });
  it('reads 40 hex digits as Aptos only when told so', () => {
    const lower = EIP55_VECTORS[0].toLowerCase();
    expect(okAs(parseAddress({ address: lower, namespace: 'aptos' }))).toBe('aptos');
    expect(okAs(parseAddress({ address: flipOneLetter(EIP55_VECTORS[0], 0), namespace: 'aptos' }))).toBe('aptos');
  });
  it('reads Starknet when the namespace or chain says so', () => {
    expect(parseAddress({ address: long64, namespace: 'starknet' })).toEqual({
      ok: true,
      address: long64,
      namespace: 'starknet',
    });
    expect(okAs(parseAddress({ address: '0x1', chain: 'starknet:SN_MAIN' }))).toBe('starknet');
  });
  it('rejects malformed ones', () => {
    const over = `0x${'1'.repeat(65)}`;
    expect(parseAddress(over).ok).toBe(false);
    expect(parseAddress({ address: over, namespace: 'aptos' }).ok).toBe(false);
    expect(parseAddress({ address: '0x', namespace: 'aptos' }).ok).toBe(false);
    expect(parseAddress({ address: '0xzz', namespace: 'aptos' }).ok).toBe(false);
    expect(parseAddress({ address: long64.slice(2), namespace: 'starknet' }).ok).toBe(false);
    // 2^251 and above is not a Starknet address (but is a fine Aptos one).
    const big = `0x08${'0'.repeat(62)}`;
    expect(messageOf(parseAddress({ address: big, namespace: 'starknet' }))).toMatch(/2\^251/);
    expect(okAs(parseAddress({ address: `0x07${'f'.repeat(62)}`, namespace: 'starknet' }))).toBe('starknet');
    expect(okAs(parseAddress({ address: big, namespace: 'aptos' }))).toBe('aptos');
  });
});

describe('Polkadot (SS58)', () => {
  const good = [
    '5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY', // Alice, generic Substrate prefix 42
    '15oF4uVJwmo4TdGW7VfQxNLavjCXviqxT9S1MgbjMNHr6Sp5', // Polkadot prefix 0
  ] as const;
  it('accepts SS58 shaped addresses', () => {
    for (const a of good) expect(parseAddress(a)).toEqual({ ok: true, address: a, namespace: 'polkadot' });
    expect(okAs(parseAddress({ address: good[1], chain: 'polkadot:91b171bb158e2d3848fa23a9f1c25182' }))).toBe(
      'polkadot',
    );
  });
  it('rejects malformed ones', () => {
    for (const a of [
      good[0].slice(0, 45),
      `${good[0]}5`,
      `${good[0].slice(0, 47)}0`,
      `${good[0].slice(0, 47)}l`,
      `${good[0].slice(0, 47)}O`,
      `${good[0].slice(0, 40)}-${good[0].slice(41)}`,
    ]) {
      expect(parseAddress(a).ok, a).toBe(false);
      expect(parseAddress({ address: a, namespace: 'polkadot' }).ok, a).toBe(false);
    }
    expect(messageOf(parseAddress({ address: 'tz1VSUr8wwNhLAzempoch5d6hLRiTh8Cjcjb', namespace: 'polkadot' }))).toMatch(
      /polkadot/i,
    );
  });
});
