/**
 * Numbers a JSON body states that the service could not keep as stated. JSON.parse turns every number into a double:
 * `18446744073709551616` (2^64) comes back as `18446744073709552000`, `1e-400` as `0`, `-0` as `0`, `1e400` as
 * Infinity (stored as null). A scenario would then silently compare against another value than the one its author
 * wrote, so the scenario routes refuse such a number with a 400 naming its field (`inexactNumbers` finds them).
 *
 * "As stated" is by decimal value: `0.1`, `1.50`, `1e2` and `100.0` are kept (the double prints back as the same
 * decimal number); a literal whose decimal value differs from the double's shortest decimal form is not.
 */
import { fieldError } from '../domain/storable-text.js';
import type { FieldError } from './errors.js';

/** A decimal literal as sign, significant digits and exponent ("-1.50e3" -> "-15e2"), or undefined if not one. */
function canonical(literal: string): string | undefined {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (!m) return undefined;
  const frac = m[3] ?? '';
  let digits = (m[2] + frac).replace(/^0+/, '');
  if (digits === '') return '0';
  let exp = BigInt(m[4] ?? '0') - BigInt(frac.length);
  const trailing = digits.length - digits.replace(/0+$/, '').length;
  digits = digits.slice(0, digits.length - trailing);
  exp += BigInt(trailing);
  return `${m[1]}${digits}e${exp}`;
}

/** Whether JSON.parse keeps this number literal's value exactly (see the module comment). */
export function exactNumber(literal: string): boolean {
  const value = Number(literal);
  if (!Number.isFinite(value) || Object.is(value, -0)) return false;
  return canonical(literal) === canonical(String(value));
}

const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const STRING = /"(?:[^"\\]|\\.)*"/y;

/**
 * The fields of a JSON text whose number literals JSON.parse would change, as field errors (`body.a.b.2`, pointer
 * `/a/b/2`). The text must be valid JSON (call after it parsed); anything unexpected ends the scan with what was found.
 */
export function inexactNumbers(text: string): FieldError[] {
  // Every number of at most 15 significant digits, without exponent and not -0, is kept: a text without a longer
  // digit run (a '.' between digits joined), an exponent or a '-0' has none to find.
  if (!/\d[eE]|-0|\d{16}/.test(text.replace(/(?<=\d)\.(?=\d)/g, ''))) return [];
  const found: FieldError[] = [];
  // A loop over tokens with an explicit stack (a recursive descent would overflow on deeply nested arrays): each open
  // container is a frame holding the array index or the object key of the value being read.
  const frames: Array<{ index: number } | { key: string }> = [];
  const path = () => frames.map((f) => ('index' in f ? f.index : f.key));
  let i = 0;
  try {
    while (i < text.length) {
      const c = text[i];
      if (c === ' ' || c === '\n' || c === '\r' || c === '\t' || c === '\uFEFF' || c === ':') {
        i++;
      } else if (c === '{') {
        frames.push({ key: '' });
        i++;
      } else if (c === '[') {
        frames.push({ index: 0 });
        i++;
      } else if (c === '}' || c === ']') {
        frames.pop();
        i++;
      } else if (c === ',') {
        const top = frames[frames.length - 1];
        if (top && 'index' in top) top.index++;
        i++;
      } else if (c === '"') {
        STRING.lastIndex = i;
        const s = STRING.exec(text);
        if (!s) break;
        i = STRING.lastIndex;
        while (i < text.length && /\s/.test(text[i]!)) i++;
        const top = frames[frames.length - 1];
        if (text[i] === ':' && top && 'key' in top) top.key = JSON.parse(s[0]) as string;
      } else {
        NUMBER.lastIndex = i;
        const num = NUMBER.exec(text);
        if (num) {
          i = NUMBER.lastIndex;
          if (!exactNumber(num[0])) {
            found.push(fieldError(path(), `the number ${num[0].slice(0, 40)} cannot be kept exactly (it would become ${String(Number(num[0]))}): send a value a double holds exactly`));
          }
        } else {
          i += text.startsWith('true', i) || text.startsWith('null', i) ? 4 : 5; // true, false, null
        }
      }
    }
  } catch {
    // not valid JSON: the parser answers for it
  }
  return found;
}
