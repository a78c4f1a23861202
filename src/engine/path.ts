/**
 * Attribute paths: a dot path inside credentialSubject, split once at compile time.
 * Only own properties are read, so `__proto__`, `constructor`, `toString` and the like are plain keys: missing
 * unless the JSON document itself holds them. A segment that is a canonical array index (0, 1, ... without
 * leading zeros) indexes an array; any other segment applied to an array (e.g. `length`) is missing, and so is
 * any segment applied to a string, number, boolean or null. Never throws.
 */

const hasOwn = Object.prototype.hasOwnProperty;

/** Reads the value at the path, or undefined when any step is missing. */
export type Getter = (subject: unknown) => unknown;

const INDEX = /^(?:0|[1-9][0-9]{0,8})$/;

interface Segment {
  readonly key: string;
  /** The array index this segment names, or -1 when it is not a canonical index. */
  readonly index: number;
}

function segment(key: string): Segment {
  return { key, index: INDEX.test(key) ? Number(key) : -1 };
}

function step(cur: unknown, seg: Segment): unknown {
  if (typeof cur !== 'object' || cur === null) return undefined;
  if (Array.isArray(cur)) {
    return seg.index >= 0 && seg.index < cur.length ? cur[seg.index] : undefined;
  }
  return hasOwn.call(cur, seg.key) ? (cur as Record<string, unknown>)[seg.key] : undefined;
}

/**
 * The same walk as compilePath's getter, as JavaScript statements for generated code (see specialisedEvaluate in
 * ./challenge-query.ts): they replace the value of the variable `v` by the value at the path. Keys are embedded as
 * string literals, so each read is a property access of its own (a monomorphic inline cache) instead of one shared
 * keyed lookup; the names of pathScope must be in scope. Keys come from scenarios: JSON.stringify makes any of them a
 * safe string literal.
 */
/** The names pathSource's statements use, and their values: a generated function takes them as parameters. */
export const pathScope = { hasOwn, isArray: Array.isArray } as const;

export function pathSource(attribute: string): string {
  return splitPath(attribute)
    .map(segment)
    .map(({ key, index }) => {
      const arrayStep = index >= 0 ? `(${index} < v.length ? v[${index}] : undefined)` : 'undefined';
      const k = JSON.stringify(key);
      return `v = typeof v !== 'object' || v === null ? undefined : isArray(v) ? ${arrayStep} : hasOwn.call(v, ${k}) ? v[${k}] : undefined;`;
    })
    .join('\n');
}

export function splitPath(attribute: string): string[] {
  return attribute.split('.');
}

export function compilePath(attribute: string): Getter {
  const segs = splitPath(attribute).map(segment);
  if (segs.length === 1) {
    const a = segs[0];
    return (subject) => step(subject, a);
  }
  if (segs.length === 2) {
    const a = segs[0];
    const b = segs[1];
    return (subject) => step(step(subject, a), b);
  }
  return (subject) => {
    let cur = subject;
    for (let i = 0; i < segs.length; i++) {
      cur = step(cur, segs[i]);
      if (cur === undefined) return undefined;
    }
    return cur;
  };
}
