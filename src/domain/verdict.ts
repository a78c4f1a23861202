import type { RuleStatus } from '../schemas/execution.js';

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
