import { describe, expect, it } from 'vitest';
import { at, entry, first, only } from './elements.js';

describe('element access for tests (test/elements.ts)', () => {
  it('answers the element that exists, undefined and falsy values included', () => {
    expect(at(['a', 'b'], 1)).toBe('b');
    expect(at([0, undefined], 1)).toBeUndefined();
    expect(first([0, 1])).toBe(0);
    expect(only([''])).toBe('');
  });

  it('throws a message naming the index and the length when the element is missing', () => {
    expect(() => at(['a'], 1)).toThrow('expected an element at index 1, but the list has 1');
    expect(() => at(['a'], -1)).toThrow('expected an element at index -1, but the list has 1');
    expect(() => at(['a'], 0.5)).toThrow('expected an element at index 0.5, but the list has 1');
    expect(() => first([])).toThrow('expected an element at index 0, but the list has 0');
  });

  it('only refuses an empty list and a list of more than one', () => {
    expect(() => only([])).toThrow('expected exactly one element, but the list has 0');
    expect(() => only([1, 2])).toThrow('expected exactly one element, but the list has 2');
  });

  it('answers a record\'s own entry, and names the key and the keys there are when it is missing', () => {
    expect(entry({ a: 1, b: undefined }, 'a')).toBe(1);
    expect(entry({ a: 1, b: undefined }, 'b')).toBeUndefined();
    expect(() => entry({ a: 1, b: 2 }, 'c')).toThrow('expected an entry "c", but the keys are a, b');
    expect(() => entry({}, 'toString')).toThrow('expected an entry "toString"');
  });
});
