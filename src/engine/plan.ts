import type { Scenario } from '../schemas/scenario.js';
import type { ExecutionResult } from '../schemas/execution.js';
import { prepareRun } from './credentials.js';
import { frozenQuery } from './query.js';
import { typeRules } from './policy.js';
import { executionResult, failed } from './result.js';
import type { CompileContext, CompiledRule, Plan, RuleFailure, RunInput, TypeDeclarations } from './types.js';

const hasOwn = Object.prototype.hasOwnProperty;

const NO_REASONS: string[] = [];
Object.freeze(NO_REASONS);
const VALID = Object.freeze({ is_valid: true as const, reasons: NO_REASONS });

/**
 * Once per scenario revision; assumes checkScenarioRules passed. A rule failing its query checks compiles to an invalid
 * rule. Types without an evaluator in `types` are decided by their strategies; runPlan answers `error` for those.
 */
export function compilePlan(scenarioId: string, revision: number, scenario: Scenario, types: TypeDeclarations): Plan {
  const { evaluators, policies } = types;
  const type = scenario.type;
  const slots = new Map<string, number>();
  const context: CompileContext = {
    ...(policies !== undefined && { rules: typeRules(type, policies) }),
    slotFor(credentialType: string): number {
      let slot = slots.get(credentialType);
      if (slot === undefined) {
        slot = slots.size;
        slots.set(credentialType, slot);
      }
      return slot;
    },
  };
  const evaluator = hasOwn.call(evaluators, type) ? evaluators[type] : undefined;
  const rules: CompiledRule[] = scenario.queryConfigurations.map((qc) => {
    if (evaluator !== undefined) return evaluator.compileRule(qc, context);
    const reasons = [`scenario type ${String(type)} is not decided by the rule engine, so this rule cannot be decided here`];
    return { id: qc.id, query: frozenQuery(qc.query), evaluate: (): RuleFailure => ({ status: 'error', reasons: reasons.slice() }) };
  });
  return { scenarioId, revision, name: scenario.name, type, rules, credentialSlots: slots };
}

/** One ExecutionResult per query configuration, in the scenario's order. Never throws on schema-valid input. */
export function runPlan(plan: Plan, input: RunInput): ExecutionResult[] {
  const run = prepareRun(plan.credentialSlots, input.credentials, input.now, input.trust);
  const rules = plan.rules;
  const results: ExecutionResult[] = new Array(rules.length);
  const head = { objectType: plan.type, name: plan.name, scenarioId: plan.scenarioId, address: input.address, executionId: input.executionId };
  const extras = input.extras;
  let i = 0;
  for (const rule of rules) {
    const failure = rule.evaluate(run);
    results[i++] = failure === null
      ? executionResult(head, rule, 'valid', VALID, extras)
      : executionResult(head, rule, failure.status, failed(failure.reasons), extras);
  }
  return results;
}
