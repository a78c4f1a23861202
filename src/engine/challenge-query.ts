/**
 * The ChallengeQuery evaluator: a rule passes when at least one usable presented credential of the query's type
 * satisfies the query. Reasons are built only on the failure path; they quote the rule and say why each
 * candidate credential failed, without ever quoting the holder's attribute values.
 */
import type { QueryConfiguration } from '../schemas/scenario.js';
import { isUndecided, isUsable, label, unusableReason } from './credentials.js';
import { compileOperator, describeKind, FALSE, MISMATCH, MISSING, PASS, type CompiledOperator } from './operators.js';
import { compilePath, pathScope, pathSource, type Getter } from './path.js';
import { describeQuery, frozenQuery, invalidRule } from './query.js';
import type { CompileContext, CompiledRule, Evaluator, PreparedCredential, RuleFailure, RunContext } from './types.js';
import { checkQuery } from './validate.js';

function compileRule(configuration: QueryConfiguration, context: CompileContext): CompiledRule {
  const id = configuration.id;
  const q = configuration.query;
  const problems = checkQuery(q, 'ChallengeQuery', '');
  const query = frozenQuery(q);
  if (problems.length > 0) return invalidRule(id, query, problems);

  const slot = context.slotFor(q.type);
  const header = q.operator === '$noop'
    ? `expected a usable ${q.type} credential ($noop)`
    : `expected a usable ${q.type} credential with ${describeQuery(q)}`;
  const noCredential = `no credential of type ${q.type} was presented`;

  if (q.operator === '$noop') {
    return {
      id,
      query,
      evaluate(run: RunContext): RuleFailure | null {
        const list = run.bySlot[slot];
        if (list !== undefined) {
          for (let i = 0; i < list.length; i++) if (isUsable(list[i], run.now)) return null;
        }
        return fail(list, run.now, header, noCredential, () => 'usable');
      },
    };
  }

  const attribute = q.attribute as string;
  const get: Getter = compilePath(attribute);
  const op = compileOperator(q.operator, q.value) as CompiledOperator; // checkQuery passed, so it compiles
  const test = op.test;
  const onMissing = op.onMissing;
  const falseText = q.operator === '$exists' && q.value === false
    ? `${attribute} is present (expected $exists false)`
    : `${attribute} is not ${q.operator} ${JSON.stringify(q.value)}`;

  /** Why a usable credential fails the query (failure path only). */
  const why = (c: PreparedCredential): string => {
    const v = get(c.credential.credentialSubject);
    const code = v === undefined || v === null ? onMissing : test(v);
    switch (code) {
      case MISSING: return `${attribute} is missing`;
      case MISMATCH: return `type mismatch: ${attribute} is ${describeKind(v, op.dates)}, expected ${op.expects}`;
      case FALSE: return falseText;
      default: return 'satisfies the query'; // unreachable: the rule would have passed
    }
  };

  const onFail = (run: RunContext): RuleFailure => fail(run.bySlot[slot], run.now, header, noCredential, why);
  return { id, query, evaluate: specialisedEvaluate(slot, attribute, test, onMissing, onFail) };
}

let specialised = 0;

/**
 * A rule's evaluate as JavaScript of its own: for each usable credential of the slot, read the attribute (the path
 * walk of ./path.ts, unrolled with its keys as literals) and pass when `test` answers PASS; otherwise `onFail` builds
 * the reasons. It is what a closure shared by every rule would do, but code of its own gets its own type feedback:
 * its calls of isUsable and of this rule's `test` are monomorphic (the compiler inlines them) and each property read
 * has its own inline cache, where one shared closure would see every rule's operator and keys (megamorphic). The
 * source holds nothing from the scenario but the path keys, as JSON string literals, and the slot, a small integer;
 * the serial number keeps two rules with the same path from sharing compiled code.
 */
function specialisedEvaluate(
  slot: number,
  attribute: string,
  test: (v: unknown) => number,
  onMissing: number,
  onFail: (run: RunContext) => RuleFailure,
): (run: RunContext) => RuleFailure | null {
  const source = `"use strict";
return function evaluate(run) { // specialised rule ${++specialised}
  const list = run.bySlot[${slot}];
  if (list !== undefined) {
    const now = run.now;
    for (let i = 0; i < list.length; i++) {
      const c = list[i];
      if (!isUsable(c, now)) continue;
      let v = c.credential.credentialSubject;
      ${pathSource(attribute)}
      if ((v === undefined || v === null ? onMissing : test(v)) === ${PASS}) return null;
    }
  }
  return onFail(run);
};`;
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- generated from the literals above only
  const make = new Function('isUsable', 'test', 'onMissing', 'onFail', ...Object.keys(pathScope), source) as (...deps: unknown[]) => (run: RunContext) => RuleFailure | null;
  return make(isUsable, test, onMissing, onFail, ...Object.values(pathScope));
}

function fail(
  list: readonly PreparedCredential[] | undefined,
  now: number,
  header: string,
  noCredential: string,
  why: (c: PreparedCredential) => string,
): RuleFailure {
  const reasons = [header];
  let undecided = false;
  if (list === undefined || list.length === 0) {
    reasons.push(noCredential);
  } else {
    for (const c of list) {
      reasons.push(`${label(c)}: ${unusableReason(c, now) ?? why(c)}`);
      if (isUndecided(c)) undecided = true;
    }
  }
  // No candidate passed; if one could not be judged (its trust is undecided), neither can the rule.
  return { status: undecided ? 'error' : 'not-valid', reasons };
}

export const challengeQueryEvaluator: Evaluator = { objectType: 'ChallengeQuery', compileRule };
