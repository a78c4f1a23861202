/**
 * The rule engine: pure (no I/O, no clock, no logger). validateScenarioRules at create/patch time,
 * compilePlan once per scenario revision, runPlan on every execute call.
 */
export { validateScenarioRules, type FieldProblem } from './validate.js';
export { compilePlan, runPlan, evaluators } from './plan.js';
export type { Plan, RunInput, CompiledRule, RuleFailure, RunContext, Evaluator, CompileContext, PreparedCredential } from './types.js';
export { parseInstant } from './instant.js';
