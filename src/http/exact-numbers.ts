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

/**
 * A decimal literal as sign, significant digits and exponent ("-1.50e3" -> "-15e2", "0" for zero), or undefined if
 * not one. The exponent is a number unless it is too long to be exact as one (then a bigint, as text).
 */
function canonical(literal: string): string | undefined {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (!m) return undefined;
  const frac = m[3] ?? '';
  const all = m[2] + frac;
  let first = 0;
  while (first < all.length && all.charCodeAt(first) === 48) first++;
  if (first === all.length) return '0';
  let end = all.length;
  while (all.charCodeAt(end - 1) === 48) end--;
  const shift = all.length - end - frac.length;
  const written = m[4] ?? '0';
  const exp = written.length < 16 ? String(Number(written) + shift) : String(BigInt(written) + BigInt(shift));
  return `${m[1]}${all.slice(first, end)}e${exp}`;
}

/** The significant digits a literal states (first to last non-zero digit, before any exponent); 0 for a zero. */
function significantDigits(literal: string): number {
  let first = -1;
  let last = -1;
  let count = 0;
  for (let i = 0; i < literal.length; i++) {
    const c = literal.charCodeAt(i);
    if (c === 101 || c === 69) break; // e, E
    if (c < 48 || c > 57) continue; // '-', '.'
    if (c !== 48) {
      if (first === -1) first = count;
      last = count;
    }
    count++;
  }
  return first === -1 ? 0 : last - first + 1;
}

/** The smallest positive normal double: above it, 15 significant digits always survive a trip through a double. */
const MIN_NORMAL = 2.2250738585072014e-308;

/** Whether JSON.parse keeps this number literal's value exactly (see the module comment). */
export function exactNumber(literal: string): boolean {
  const value = Number(literal);
  if (!Number.isFinite(value) || Object.is(value, -0)) return false;
  // A decimal of at most 15 significant digits (DBL_DIG) in the normal range comes back from the double as written;
  // zero is zero whatever its exponent. Only the others need their decimal forms compared.
  const digits = significantDigits(literal);
  if (digits === 0 || (digits <= 15 && Math.abs(value) >= MIN_NORMAL)) return true;
  const shortest = String(value);
  return shortest === literal || canonical(literal) === canonical(shortest);
}

const QUOTE = 34;
const BACKSLASH = 92;

/** The index just past the string whose opening quote is at `at`, or -1 when it does not end. */
function stringEnd(text: string, at: number): number {
  let i = at + 1;
  for (;;) {
    const q = text.indexOf('"', i);
    if (q === -1) return -1;
    let slashes = 0;
    while (text.charCodeAt(q - 1 - slashes) === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return q + 1;
    i = q + 1;
  }
}

/** 10^-307 and 10^307: a decimal in [10^-307, 10^308) is a normal double (MIN_NORMAL < 10^-307). */
const MIN_MAGNITUDE = -307;
const MAX_MAGNITUDE = 307;
/** Past this, an exponent is no longer read as a number here (exactNumber decides). */
const LONG_EXPONENT = 100_000;

/**
 * Reads the number literal at `from` in one pass and decides the common case without converting it: at most 15
 * significant digits and a magnitude where doubles are normal keep it exactly, zero keeps it, a minus zero does not.
 * Only the others (16+ digits, near the ends of the range) go to exactNumber. Returns where the literal ends, negated
 * (minus one) when the number is not kept.
 */
function scanNumber(text: string, from: number): number {
  let i = from;
  const negative = text.charCodeAt(i) === 45;
  if (negative) i++;
  let intDigits = 0; // digits before the '.'
  let seen = 0; // digits read, both parts
  let first = -1; // index among the digits of the first non-zero one, and of the last
  let last = -1;
  let fraction = false;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (c !== 48) {
        if (first === -1) first = seen;
        last = seen;
      }
      seen++;
      if (!fraction) intDigits++;
    } else if (c === 46 && !fraction) {
      fraction = true;
    } else break;
  }
  let exponent = 0;
  let long = false;
  const mark = text.charCodeAt(i);
  if (mark === 101 || mark === 69) { // e, E
    i++;
    const sign = text.charCodeAt(i) === 45 ? -1 : 1;
    if (text.charCodeAt(i) === 45 || text.charCodeAt(i) === 43) i++;
    for (; i < text.length; i++) {
      const d = text.charCodeAt(i);
      if (d < 48 || d > 57) break;
      if (exponent < LONG_EXPONENT) exponent = exponent * 10 + d - 48;
      else long = true;
    }
    exponent *= sign;
  }
  if (first === -1) return negative ? -i - 1 : i; // a zero; -0 becomes 0
  // The literal is in [10^magnitude, 10^(magnitude+1)).
  const magnitude = intDigits - 1 - first + exponent;
  if (!long && last - first < 15 && magnitude >= MIN_MAGNITUDE && magnitude <= MAX_MAGNITUDE) return i;
  return exactNumber(text.slice(from, i)) ? i : -i - 1;
}

/**
 * The fields of a JSON text whose number literals JSON.parse would change, as field errors (`body.a.b.2`, pointer
 * `/a/b/2`), at most `limit` of them (then it stops: the caller says there are more). The text must be valid JSON
 * (call after it parsed); anything unexpected ends the scan with what was found. Linear in the text, with a small
 * constant: each number is read once and converted only when its digits and exponent do not settle it (scanNumber),
 * and an object's key is only decoded for a path that is reported.
 */
export function inexactNumbers(text: string, limit = Infinity): FieldError[] {
  // No regular expression screens the text first: one over the whole text costs more than this scan (a body of
  // short numbers tries it at every digit).
  const found: FieldError[] = [];
  // A loop with an explicit stack (a recursive descent would overflow on deeply nested arrays): each open container is
  // a frame holding the array index, or where the object key of the value being read starts and ends in the text.
  const frames: Array<{ index: number; keyFrom: number; keyTo: number }> = [];
  const path = () => frames.map((f) => (f.index >= 0 ? f.index : String(JSON.parse(text.slice(f.keyFrom, f.keyTo)))));
  let i = 0;
  while (i < text.length && found.length < limit) {
    const c = text.charCodeAt(i);
    if (c === 123 || c === 91) { // { [
      frames.push({ index: c === 91 ? 0 : -1, keyFrom: 0, keyTo: 0 });
      i++;
    } else if (c === 125 || c === 93) { // } ]
      frames.pop();
      i++;
    } else if (c === 44) { // ,
      const top = frames[frames.length - 1];
      if (top && top.index >= 0) top.index++;
      i++;
    } else if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (end === -1) break;
      let next = end;
      while (next < text.length && text.charCodeAt(next) <= 32) next++;
      const top = frames[frames.length - 1];
      if (text.charCodeAt(next) === 58 && top && top.index < 0) { // a key
        top.keyFrom = i;
        top.keyTo = end;
      }
      i = next;
    } else if ((c >= 48 && c <= 57) || c === 45) {
      const end = scanNumber(text, i);
      if (end < 0) {
        const literal = text.slice(i, -end - 1);
        found.push(fieldError(path(), `the number ${literal.slice(0, 40)} cannot be kept exactly (it would become ${String(Number(literal))}): send a value a double holds exactly`));
        i = -end - 1;
      } else i = end;
    } else {
      i++; // whitespace, ':', true, false, null
    }
  }
  return found;
}
