import type { Query } from '../schemas/scenario.js';
import type { FieldProblem } from './validate.js';
import type { CompiledRule, RuleFailure } from './types.js';

/**
 * A frozen copy of a query, holding only the fields of the Query schema (in its order). Plans are cached and
 * every result echoes the query, so nothing downstream may be able to change the cached one.
 */
export function frozenQuery(q: Query): Query {
  const copy: Query = { type: q.type } as Query;
  if (q.requestId !== undefined) copy.requestId = q.requestId;
  if (q.attribute !== undefined) copy.attribute = q.attribute;
  if (q.value !== undefined) copy.value = Array.isArray(q.value) ? Object.freeze(q.value.slice()) as Query['value'] : q.value;
  copy.operator = q.operator;
  if (q.context !== undefined) copy.context = q.context;
  if (q.circuitId !== undefined) copy.circuitId = q.circuitId;
  return Object.freeze(copy);
}

/** `personalData.age $gte 18`: the rule as reasons quote it (the scenario's value is not personal data). */
export function describeQuery(q: Query): string {
  if (q.operator === '$noop') return '$noop';
  return `${q.attribute ?? '(no attribute)'} ${q.operator} ${q.value === undefined ? '(no value)' : JSON.stringify(q.value)}`;
}

/** A rule whose query could not be compiled: it answers error, never a pass. */
export function invalidRule(id: string, query: Query, problems: readonly FieldProblem[]): CompiledRule {
  const messages = problems.map((p) => `this rule is invalid and cannot be evaluated: ${p.message}`);
  return {
    id,
    query,
    evaluate: (): RuleFailure => ({ status: 'error', reasons: messages.slice() }),
  };
}
