import type { ExecutionResult, RuleStatus } from '../schemas/execution.js';
import type { Query, ScenarioType } from '../schemas/scenario.js';

/** What every result of one execute shares: the scenario, the address and the execution. */
export interface ResultHead {
  readonly objectType: ScenarioType;
  readonly name: string;
  readonly scenarioId: string;
  readonly address: string;
  readonly executionId: string;
}

/** The inner verdict of one rule (the contract's `result.result`), with the OnChainZKP fields where they apply. */
export type Verdict = ExecutionResult['result']['result'];

/** Fields a scenario type adds beside the verdict: the authorization request of a pending OffChainZKP rule. */
export interface ResultExtras {
  authorizationRequest?: object;
}

/**
 * The one place an ExecutionResult is built (the engine's rules, OnChainZKP reads, OffChainZKP requests, answers and
 * expiries all come here): the shape existing frontends parse, with `is_valid` true exactly when `status` is valid.
 */
export function executionResult(
  head: ResultHead, rule: { readonly id: string; readonly query: Query }, status: RuleStatus, verdict: Verdict,
  extras?: ResultExtras,
): ExecutionResult {
  return {
    objectType: head.objectType,
    objectId: rule.id,
    name: head.name,
    address: head.address,
    scenarioId: head.scenarioId,
    executionId: head.executionId,
    result: {
      result: verdict,
      executionId: head.executionId,
      status,
      query: rule.query,
      ...(extras?.authorizationRequest !== undefined && { authorizationRequest: extras.authorizationRequest }),
    },
  };
}

/** The same rule's result with a new verdict (an OffChainZKP answer or expiry); the authorization request is dropped. */
export function withVerdict(r: ExecutionResult, status: RuleStatus, verdict: Verdict): ExecutionResult {
  return executionResult(r, { id: r.objectId, query: r.result.query }, status, verdict);
}

/** A verdict that is not a pass: is_valid false with its reasons. */
export const failed = (reasons: string[]): Verdict => ({ is_valid: false, reasons });
