import { createHash } from 'node:crypto';

/**
 * Canonical JSON (RFC 8785 JCS for JSON-parsed values): object keys sorted by UTF-16 code units, no white space,
 * numbers and strings as JSON.stringify writes them. Equal documents give equal text whatever their key order.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i ? ',' : '') + canonicalJson(value[i]);
    return `${out}]`;
  }
  const keys = Object.keys(value).sort();
  let out = '{';
  let first = true;
  for (const k of keys) {
    const v = (value as Record<string, unknown>)[k];
    if (v === undefined) continue;
    out += `${first ? '' : ','}${JSON.stringify(k)}:${canonicalJson(v)}`;
    first = false;
  }
  return `${out}}`;
}

export const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
