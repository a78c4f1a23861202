/**
 * The rule engine: pure (no I/O, no clock, no logger). validateScenarioRules at create/patch time,
 * compilePlan once per scenario revision, runPlan on every execute call.
 */
export { validateScenarioRules, type FieldProblem } from './validate.js';
export { compilePlan, runPlan } from './plan.js';
export type { Plan } from './types.js';
