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

/** Any object's own keys read as unknown values (arrays are told apart before). */
const isObject = (x: unknown): x is Readonly<Record<string, unknown>> => typeof x === 'object' && x !== null;

function step(cur: unknown, seg: Segment): unknown {
  if (!isObject(cur)) return undefined;
  if (Array.isArray(cur)) {
    return seg.index >= 0 && seg.index < cur.length ? cur[seg.index] : undefined;
  }
  return hasOwn.call(cur, seg.key) ? cur[seg.key] : undefined;
}

function splitPath(attribute: string): string[] {
  return attribute.split('.');
}

export function compilePath(attribute: string): Getter {
  const segs = splitPath(attribute).map(segment);
  const [a, b] = segs;
  // One and two segments (most attributes) without the loop.
  if (segs.length === 1 && a !== undefined) return (subject) => step(subject, a);
  if (segs.length === 2 && a !== undefined && b !== undefined) return (subject) => step(step(subject, a), b);
  return (subject) => {
    let cur = subject;
    for (const seg of segs) {
      cur = step(cur, seg);
      if (cur === undefined) return undefined;
    }
    return cur;
  };
}
