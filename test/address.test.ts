import { describe, it, expect } from 'vitest';
import { parseAddress, toChecksumAddress, type ParsedAddress } from '../src/domain/address.js';

// ---------------------------------------------------------------------------------------------------------------
// An independent bech32 encoder (BIP-173), written from the spec for the tests; anchored below on BIP-173's own
// valid strings, so that the checksums it computes for the Cosmos and Cardano cases are known good.

const CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

function polymod(values: number[]): number {
  const gen = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
  let chk = 1;
  for (const value of values) {
    const b = Math.floor(chk / 2 ** 25);
    chk = ((chk % 2 ** 25) * 32) ^ value;
    gen.forEach((g, i) => {
      if (Math.floor(b / 2 ** i) % 2 === 1) chk ^= g;
    });
  }
  return chk;
}

function encodeWords(hrp: string, words: number[]): string {
  const expanded = [...[...hrp].map((c) => c.charCodeAt(0) >> 5), 0, ...[...hrp].map((c) => c.charCodeAt(0) & 31)];
  const mod = polymod([...expanded, ...words, 0, 0, 0, 0, 0, 0]) ^ 1;
  const checksum = [0, 1, 2, 3, 4, 5].map((i) => (mod >> (5 * (5 - i))) & 31);
  return `${hrp}1${[...words, ...checksum].map((w) => CHARSET[w]).join('')}`;
}

function toWords(bytes: number[]): number[] {
  const bits = bytes.map((b) => b.toString(2).padStart(8, '0')).join('');
  const padded = bits.padEnd(Math.ceil(bits.length / 5) * 5, '0');
  const words: number[] = [];
  for (let i = 0; i < padded.length; i += 5) words.push(parseInt(padded.slice(i, i + 5), 2));
  return words;
}

const encode = (hrp: string, bytes: number[]) => encodeWords(hrp, toWords(bytes));
const bytesOf = (n: number, seed: number) => Array.from({ length: n }, (_, i) => (i * 37 + seed * 11 + 5) & 0xff);

/** Changes one data character (not the hrp) so that the checksum no longer matches. */
function corrupt(s: string): string {
  const i = s.length - 10;
  const c = s[i] === 'q' ? 'p' : 'q';
  return s.slice(0, i) + c + s.slice(i + 1);
}

const okAs = (r: ParsedAddress) => (r.ok ? r.namespace : `error: ${r.message}`);
const messageOf = (r: ParsedAddress) => (r.ok ? '' : r.message);

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

const EIP55_VECTORS = [
  '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
  '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
  '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
];
// Also from EIP-55: addresses whose checksummed form is all caps / all lowercase.
const EIP55_ALL_CAPS = ['0x52908400098527886E0F7030069857D2E4169EE7', '0x8617E340B3D01FA5F11F306F4090FD50E238070D'];
const EIP55_ALL_LOWER = ['0xde709f2102306220921060314715629080e2fb77', '0x27b1fdb04752bbc536007a920d24acb045561c26'];

function flipOneLetter(address: string, nth: number): string {
  let seen = -1;
  for (let i = 2; i < address.length; i++) {
    if (/[a-fA-F]/.test(address[i]) && ++seen === nth) {
      const c = address[i];
      const flipped = c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase();
      return address.slice(0, i) + flipped + address.slice(i + 1);
    }
  }
  throw new Error('not enough letters');
}

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
    ];
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

// ---------------------------------------------------------------------------------------------------------------

describe('Tezos', () => {
  const good = ['tz1VSUr8wwNhLAzempoch5d6hLRiTh8Cjcjb', 'KT1PWx2mnDueood7fEmfbBDKx1D9BAnnXitn'];
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
  ];
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
      let s = prefixes[rand(prefixes.length)];
      const len = rand(110);
      for (let j = 0; j < len; j++) s += alphabet[rand(alphabet.length)];
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
