import { describe, expect, it } from 'vitest';
import { mergePatch, mergePatchOf } from '../src/domain/merge-patch.js';

describe('mergePatchOf', () => {
  it('states only what changed, removed members as null, arrays whole, and applies back to the document', () => {
    const before = { a: 1, b: { c: 2, d: [1, 2], e: 'x' }, f: [{ g: 1 }], gone: true };
    const after = { a: 1, b: { d: [1, 2, 3], c: 2, e: 'y' }, f: [{ g: 1 }], added: { h: 1 } };
    const patch = mergePatchOf(before, after);
    expect(patch).toEqual({ b: { d: [1, 2, 3], e: 'y' }, gone: null, added: { h: 1 } });
    expect(mergePatch(before, patch)).toEqual(after);
  });

  it('is empty for equal documents whatever their key order, and replaces a value that changes kind', () => {
    expect(mergePatchOf({ a: { x: 1, y: [1, { z: 2 }] } }, { a: { y: [1, { z: 2 }], x: 1 } })).toEqual({});
    expect(mergePatchOf({ a: [1] }, { a: { 0: 1 } })).toEqual({ a: { 0: 1 } });
    expect(mergePatchOf({ a: { 0: 1 } }, { a: [1] })).toEqual({ a: [1] });
    expect(mergePatchOf({ a: 1 }, { a: '1' })).toEqual({ a: '1' });
  });
});
