/** Only own properties are read, so `__proto__` and the like are plain keys; only canonical indices index arrays. */

const hasOwn = Object.prototype.hasOwnProperty;

export type Getter = (subject: unknown) => unknown;

const INDEX = /^(?:0|[1-9][0-9]{0,8})$/;

interface Segment {
  readonly key: string;
  /** -1 when not a canonical index. */
  readonly index: number;
}

function segment(key: string): Segment {
  return { key, index: INDEX.test(key) ? Number(key) : -1 };
}

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
