import { outcomeTrace, type TracedRun } from '../engine/index.js';
import type { ExecutionResult } from '../schemas/execution.js';
import type { RuleTrace } from '../schemas/trace.js';
import type { ExecuteInput, ScenarioStrategy } from './types.js';

/** The engine's rules, on the request's credentials. */
export interface TracingStrategy extends ScenarioStrategy {
  dryRun(input: ExecuteInput): Promise<TracedRun>;
}

export function isTracing(strategy: ScenarioStrategy): strategy is TracingStrategy {
  return 'dryRun' in strategy && typeof strategy.dryRun === 'function';
}

/** For a rule its type decided outside the engine. */
export function resultTrace(result: ExecutionResult): RuleTrace {
  const { scenarioVerifierAddress, chain, blockNumber } = result.result.result;
  if (scenarioVerifierAddress !== undefined) {
    const contract = scenarioVerifierAddress === null ? 'no verifier contract was read' : `the verifier contract ${scenarioVerifierAddress} was read`;
    const where = `${chain ? ` on ${chain}` : ''}${typeof blockNumber === 'number' ? ` at block ${blockNumber}` : ''}`;
    return outcomeTrace(result, 'chain', `the proof status of the address: ${contract}${where}`);
  }
  if (result.result.authorizationRequest !== undefined) {
    return outcomeTrace(result, 'authorizationRequest', 'pending: authorization request issued (the result\'s authorizationRequest); the wallet\'s proof decides the rule');
  }
  return outcomeTrace(result, 'rule', 'decided by its scenario type outside the rule engine (the result\'s reasons say how)');
}
