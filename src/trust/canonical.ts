import { createHash } from 'node:crypto';

/**
 * Canonical JSON in the manner of RFC 8785 (JCS) for the values a JSON body can hold: object keys sorted by UTF-16
 * code units, no whitespace, strings and numbers as JSON.stringify writes them (ECMAScript number serialization, as
 * JCS requires). Two credentials with the same content, whatever their key order, give the same text.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const s = JSON.stringify(value);
    return s === undefined ? 'null' : s;
  }
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      const v = value[i];
      out += v === undefined || typeof v === 'function' ? 'null' : canonicalJson(v);
    }
    return out + ']';
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort();
  let out = '{';
  let first = true;
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined || typeof v === 'function') continue;
    if (!first) out += ',';
    first = false;
    out += JSON.stringify(k) + ':' + canonicalJson(v);
  }
  return out + '}';
}

/** SHA-256 of the canonical JSON, hex. */
export function contentHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}
