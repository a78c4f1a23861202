import type { Query } from '../schemas/scenario.js';
import type { FieldProblem } from './validate.js';
import type { CompiledRule, RuleFailure } from './types.js';

/** Frozen, with only the Query schema's fields in its order: plans are cached, so nothing downstream may change it. */
export function frozenQuery(q: Query): QueryEcho {
  let value = q.value;
  if (Array.isArray(value)) Object.freeze(value = value.slice());
  const copy: Query = {
    type: q.type,
    ...(q.requestId !== undefined && { requestId: q.requestId }),
    ...(q.attribute !== undefined && { attribute: q.attribute }),
    ...(value !== undefined && { value }),
    operator: q.operator,
  };
  if (q.context !== undefined) copy.context = q.context;
  if (q.circuitId !== undefined) copy.circuitId = q.circuitId;
  return echoQuery(Object.freeze(copy));
}

/** JSON bytes quoted whole; longer values are described, or an answer grows with values x rules x credentials. */
export const VALUE_QUOTE_BYTES = 128;

export function quoteValue(value: NonNullable<Query['value']>): string {
  const text = JSON.stringify(value);
  if (Buffer.byteLength(text) <= VALUE_QUOTE_BYTES) return text;
  return Array.isArray(value) ? `(a list of ${value.length} values)` : `(a ${typeof value} of ${String(value).length} characters)`;
}

/** `valueCount` is there when `value` was abbreviated. */
export type QueryEcho = Query & { valueCount?: number };

/** A list over VALUE_QUOTE_BYTES keeps the first values that fit; the whole rule is in the scenario's revision. Idempotent. */
export function echoQuery(q: QueryEcho): QueryEcho {
  const value = q.value;
  if (!Array.isArray(value) || Buffer.byteLength(JSON.stringify(value)) <= VALUE_QUOTE_BYTES) return q;
  const kept: Array<string | number> = [];
  let bytes = 2; // the brackets
  for (const item of value) {
    bytes += Buffer.byteLength(JSON.stringify(item)) + (kept.length > 0 ? 1 : 0);
    if (bytes > VALUE_QUOTE_BYTES) break;
    kept.push(item);
  }
  const echo: QueryEcho = {
    type: q.type,
    ...(q.requestId !== undefined && { requestId: q.requestId }),
    ...(q.attribute !== undefined && { attribute: q.attribute }),
    value: kept,
    valueCount: value.length,
    operator: q.operator,
  };
  if (q.context !== undefined) echo.context = q.context;
  if (q.circuitId !== undefined) echo.circuitId = q.circuitId;
  return Object.freeze(echo);
}

/** `personalData.age $gte 18`; the scenario's value is not personal data. */
export function describeQuery(q: Query): string {
  if (q.operator === '$noop') return '$noop';
  return `${q.attribute ?? '(no attribute)'} ${q.operator} ${q.value === undefined ? '(no value)' : quoteValue(q.value)}`;
}

/** Errors, never passes. */
export function invalidRule(id: string, query: Query, problems: readonly FieldProblem[]): CompiledRule {
  const messages = problems.map((p) => `this rule is invalid and cannot be evaluated: ${p.message}`);
  return {
    id,
    query,
    evaluate: (): RuleFailure => ({ status: 'error', reasons: messages.slice() }),
  };
}
