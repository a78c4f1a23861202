import crypto from 'node:crypto';

const PLAIN_KEY = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** RFC 8785 (JCS) for JSON-parsed values. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      out += (i ? ',' : '') + (v === undefined || typeof v === 'function' ? 'null' : canonicalJson(v));
    }
    return `${out}]`;
  }
  const keys = Object.keys(value).sort();
  let out = '{';
  let first = true;
  for (const k of keys) {
    const v: unknown = Reflect.get(value, k);
    if (v === undefined || typeof v === 'function') continue;
    out += `${first ? '' : ','}${PLAIN_KEY.test(k) ? `"${k}"` : JSON.stringify(k)}:${canonicalJson(v)}`;
    first = false;
  }
  return `${out}}`;
}

// crypto.hash: Node 20.12+.
const oneShot: typeof crypto.hash | undefined = crypto.hash;
export const sha256Hex = oneShot
  ? (text: string) => oneShot('sha256', text, 'hex')
  : (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');

export const contentDigest = (value: unknown): string => sha256Hex(canonicalJson(value));
