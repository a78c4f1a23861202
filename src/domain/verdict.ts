import type { RuleStatus } from '../schemas/execution.js';

/**
 * An execution's overall verdict, folded from its rules' statuses: `failed` when any rule is not-valid (nothing
 * later can make it pass), else `error` when any could not be decided, else `pending` when any awaits a proof, else
 * `passed` (every rule valid).
 */
export type Verdict = 'passed' | 'failed' | 'error' | 'pending';

export function verdictOf(results: readonly { status: RuleStatus }[]): Verdict {
  let verdict: Verdict = 'passed';
  for (const { status } of results) {
    if (status === 'not-valid') return 'failed';
    if (status === 'error') verdict = 'error';
    else if (status === 'pending' && verdict === 'passed') verdict = 'pending';
  }
  return verdict;
}
