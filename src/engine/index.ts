/** The rule engine: pure (no I/O, no clock, no logger). */
export { checkScenarioRules, type FieldProblem } from './validate.js';
export type { QueryPolicies, QueryPolicy } from './policy.js';
export { compilePlan, runPlan } from './plan.js';
export type { Evaluator, Evaluators, Plan, TypeDeclarations } from './types.js';
export { challengeQueryEvaluator } from './challenge-query.js';
export { outcomeTrace, tracePlan, type TracedRun } from './trace.js';
