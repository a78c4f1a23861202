import { isRecord } from '../schemas/json.js';

/** RFC 7396 JSON Merge Patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return patch;
  const result: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/** The smallest merge patch from `before` to `after` (no patch can add a null member). */
export function mergePatchOf(before: unknown, after: unknown): unknown {
  if (!isRecord(before) || !isRecord(after)) return after;
  const patch: Record<string, unknown> = {};
  for (const key of Object.keys(before)) if (!Object.hasOwn(after, key)) patch[key] = null;
  for (const [key, value] of Object.entries(after)) {
    if (!Object.hasOwn(before, key)) patch[key] = value;
    else if (!sameJson(before[key], value)) patch[key] = mergePatchOf(before[key], value);
  }
  return patch;
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, k) => sameJson(v, b[k]));
  if (!isRecord(a) || !isRecord(b) || Array.isArray(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]));
}
