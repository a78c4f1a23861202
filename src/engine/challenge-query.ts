/** Reasons, built on the failure path only, never quote attribute values. Closures, not generated code: docs/decisions.md. */
import type { QueryConfiguration } from '../schemas/scenario.js';
import { isUndecided, isUsable, label, unusableReason } from './credentials.js';
import { compileOperator, describeKind, FALSE, MISMATCH, MISSING, PASS } from './operators.js';
import { compilePath, type Getter } from './path.js';
import { describeQuery, frozenQuery, invalidRule, quoteValue } from './query.js';
import { explainAnyUsable, type QueryChecks } from './trace.js';
import type { CheckTrace } from '../schemas/trace.js';
import type { CompileContext, CompiledRule, Evaluator, PreparedCredential, RuleFailure, RunContext } from './types.js';
import { checkQuery } from './validate.js';

function compileRule(configuration: QueryConfiguration, context: CompileContext): CompiledRule {
  const id = configuration.id;
  const q = configuration.query;
  const problems = checkQuery(q, '', context.rules);
  const query = frozenQuery(q);
  if (problems.length > 0) return invalidRule(id, query, problems);

  const slot = context.slotFor(q.type);
  const header = q.operator === '$noop'
    ? `expected a usable ${q.type} credential ($noop)`
    : `expected a usable ${q.type} credential with ${describeQuery(q)}`;
  const noCredential = `no credential of type ${q.type} was presented`;
  const more = (n: number) => `${n} more credential${n === 1 ? '' : 's'} of type ${q.type} did not pass either (at most ${CREDENTIAL_REASONS} are listed)`;

  if (q.operator === '$noop') return anyUsable(id, query, slot, { header, noCredential, more }, () => PASS, () => 'usable', NOOP_CHECKS);

  const { attribute, value } = q;
  const op = compileOperator(q.operator, value);
  // checkQuery found no problem, so none of these holds
  if (attribute === undefined || value === undefined || op === undefined) return invalidRule(id, query, [{ pointer: '', message: 'the query does not compile' }]);
  const get: Getter = compilePath(attribute);
  const test = op.test;
  const onMissing = op.onMissing;
  const falseText = q.operator === '$exists' && q.value === false
    ? `${attribute} is present (expected $exists false)`
    : `${attribute} is not ${q.operator} ${quoteValue(value)}`;

  /** The query's outcome code for one credential. */
  const outcome = (c: PreparedCredential): number => {
    const v = get(c.credential.credentialSubject);
    return v === undefined || v === null ? onMissing : test(v);
  };

  /** Why a usable credential fails the query. */
  const why = (c: PreparedCredential): string => {
    switch (outcome(c)) {
      case MISSING: return `${attribute} is missing`;
      case MISMATCH: {
        const kind = describeKind(get(c.credential.credentialSubject), op.dates);
        return `type mismatch: ${attribute} is ${kind}, expected ${op.expects}`;
      }
      case FALSE: return falseText;
      default: return 'satisfies the query'; // unreachable: the rule would have passed
    }
  };

  const missingText = `${attribute} is missing`;
  const typeText = `expected ${op.expects}`;
  const existsChecks: QueryChecks = {
    names: ['value'],
    run: (c) => [outcome(c) === PASS ? PASSED_VALUE : { check: 'value', outcome: 'fail', reason: outcome(c) === MISSING ? missingText : falseText }],
  };
  const valueChecks: QueryChecks = {
    names: ['attribute', 'type', 'value'],
    run(c): CheckTrace[] {
      switch (outcome(c)) {
        case PASS: return [PASSED_ATTRIBUTE, PASSED_TYPE, PASSED_VALUE];
        case MISSING: return [{ check: 'attribute', outcome: 'fail', reason: missingText }, SKIPPED_TYPE, SKIPPED_VALUE];
        case MISMATCH: return [PASSED_ATTRIBUTE, { check: 'type', outcome: 'fail', reason: typeText }, SKIPPED_VALUE];
        default: return [PASSED_ATTRIBUTE, PASSED_TYPE, { check: 'value', outcome: 'fail', reason: falseText }];
      }
    },
  };
  const checks = q.operator === '$exists' ? existsChecks : valueChecks;
  return anyUsable(id, query, slot, { header, noCredential, more }, outcome, why, checks);
}

const NOOP_CHECKS: QueryChecks = { names: [], run: () => [] };
const PASSED_ATTRIBUTE: CheckTrace = Object.freeze({ check: 'attribute', outcome: 'pass' });
const PASSED_TYPE: CheckTrace = Object.freeze({ check: 'type', outcome: 'pass' });
const PASSED_VALUE: CheckTrace = Object.freeze({ check: 'value', outcome: 'pass' });
const SKIPPED_TYPE: CheckTrace = Object.freeze({ check: 'type', outcome: 'skipped' });
const SKIPPED_VALUE: CheckTrace = Object.freeze({ check: 'value', outcome: 'skipped' });

/** Passes when a usable credential of its slot has the outcome PASS; else says why each failed. */
function anyUsable(
  id: string,
  query: CompiledRule['query'],
  slot: number,
  texts: FailureTexts,
  outcome: (c: PreparedCredential) => number,
  why: (c: PreparedCredential) => string,
  checks: QueryChecks,
): CompiledRule {
  return {
    id,
    query,
    evaluate(run: RunContext): RuleFailure | null {
      const list = run.bySlot[slot];
      if (list !== undefined) {
        for (const c of list) if (isUsable(c, run.now) && outcome(c) === PASS) return null;
      }
      return fail(list, run.now, texts, why);
    },
    explain: (run: RunContext) => explainAnyUsable(query.type, run.bySlot[slot], run.now, checks),
  };
}

/** Credentials a failed rule's reasons name; each rule names those of its type: 100 x 256 rules would be 25,600 lines. */
export const CREDENTIAL_REASONS = 10;

/** A rule's failure texts, made once when it is compiled. */
interface FailureTexts {
  header: string;
  noCredential: string;
  /** The last line when more credentials failed than are listed. */
  more: (n: number) => string;
}

function fail(
  list: readonly PreparedCredential[] | undefined,
  now: number,
  { header, noCredential, more }: FailureTexts,
  why: (c: PreparedCredential) => string,
): RuleFailure {
  const reasons = [header];
  let undecided = false;
  if (list === undefined || list.length === 0) {
    reasons.push(noCredential);
  } else {
    for (const [i, c] of list.entries()) {
      if (i < CREDENTIAL_REASONS) reasons.push(`${label(c)}: ${unusableReason(c, now) ?? why(c)}`);
      if (isUndecided(c)) undecided = true;
    }
    if (list.length > CREDENTIAL_REASONS) reasons.push(more(list.length - CREDENTIAL_REASONS));
  }
  // No candidate passed; if one could not be judged, neither can the rule.
  return { status: undecided ? 'error' : 'not-valid', reasons };
}

export const challengeQueryEvaluator: Evaluator = { objectType: 'ChallengeQuery', compileRule };
