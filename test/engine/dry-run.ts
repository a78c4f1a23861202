/**
 * Runs a plan the way execute does (runPlan) and the way a dry run does (tracePlan), expects the same results, and
 * checks the trace against them: the engine and trust tests call runBoth instead of runPlan, so every one of their
 * cases is also a dry-run case.
 */
import { expect } from 'vitest';
import { runPlan, tracePlan, type Plan } from '../../src/engine/index.js';
import type { RunInput } from '../../src/engine/types.js';
import type { ExecutionResult } from '../../src/schemas/execution.js';
import type { RuleTrace } from '../../src/schemas/trace.js';

export function runBoth(plan: Plan, input: RunInput): ExecutionResult[] {
  return traceBoth(plan, input).results;
}

/** runBoth, with the trace. */
export function traceBoth(plan: Plan, input: RunInput): { results: ExecutionResult[]; trace: RuleTrace[] } {
  const results = runPlan(plan, input);
  const dry = tracePlan(plan, input);
  expect(dry.results).toEqual(results);
  expectTraceOf(dry.trace, results, input, plan);
  return dry;
}

/** What every trace holds, whatever the case: see src/schemas/trace.ts. */
export function expectTraceOf(trace: readonly RuleTrace[], results: readonly ExecutionResult[], input: RunInput, plan?: Plan): void {
  expect(trace.map((t) => [t.ruleId, t.status])).toEqual(results.map((r) => [r.objectId, r.result.status]));
  for (const rule of trace) {
    if (rule.status === 'not-valid' || rule.status === 'error') {
      expect(rule.decidingCheck, `rule ${rule.ruleId} is ${rule.status}: its trace names the deciding check`).toBeDefined();
      expect(rule.decidingCredential).toBeUndefined();
    }
    if (rule.status === 'valid' && rule.credentialType !== undefined) {
      const name = rule.decidingCredential;
      expect(name, `rule ${rule.ruleId} is valid: its trace names the deciding credential`).toBeDefined();
      const last = rule.credentials[rule.credentials.length - 1];
      if (rule.credentials.length <= 10) expect(last && { index: last.index, id: last.id }).toEqual({ index: name?.index, id: name?.id });
      expect(last?.decidingCheck).toBeUndefined();
    }
    for (const credential of rule.credentials) {
      const deciding = credential.checks.find((check) => check.outcome === 'fail' || check.outcome === 'undecided');
      expect(credential.decidingCheck).toBe(deciding?.check);
      expect(input.credentials[credential.index]?.id).toBe(credential.id);
    }
  }
  expectNoSubjectValues(trace, input, plan);
}

/** No value of a credential's subject appears in the trace, unless the rules' own text holds it too. */
function expectNoSubjectValues(trace: readonly RuleTrace[], input: RunInput, plan?: Plan): void {
  const text = JSON.stringify(trace);
  const rulesText = JSON.stringify(plan?.rules.map((rule) => rule.query) ?? []);
  for (const credential of input.credentials as readonly unknown[]) {
    const subject = typeof credential === 'object' && credential !== null && 'credentialSubject' in credential ? credential.credentialSubject : undefined;
    for (const value of leaves(subject)) {
      if (value.length < 3 || rulesText.includes(value)) continue;
      expect(text, `the trace quotes a credential's value ${value}`).not.toContain(value);
    }
  }
}

function leaves(x: unknown): string[] {
  if (typeof x === 'string') return [x];
  if (typeof x === 'number' || typeof x === 'boolean') return [String(x)];
  if (typeof x !== 'object' || x === null) return [];
  return Object.values(x).flatMap(leaves);
}
