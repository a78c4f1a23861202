/** PostgreSQL refuses U+0000 and lone surrogates (SQLite reads the latter back changed): refused on every database. */
import type { FieldError } from '../schemas/problem.js';

// eslint-disable-next-line no-control-regex -- U+0000 is what this looks for
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export const storableText = (s: string): boolean => !UNSTORABLE.test(s);

export const mayHoldUnstorable = (json: string): boolean => /\\u(?:0000|[dD][89a-fA-F])/.test(json) || UNSTORABLE.test(json);

export function unstorableText(value: unknown, path: ReadonlyArray<string | number> = [], limit = Infinity): FieldError[] {
  const found: FieldError[] = [];
  // An explicit stack: a deeply nested body must not overflow the call stack.
  interface Entry { v: unknown; at?: string | number; parent?: Entry }
  const pathOf = (e: Entry | undefined): Array<string | number> => {
    const out: Array<string | number> = [];
    for (let x = e; x && x.at !== undefined; x = x.parent) out.unshift(x.at);
    return [...path, ...out];
  };
  const stack: Entry[] = [{ v: value }];
  for (let e = stack.pop(); e !== undefined && found.length < limit; e = stack.pop()) {
    const v = e.v;
    if (typeof e.at === 'string' && !storableText(e.at)) found.push(fieldError(pathOf(e), 'this key must not contain U+0000 or an unpaired UTF-16 surrogate'));
    if (typeof v === 'string') {
      if (!storableText(v)) found.push(fieldError(pathOf(e), 'must not contain U+0000 or an unpaired UTF-16 surrogate'));
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        const x: unknown = v[i];
        if (typeof x === 'string' || (typeof x === 'object' && x !== null)) stack.push({ v: x, at: i, parent: e });
      }
    } else if (typeof v === 'object' && v !== null) {
      const entries: Array<[string, unknown]> = Object.entries(v);
      for (const [k, x] of entries.reverse()) {
        if (typeof x === 'string' || (typeof x === 'object' && x !== null) || !storableText(k)) stack.push({ v: x, at: k, parent: e });
      }
    }
  }
  return found.slice(0, limit);
}

/** A key is shown escaped, never raw. */
export function fieldError(path: ReadonlyArray<string | number>, message: string): FieldError {
  const show = (p: string) => JSON.stringify(p).slice(1, -1);
  return {
    field: `body${path.map((p) => `.${typeof p === 'number' ? p : show(p)}`).join('')}`,
    pointer: path.map((p) => `/${show(String(p)).replace(/~/g, '~0').replace(/\//g, '~1')}`).join(''),
    message,
  };
}
