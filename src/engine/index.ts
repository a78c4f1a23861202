/** The rule engine: pure (no I/O, no clock, no logger). */
export { validateScenarioRules, type FieldProblem } from './validate.js';
export { compilePlan, runPlan } from './plan.js';
export type { Plan } from './types.js';
