import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exactNumber, inexactNumbers } from '../src/http/exact-numbers.js';
import { unstorableText } from '../src/domain/storable-text.js';

describe('exactNumber', () => {
  it('keeps every number as JavaScript prints it (any finite double but -0)', () => {
    fc.assert(fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (d) => Object.is(d, -0) || exactNumber(JSON.stringify(d))), { numRuns: 2000 });
  });

  it('refuses literals whose value the double changes', () => {
    for (const x of ['18446744073709551616', '9007199254740993', '1e-400', '1e400', '-0', '0.30000000000000000001']) expect(exactNumber(x), x).toBe(false);
    for (const x of ['0', '0.0', '1.50', '1E2', '2.5e-3', '9007199254740992']) expect(exactNumber(x), x).toBe(true);
  });
});

describe('inexactNumbers', () => {
  it('names every changed number by its path, in strings and keys never', () => {
    const text = '{"a":[1,{"b":-0,"c":"1e400"}],"1e-400":2,"d":{"e/f":[0.5,18446744073709551616]}}';
    expect(inexactNumbers(text).map((e) => [e.field, e.pointer])).toEqual([
      ['body.a.1.b', '/a/1/b'],
      ['body.d.e/f.1', '/d/e~1f/1'],
    ]);
  });

  it('finds nothing in a body of short numbers and decimals (the common case)', () => {
    expect(inexactNumbers('{"a":[1,2.5,-3,-0.5,0,0.0,1e2,1.5E+300,123456789012345],"b":"x","e-0":"1e-400"}')).toEqual([]);
  });

  it('decides every literal as exactNumber does, its shortcut for short digits in the normal range included', () => {
    const digits = (min: number, max: number) => fc.stringMatching(new RegExp(`^[0-9]{${min},${max}}$`));
    const literal = fc.tuple(fc.boolean(), fc.oneof(fc.constant('0'), fc.tuple(fc.integer({ min: 1, max: 9 }), digits(0, 20)).map(([d, r]) => `${d}${r}`)),
      fc.option(digits(1, 20), { nil: undefined }), fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.integer({ min: 0, max: 400 })), { nil: undefined }))
      .map(([minus, int, frac, exp]) => `${minus ? '-' : ''}${int}${frac === undefined ? '' : `.${frac}`}${exp === undefined ? '' : `${exp[0]}${exp[1]}${exp[2]}`}`);
    const edges = ['1e308', '1.7976931348623157e308', '1.8e308', '9.99999999999999e307', '1e-307', '1e-308', '2.2250738585072014e-308', '2.225073858507201e-308',
      '123456789012345', '1234567890123456', '12345678901234567', '0.000000000000001e-300', '1000000000000000000000', '-0.0e5', '0e-99999999', '1e-0000000000000000400', '1e+000000000000000000001'];
    const agree = (x: string) => inexactNumbers(`{"v":[${x}]}`).length === (exactNumber(x) ? 0 : 1);
    for (const x of edges) expect(agree(x), x).toBe(true);
    fc.assert(fc.property(literal, agree), { numRuns: 5000 });
  });

  it('scans a body nested 50,000 deep without overflowing the stack', () => {
    const deep = `${'['.repeat(50_000)}1e-400${']'.repeat(50_000)}`;
    expect(inexactNumbers(deep).map((e) => e.pointer)).toEqual(['/0'.repeat(50_000)]);
  });
});

describe('unstorableText', () => {
  it('names each string and key holding U+0000 or a lone surrogate, and passes paired surrogates', () => {
    const body = { a: ['ok', 'x\u0000'], 'k\ud800': 1, b: { c: '\udc00y', d: '\ud83d\ude00' } };
    expect(unstorableText(body).map((e) => e.pointer)).toEqual(['/a/1', '/k\\ud800', '/b/c']);
  });

  it('walks a value nested 50,000 deep without overflowing the stack', () => {
    const deep = JSON.parse(`${'['.repeat(50_000)}"\\u0000"${']'.repeat(50_000)}`) as unknown;
    expect(unstorableText(deep).map((e) => e.pointer)).toEqual(['/0'.repeat(50_000)]);
  });
});
