import type { QueryConfiguration, ScenarioType } from '../schemas/scenario.js';
import { frozenQuery } from './query.js';
import type { CompiledRule, Evaluator, RuleFailure } from './types.js';

/**
 * An evaluator for a verification method that does not exist yet: every rule answers `error` (never a pass)
 * with a reason saying so. Replace it with the real evaluator when the method lands.
 */
export function unavailableEvaluator(objectType: ScenarioType, method: string): Evaluator {
  const reason = `${method} is not available yet, so this rule cannot be decided`;
  return {
    objectType,
    compileRule(configuration: QueryConfiguration): CompiledRule {
      return {
        id: configuration.id,
        query: frozenQuery(configuration.query),
        evaluate: (): RuleFailure => ({ status: 'error', reasons: [reason] }),
      };
    },
  };
}
