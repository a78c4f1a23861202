/** Dry runs' traces, built apart from runPlan so that execute pays nothing. Credentials named by position and id only. */
import type { ExecutionResult } from '../schemas/execution.js';
import { TRACE_CHECKS, TRUST_CHECKS, type CheckOutcome, type CheckTrace, type CredentialTrace, type RuleTrace, type TraceCheck } from '../schemas/trace.js';
import { failedDateCheck, isUsable, prepareRun } from './credentials.js';
import { runPlan } from './plan.js';
import type { Plan, PreparedCredential, RuleExplanation, RunInput } from './types.js';

/** As many as a rule's reasons name. */
const TRACE_CREDENTIALS = 10;

const DATE_CHECKS = ['dates', 'issued', 'expiry'] as const;
const ORDER: ReadonlyMap<TraceCheck, number> = new Map(TRACE_CHECKS.map((check, i) => [check, i]));

export interface TracedRun {
  results: ExecutionResult[];
  trace: RuleTrace[];
}

/** runPlan's results, as they are, and how each rule reached its own. */
export function tracePlan(plan: Plan, input: RunInput): TracedRun {
  const results = runPlan(plan, input);
  const run = prepareRun(plan.credentialSlots, input.credentials, input.now, input.trust);
  const trace = plan.rules.map((rule, i): RuleTrace => {
    const status = results[i]?.result.status ?? 'error';
    const explanation: RuleExplanation = rule.explain?.(run) ?? { credentials: [], decidingCheck: { check: 'rule' } };
    return { ruleId: rule.id, status, ...explanation };
  });
  return { results, trace };
}

/** A rule decided outside the engine: `check` decides where it is not valid. */
export function outcomeTrace(result: ExecutionResult, check: TraceCheck, note: string): RuleTrace {
  const status = result.result.status;
  const decided = status === 'not-valid' || status === 'error';
  return { ruleId: result.objectId, status, credentials: [], ...(decided && { decidingCheck: { check } }), note };
}

function credentialName(c: PreparedCredential): { index: number; id?: string } {
  const id: unknown = c.credential.id;
  return typeof id === 'string' ? { index: c.index, id } : { index: c.index };
}

/** Dates first, as isUsable; then the verifier's checks. */
function credentialChecks(c: PreparedCredential, now: number): CheckTrace[] {
  const checks: CheckTrace[] = [];
  const failedDate = failedDateCheck(c, now);
  let after = false;
  for (const check of DATE_CHECKS) {
    checks.push({ check, outcome: after ? 'skipped' : check === failedDate ? 'fail' : 'pass' });
    if (check === failedDate) after = true;
  }
  const trust = c.trust;
  if (trust === undefined) {
    checks.push({ check: 'verification', outcome: 'skipped' });
  } else if (trust.ok) {
    for (const check of TRUST_CHECKS) checks.push({ check, outcome: 'pass' });
  } else {
    const failure: CheckOutcome = trust.status === 'error' ? 'undecided' : 'fail';
    if (trust.check === undefined) {
      checks.push({ check: 'verification', outcome: failure });
    } else {
      after = false;
      for (const check of TRUST_CHECKS) {
        checks.push({ check, outcome: after ? 'skipped' : check === trust.check ? failure : 'pass' });
        if (check === trust.check) after = true;
      }
    }
  }
  return checks;
}

export interface QueryChecks {
  /** Listed as skipped for an unusable credential. */
  readonly names: readonly TraceCheck[];
  /** All pass exactly when evaluate takes the credential. */
  run(c: PreparedCredential): CheckTrace[];
}

/** The credentials it considered and what decided, as anyUsable (challenge-query.ts) decides. */
export function explainAnyUsable(credentialType: string, list: readonly PreparedCredential[] | undefined, now: number, query: QueryChecks): RuleExplanation {
  if (list === undefined || list.length === 0) return { credentialType, credentials: [], decidingCheck: { check: 'presented' } };
  const credentials: CredentialTrace[] = [];
  let undecided: { check: TraceCheck; credential: number } | undefined;
  let closest: { check: TraceCheck; credential: number; rank: number } | undefined;
  for (const c of list) {
    const usable = isUsable(c, now);
    const checks = credentialChecks(c, now);
    for (const check of usable ? query.run(c) : query.names.map((name): CheckTrace => ({ check: name, outcome: 'skipped' }))) checks.push(check);
    const deciding = checks.find((check) => check.outcome === 'fail' || check.outcome === 'undecided');
    const name = credentialName(c);
    if (credentials.length < TRACE_CREDENTIALS) credentials.push({ ...name, checks, ...(deciding && { decidingCheck: deciding.check }) });
    if (usable && deciding === undefined) return { credentialType, credentials, decidingCredential: name };
    if (deciding === undefined) continue;
    if (deciding.outcome === 'undecided') undecided ??= { check: deciding.check, credential: c.index };
    const rank = ORDER.get(deciding.check) ?? 0;
    if (closest === undefined || rank > closest.rank) closest = { check: deciding.check, credential: c.index, rank };
  }
  const notListed = list.length - credentials.length;
  const decider = undecided ?? closest;
  return {
    credentialType,
    credentials,
    ...(notListed > 0 && { credentialsNotListed: notListed }),
    ...(decider && { decidingCheck: { check: decider.check, credential: decider.credential } }),
  };
}
