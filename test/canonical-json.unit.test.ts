import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, contentDigest, sha256Hex } from '../src/domain/canonical-json.js';

describe('canonical JSON', () => {
  it('sorts keys at every depth, drops undefined, writes no white space', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { f: null, e: 'x' }], c: undefined } })).toBe('{"a":{"d":[3,{"e":"x","f":null}]},"b":1}');
  });

  it('escapes keys and strings as JSON does, and sorts by UTF-16 code units', () => {
    const doc = { 'quo"te': 1, 'back\\slash': 2, 'new\nline': 3, é: 4, Z: 5, a: 'ü\u2028"' };
    const text = canonicalJson(doc);
    expect(JSON.parse(text)).toEqual(doc);
    expect(Object.keys(JSON.parse(text))).toEqual(Object.keys(doc).sort());
  });

  it('gives equal text for equal documents in any key order', () => {
    expect(canonicalJson({ x: [1, 2], y: { p: true, q: 'r' } })).toBe(canonicalJson({ y: { q: 'r', p: true }, x: [1, 2] }));
  });

  it('digests with SHA-256 of the canonical text', () => {
    const expected = createHash('sha256').update('{"a":1,"b":2}').digest('hex');
    expect(sha256Hex('{"a":1,"b":2}')).toBe(expected);
    expect(contentDigest({ b: 2, a: 1 })).toBe(expected);
    expect(contentDigest({ a: 99, b: 2 })).not.toBe(expected);
    expect(contentDigest('x')).toBe(sha256Hex('"x"'));
  });
});
