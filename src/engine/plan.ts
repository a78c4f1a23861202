import type { Scenario, ScenarioType } from '../schemas/scenario.js';
import type { ExecutionResult } from '../schemas/execution.js';
import { challengeQueryEvaluator } from './challenge-query.js';
import { prepareRun } from './credentials.js';
import { offChainZkpEvaluator } from './offchain-zkp.js';
import { onChainZkpEvaluator } from './onchain-zkp.js';
import { frozenQuery } from './query.js';
import type { CompiledRule, Evaluator, Plan, RuleFailure, RunInput } from './types.js';

/** One evaluator per objectType: replace an entry to change how that scenario type is verified. */
export const evaluators: Readonly<Record<ScenarioType, Evaluator>> = Object.freeze({
  ChallengeQuery: challengeQueryEvaluator,
  OffChainZKP: offChainZkpEvaluator,
  OnChainZKP: onChainZkpEvaluator,
});

const hasOwn = Object.prototype.hasOwnProperty;

/** The inner result of every valid rule: one frozen object, nothing to allocate on the passing path. */
const VALID = Object.freeze({ is_valid: true as const, reasons: Object.freeze([]) as unknown as string[] });

/** Compile once per scenario revision (the caller caches it by id+revision). Assumes validateScenarioRules passed. */
export function compilePlan(scenarioId: string, revision: number, scenario: Scenario): Plan {
  const type = scenario.type;
  const slots = new Map<string, number>();
  const context = {
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
    const reasons = [`scenario type ${String(type)} has no evaluator, so this rule cannot be decided`];
    return { id: qc.id, query: frozenQuery(qc.query), evaluate: (): RuleFailure => ({ status: 'error', reasons: reasons.slice() }) };
  });
  return { scenarioId, revision, name: scenario.name, type, rules, credentialSlots: slots };
}

/** One ExecutionResult per query configuration, in the scenario's order. Never throws on schema-valid input. */
export function runPlan(plan: Plan, input: RunInput): ExecutionResult[] {
  const run = prepareRun(plan.credentialSlots, input.credentials, input.now, input.trust);
  const rules = plan.rules;
  const results: ExecutionResult[] = new Array(rules.length);
  const { type, name, scenarioId } = plan;
  const { address, executionId } = input;
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i];
    const failure = rule.evaluate(run);
    results[i] = {
      objectType: type,
      objectId: rule.id,
      name,
      address,
      scenarioId,
      executionId,
      result: {
        result: failure === null
          ? VALID
          : { is_valid: false, reasons: failure.reasons },
        executionId,
        status: failure === null ? 'valid' : failure.status,
        query: rule.query,
      },
    };
  }
  return results;
}
