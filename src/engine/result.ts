import type { ExecutionResult, RuleStatus } from '../schemas/execution.js';
import type { ScenarioType } from '../schemas/scenario.js';
import type { QueryEcho } from './query.js';
import type { ResultExtraField, ResultExtras } from './types.js';

export type { ResultExtraField, ResultExtras };

export interface ResultHead {
  readonly objectType: ScenarioType;
  readonly name: string;
  readonly scenarioId: string;
  readonly address: string;
  readonly executionId: string;
}

export type Verdict = ExecutionResult['result']['result'];

type RuleResult = ExecutionResult['result'];

/** The one place an ExecutionResult is built: `is_valid` is true exactly when `status` is valid. */
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
      query: rule.query,
      ...extras,
    },
  };
}

/** The type's extra fields are dropped. */
export function withVerdict(r: ExecutionResult, status: RuleStatus, verdict: Verdict): ExecutionResult {
  return executionResult(r, { id: r.objectId, query: r.result.query }, status, verdict);
}

/** Over it results are compacted; MAX_RULES_BYTES bounds what is left (docs/decisions.md, Bounded answers). */
export const MAX_RESULTS_BYTES = 1024 * 1024;

/** Each result keeps its first reason; only the first keeps the `firstOnly` fields (the same for every result). */
export function compactResults(results: readonly ExecutionResult[], firstOnly: readonly ResultExtraField[]): ExecutionResult[] {
  return results.map((r, i) => {
    const { reasons } = r.result.result;
    const cut = reasons.length > 2;
    const dropped = i > 0 ? firstOnly.filter((field) => r.result[field] !== undefined) : [];
    if (!cut && dropped.length === 0) return r;
    const inner: RuleResult = { ...r.result };
    for (const field of dropped) delete inner[field];
    return {
      ...r,
      result: {
        ...inner,
        result: cut
          ? { ...inner.result, reasons: [...reasons.slice(0, 1), `${reasons.length - 1} more reasons not listed: this execution's results were over ${MAX_RESULTS_BYTES} bytes (send fewer credentials to see them)`] }
          : inner.result,
      },
    };
  });
}

export const failed = (reasons: string[]): Verdict => ({ is_valid: false, reasons });
