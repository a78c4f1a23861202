import type { ExecutionResult, RuleStatus } from '../schemas/execution.js';
import type { ScenarioType } from '../schemas/scenario.js';
import type { QueryEcho } from './query.js';

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
 * expiries all come here): the shape existing frontends parse, with `is_valid` true exactly when `status` is valid. The
 * query is echoed as given: a compiled rule's (frozenQuery), with long value lists abbreviated.
 */
export function executionResult(
  head: ResultHead, rule: { readonly id: string; readonly query: QueryEcho }, status: RuleStatus, verdict: Verdict,
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
      query: rule.query, // a compiled rule's query is its echo (frozenQuery): long value lists abbreviated
      ...(extras?.authorizationRequest !== undefined && { authorizationRequest: extras.authorizationRequest }),
    },
  };
}

/** The same rule's result with a new verdict (an OffChainZKP answer or expiry); the authorization request is dropped. */
export function withVerdict(r: ExecutionResult, status: RuleStatus, verdict: Verdict): ExecutionResult {
  return executionResult(r, { id: r.objectId, query: r.result.query }, status, verdict);
}

/**
 * The most an execution's results take as JSON: the execute answer and the audit record it keeps. Results over it
 * are compacted (compactResults); the create/PATCH cap on a scenario's rules (MAX_RULES_BYTES) bounds what is left
 * (docs/decisions.md, Bounded answers: under it for real scenarios, ~1.2 MiB for the most contrived ones).
 */
export const MAX_RESULTS_BYTES = 1024 * 1024;

/**
 * Results too large to answer and record (over MAX_RESULTS_BYTES): each result's reasons keep their first line (the
 * rule, as the header says it) and a count of the others, and only the first result carries the OffChainZKP
 * authorization request (the same request for every rule).
 */
export function compactResults(results: readonly ExecutionResult[]): ExecutionResult[] {
  return results.map((r, i) => {
    const { reasons } = r.result.result;
    const cut = reasons.length > 2;
    const dropRequest = i > 0 && r.result.authorizationRequest !== undefined;
    if (!cut && !dropRequest) return r;
    const { authorizationRequest, ...inner } = r.result;
    return {
      ...r,
      result: {
        ...inner,
        ...(!dropRequest && authorizationRequest !== undefined && { authorizationRequest }),
        result: cut
          ? { ...inner.result, reasons: [...reasons.slice(0, 1), `${reasons.length - 1} more reasons not listed: this execution's results were over ${MAX_RESULTS_BYTES} bytes (send fewer credentials to see them)`] }
          : inner.result,
      },
    };
  });
}

/** A verdict that is not a pass: is_valid false with its reasons. */
export const failed = (reasons: string[]): Verdict => ({ is_valid: false, reasons });
