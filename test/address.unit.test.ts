import { describe, it, expect } from 'vitest';
import { AddressParser, parseAddress } from '../src/domain/address.js';
import { bytesOf, EIP55_VECTORS, encode, flipOneLetter, messageOf, okAs } from './address-helpers.js';

describe('namespace and chain', () => {
  const evm = EIP55_VECTORS[0];
  it('rejects a namespace that disagrees with the chain', () => {
    const r = parseAddress({ address: evm, namespace: 'eip155', chain: 'tezos:NetXdQprcVkpaWU' });
    expect(r.ok).toBe(false);
    expect(messageOf(r)).toMatch(/does not match/);
    expect(parseAddress({ address: 'tz1VSUr8wwNhLAzempoch5d6hLRiTh8Cjcjb', namespace: 'tezos', chain: 'eip155:1' }).ok).toBe(
      false,
    );
    expect(okAs(parseAddress({ address: evm, namespace: 'eip155', chain: 'eip155:1' }))).toBe('eip155');
    expect(okAs(parseAddress({ address: encode('addr', [0x61, ...bytesOf(28, 6)]), namespace: 'cardano', chain: 'cip34:1-764824073' }))).toBe('cardano');
  });
  it('rejects an address that does not fit the namespace given, saying which', () => {
    const r = parseAddress({ address: evm, namespace: 'tezos' });
    expect(r.ok).toBe(false);
    expect(messageOf(r)).toMatch(/tezos/);
    expect(messageOf(parseAddress({ address: 'tz1VSUr8wwNhLAzempoch5d6hLRiTh8Cjcjb', chain: 'eip155:1' }))).toMatch(/eip155/);
  });
  it('rejects unknown namespaces and malformed chain ids', () => {
    expect(messageOf(parseAddress({ address: evm, namespace: 'bip122' }))).toMatch(/not supported/);
    expect(messageOf(parseAddress({ address: evm, namespace: 'EIP155' }))).toMatch(/not supported/);
    expect(messageOf(parseAddress({ address: evm, namespace: '' }))).toMatch(/not supported/);
    expect(messageOf(parseAddress({ address: evm, chain: 'eip155' }))).toMatch(/CAIP-2/);
    expect(messageOf(parseAddress({ address: evm, chain: '' }))).toMatch(/CAIP-2/);
    expect(messageOf(parseAddress({ address: evm, chain: 'eip155:' }))).toMatch(/CAIP-2/);
    expect(messageOf(parseAddress({ address: evm, chain: 'bip122:000000000019d6689c085ae165831e93' }))).toMatch(
      /unsupported namespace/,
    );
  });
  it('treats an object without chain or namespace like the bare string', () => {
    expect(parseAddress({ address: evm })).toEqual(parseAddress(evm));
  });
});

describe('anything else', () => {
  const NOT_RECOGNISED =
    'address format not recognised (expected an EVM 0x address or a Tezos, Aptos, Polkadot, Starknet, Cosmos or Cardano address)';
  it('says the format is not recognised', () => {
    for (const a of ['hello', '0xnothex', 'did:example:123', '1234', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4']) {
      expect(parseAddress(a)).toEqual({ ok: false, message: NOT_RECOGNISED });
    }
  });
  it('rejects leading or trailing whitespace rather than trimming', () => {
    for (const a of [` ${EIP55_VECTORS[0]}`, `${EIP55_VECTORS[0]} `, `${EIP55_VECTORS[0]}\n`, `\t${EIP55_VECTORS[0]}`]) {
      const r = parseAddress(a);
      expect(r.ok).toBe(false);
      expect(messageOf(r)).toMatch(/whitespace/);
      expect(parseAddress({ address: a, namespace: 'eip155' }).ok).toBe(false);
    }
    expect(parseAddress('0x5aAeb6053F3E94C9b9A09f336 69435E7Ef1BeAed').ok).toBe(false);
  });
  it('rejects empty and over-long strings', () => {
    expect(parseAddress('').ok).toBe(false);
    expect(parseAddress({ address: '' }).ok).toBe(false);
    expect(parseAddress('a'.repeat(257)).ok).toBe(false);
    expect(parseAddress('0x' + 'f'.repeat(1_000_000)).ok).toBe(false);
  });
  it('never throws, whatever the string', () => {
    const alphabet = [
      ...'0123456789abcdefABCDEFxX qpzry9x8gf2tvdw0s3jn54khce6mua7l_:-\t\n',
      'é',
      'K', // Kelvin sign: lowercases to an ASCII k
      '\u0130',
      '\u0000',
      '\ud83d\ude00',
      '\ud800',
    ];
    let seed = 12345;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const prefixes = ['', '0x', 'tz1', 'KT1', 'cosmos1', 'addr1', 'stake1', 'addr_test1', '5', '1'];
    for (let i = 0; i < 3000; i++) {
      let s = prefixes[rand(prefixes.length)] ?? '';
      const len = rand(110);
      for (let j = 0; j < len; j++) s += alphabet[rand(alphabet.length)] ?? '';
      for (const input of [s, { address: s }, { address: s, namespace: 'cosmos' }, { address: s, chain: 'eip155:1' }]) {
        const r = parseAddress(input);
        expect(typeof r.ok).toBe('boolean');
      }
    }
    // A string with a Kelvin sign is not a bech32 address even though it lowercases to one.
    const withK = Array.from({ length: 40 }, (_, seed) => encode('cosmos', bytesOf(20, seed))).find((a) =>
      a.slice(7).includes('k'),
    );
    expect(withK).toBeDefined();
    expect(okAs(parseAddress(withK!))).toBe('cosmos');
    expect(parseAddress(withK!.slice(0, 7) + withK!.slice(7).replace('k', '\u212a')).ok).toBe(false);
  });
  it('does not throw on values outside the declared type either', () => {
    for (const v of [null, undefined, 42, {}, { address: 42 }, { address: 'x', chain: 1 }, { address: 'x', namespace: null }]) {
      expect(() => parseAddress(v as never)).not.toThrow();
      expect(parseAddress(v as never).ok).toBe(false);
    }
  });
});
describe('AddressParser (parseAddress with a memo)', () => {
  const evm = EIP55_VECTORS[0];
  const inputs = [
    evm,
    flipOneLetter(evm, 2),
    encode('cosmos', bytesOf(20, 1)),
    { address: evm, chain: 'eip155:1' },
    { address: evm, namespace: 'tezos' },
    { address: 'x' },
    { address: 'x', namespace: null },
    { address: 'x', chain: 1 },
    { address: 42 },
    null,
  ];

  it('answers as parseAddress does, the first time and from its memo', () => {
    const parser = new AddressParser();
    for (let round = 0; round < 2; round++) {
      for (const input of inputs) expect(parser.parse(input as never)).toEqual(parseAddress(input as never));
    }
  });

  it('remembers answers by content, frozen since they are shared', () => {
    const parser = new AddressParser();
    const first = parser.parse({ address: evm, chain: 'eip155:1' });
    expect(parser.parse({ chain: 'eip155:1', address: evm })).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(parser.parse(evm)).not.toBe(first);
    expect(new AddressParser().parse({ address: evm, chain: 'eip155:1' })).not.toBe(first);
  });

  it('does not take a null namespace or chain for an absent one', () => {
    const parser = new AddressParser();
    expect(okAs(parser.parse({ address: evm }))).toBe('eip155');
    expect(messageOf(parser.parse({ address: evm, namespace: null } as never))).toBe('namespace must be a string');
    expect(messageOf(parser.parse({ address: evm, chain: null } as never))).toBe('chain must be a string');
  });

  it('keeps at most max answers, dropping the least recently used', () => {
    const parser = new AddressParser({ max: 2 });
    const a = parser.parse('0x1');
    const b = parser.parse('0x2');
    expect(parser.parse('0x1')).toBe(a);
    parser.parse('0x3');
    expect(parser.parse('0x1')).toBe(a);
    expect(parser.parse('0x2')).not.toBe(b);
  });
});
