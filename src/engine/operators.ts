/**
 * Compiled once per query; nothing allocates or throws on the evaluation path. No coercion, ever: an ISO date string
 * expects an ISO date string (compared as instants), and so on. Anything else is a type mismatch: the credential
 * fails, whatever the operator ($ne and $nin included).
 */
import type { Operator, QueryValue } from '../schemas/scenario.js';
import { parseInstant } from './instant.js';

export const PASS = 0;
export const MISSING = 1;
export const MISMATCH = 2;
export const FALSE = 3;
type Code = typeof PASS | typeof MISSING | typeof MISMATCH | typeof FALSE;

export interface CompiledOperator {
  /** Applied to a present attribute value (neither undefined nor null). */
  readonly test: (v: unknown) => Code;
  readonly onMissing: Code;
  /** For type-mismatch reasons (e.g. "a number"). */
  readonly expects: string;
  readonly dates: boolean;
}

type Operand =
  | { readonly kind: 'number'; readonly n: number }
  | { readonly kind: 'date'; readonly s: string; readonly t: number }
  | { readonly kind: 'string'; readonly s: string }
  | { readonly kind: 'boolean'; readonly b: boolean };

function operand(x: unknown): Operand | undefined {
  switch (typeof x) {
    case 'number':
      return Number.isFinite(x) ? { kind: 'number', n: x } : undefined;
    case 'boolean':
      return { kind: 'boolean', b: x };
    case 'string': {
      const t = parseInstant(x, true);
      return Number.isNaN(t) ? { kind: 'string', s: x } : { kind: 'date', s: x, t };
    }
    default:
      return undefined;
  }
}

/** How an attribute value looks, never what it is (the holder's data stays out of reasons). */
export function describeKind(v: unknown, dates: boolean): string {
  if (v === undefined || v === null) return 'missing';
  if (Array.isArray(v)) return 'an array';
  switch (typeof v) {
    case 'string':
      return dates && Number.isNaN(parseInstant(v, true)) ? 'a string that is not an ISO 8601 date' : 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'a boolean';
    default:
      return 'an object';
  }
}

const EXPECTS: Record<Operand['kind'], string> = {
  number: 'a number',
  date: 'an ISO 8601 date (YYYY-MM-DD or a date-time with a time zone)',
  string: 'a string',
  boolean: 'a boolean',
};

const negate = (f: (v: unknown) => Code) => (v: unknown): Code => {
  const c = f(v);
  return c === PASS ? FALSE : c === FALSE ? PASS : c;
};

const always = (c: Code) => (): Code => c;

function scalarEq(e: Operand): (v: unknown) => Code {
  switch (e.kind) {
    case 'number': {
      const n = e.n;
      return (v) => (typeof v === 'number' ? (v === n ? PASS : FALSE) : MISMATCH);
    }
    case 'boolean': {
      const b = e.b;
      return (v) => (typeof v === 'boolean' ? (v === b ? PASS : FALSE) : MISMATCH);
    }
    case 'string': {
      const s = e.s;
      return (v) => (typeof v === 'string' ? (v === s ? PASS : FALSE) : MISMATCH);
    }
    case 'date': {
      const s = e.s;
      const t = e.t;
      // An ISO date equals a date naming the same instant; other strings compare as strings.
      return (v) => (typeof v === 'string' ? (v === s || parseInstant(v, true) === t ? PASS : FALSE) : MISMATCH);
    }
  }
}

function arrayEq(elements: readonly Operand[]): (v: unknown) => Code {
  const len = elements.length;
  const pair = elements.map(scalarEq);
  // A pair of different kinds makes the whole a mismatch: ["30"] neither equals nor differs from [30].
  return (v) => {
    if (!Array.isArray(v)) return MISMATCH;
    if (v.length !== len) return FALSE;
    let code: Code = PASS;
    let i = 0;
    for (const eq of pair) {
      const x: unknown = v[i++];
      const c = x === undefined || x === null ? MISMATCH : eq(x);
      if (c === MISMATCH) return MISMATCH;
      if (c === FALSE) code = FALSE;
    }
    return code;
  };
}

type Ordered = Extract<Operand, { kind: 'number' } | { kind: 'date' }>;

function ordered(x: unknown): Ordered | undefined {
  const o = operand(x);
  return o !== undefined && (o.kind === 'number' || o.kind === 'date') ? o : undefined;
}

function compare(op: '$lt' | '$lte' | '$gt' | '$gte', e: Ordered): (v: unknown) => Code {
  if (e.kind === 'number') {
    const n = e.n;
    switch (op) {
      case '$lt': return (v) => (typeof v === 'number' ? (v < n ? PASS : FALSE) : MISMATCH);
      case '$lte': return (v) => (typeof v === 'number' ? (v <= n ? PASS : FALSE) : MISMATCH);
      case '$gt': return (v) => (typeof v === 'number' ? (v > n ? PASS : FALSE) : MISMATCH);
      case '$gte': return (v) => (typeof v === 'number' ? (v >= n ? PASS : FALSE) : MISMATCH);
    }
  }
  const t = e.t;
  const at = (v: unknown): number => (typeof v === 'string' ? parseInstant(v, true) : NaN);
  switch (op) {
    case '$lt': return (v) => { const x = at(v); return Number.isNaN(x) ? MISMATCH : x < t ? PASS : FALSE; };
    case '$lte': return (v) => { const x = at(v); return Number.isNaN(x) ? MISMATCH : x <= t ? PASS : FALSE; };
    case '$gt': return (v) => { const x = at(v); return Number.isNaN(x) ? MISMATCH : x > t ? PASS : FALSE; };
    case '$gte': return (v) => { const x = at(v); return Number.isNaN(x) ? MISMATCH : x >= t ? PASS : FALSE; };
  }
}

function between(lo: Ordered, hi: Ordered): (v: unknown) => Code {
  if (lo.kind === 'number' && hi.kind === 'number') {
    const a = lo.n;
    const b = hi.n;
    return (v) => (typeof v === 'number' ? (v >= a && v <= b ? PASS : FALSE) : MISMATCH);
  }
  if (lo.kind === 'date' && hi.kind === 'date') {
    const a = lo.t;
    const b = hi.t;
    return (v) => {
      const x = typeof v === 'string' ? parseInstant(v, true) : NaN;
      return Number.isNaN(x) ? MISMATCH : x >= a && x <= b ? PASS : FALSE;
    };
  }
  return always(MISMATCH); // unreachable after validation: mixed bounds
}

/**
 * $in: numbers and strings live in separate Sets so 30 never matches "30". An attribute of a kind the list does not
 * hold is a type mismatch, not "not in": a string "840" must not slip through `$nin [840]`.
 */
function membership(list: readonly Operand[]): (v: unknown) => Code {
  const numbers = new Set<number>();
  const strings = new Set<string>();
  const instants = new Set<number>();
  for (const e of list) {
    if (e.kind === 'number') numbers.add(e.n);
    else if (e.kind === 'string') strings.add(e.s);
    else if (e.kind === 'date') {
      strings.add(e.s);
      instants.add(e.t);
    }
  }
  const takesNumbers = numbers.size > 0;
  const takesStrings = strings.size > 0;
  const hasDates = instants.size > 0;
  const hasString = (s: string): boolean => strings.has(s) || (hasDates && instants.has(parseInstant(s, true)));
  return (v) => {
    if (typeof v === 'string') return takesStrings ? (hasString(v) ? PASS : FALSE) : MISMATCH;
    if (typeof v === 'number') return takesNumbers ? (numbers.has(v) ? PASS : FALSE) : MISMATCH;
    if (!Array.isArray(v)) return MISMATCH;
    let found = false;
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (typeof x === 'string') {
        if (!takesStrings) return MISMATCH;
        if (!found && hasString(x)) found = true;
      } else if (typeof x === 'number') {
        if (!takesNumbers) return MISMATCH;
        if (!found && numbers.has(x)) found = true;
      } else {
        return MISMATCH; // an element no list can hold: the array cannot be judged
      }
    }
    return found ? PASS : FALSE;
  };
}

function membershipExpects(list: readonly Operand[]): string {
  const numbers = list.some((e) => e.kind === 'number');
  const strings = list.some((e) => e.kind !== 'number');
  if (numbers && strings) return 'a string, a number, or an array of strings and numbers';
  return numbers ? 'a number or an array of numbers' : 'a string or an array of strings';
}

/** undefined when the value does not fit the operator (validateScenarioRules reports those). Not for $noop. */
export function compileOperator(op: Operator, value: QueryValue | undefined): CompiledOperator | undefined {
  switch (op) {
    case '$eq':
    case '$ne': {
      let test: (v: unknown) => Code;
      let expects: string;
      if (Array.isArray(value)) {
        const elements: Operand[] = [];
        for (const x of value) {
          const o = operand(x);
          if (o === undefined || o.kind === 'boolean') return undefined;
          elements.push(o);
        }
        test = arrayEq(elements);
        expects = 'an array';
      } else {
        const o = operand(value);
        if (o === undefined) return undefined;
        test = scalarEq(o);
        expects = o.kind === 'date' ? 'a string' : EXPECTS[o.kind];
      }
      return { test: op === '$eq' ? test : negate(test), onMissing: MISSING, expects, dates: false };
    }
    case '$lt':
    case '$lte':
    case '$gt':
    case '$gte': {
      const o = ordered(value);
      if (o === undefined) return undefined;
      return { test: compare(op, o), onMissing: MISSING, expects: EXPECTS[o.kind], dates: o.kind === 'date' };
    }
    case '$in':
    case '$nin': {
      if (!Array.isArray(value) || value.length === 0) return undefined;
      const list: Operand[] = [];
      for (const x of value) {
        const o = operand(x);
        if (o === undefined || o.kind === 'boolean') return undefined;
        list.push(o);
      }
      const test = membership(list);
      return {
        test: op === '$in' ? test : negate(test),
        onMissing: MISSING,
        expects: membershipExpects(list),
        dates: false,
      };
    }
    case '$exists': {
      if (typeof value !== 'boolean') return undefined;
      return value
        ? { test: always(PASS), onMissing: MISSING, expects: 'any value', dates: false }
        : { test: always(FALSE), onMissing: PASS, expects: 'any value', dates: false };
    }
    case '$between':
    case '$nonbetween': {
      if (!Array.isArray(value) || value.length !== 2) return undefined;
      const lo = ordered(value[0]);
      const hi = ordered(value[1]);
      if (lo === undefined || hi === undefined || lo.kind !== hi.kind) return undefined;
      const test = between(lo, hi);
      return {
        test: op === '$between' ? test : negate(test),
        onMissing: MISSING,
        expects: EXPECTS[lo.kind],
        dates: lo.kind === 'date',
      };
    }
    default:
      return undefined;
  }
}
