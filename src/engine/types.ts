import type { Query, QueryConfiguration, ScenarioType } from '../schemas/scenario.js';
import type { Credential } from '../schemas/credential.js';
import type { ExecutionResult } from '../schemas/execution.js';
import type { RuleTrace, TrustCheck } from '../schemas/trace.js';
import type { QueryPolicies, TypeRules } from './policy.js';

/** src/trust's verdict on one credential; `error`: undecided. `reason` never quotes credentialSubject values. */
export type TrustVerdict = { ok: true } | { ok: false; status: 'not-valid' | 'error'; reason: string; check?: TrustCheck };

export interface PreparedCredential {
  readonly index: number;
  readonly credential: Credential;
  readonly trust: TrustVerdict | undefined;
  state: number;
}

export interface RunContext {
  readonly now: number;
  readonly bySlot: ReadonlyArray<readonly PreparedCredential[] | undefined>;
}

export interface RuleFailure {
  readonly status: 'not-valid' | 'error';
  readonly reasons: string[];
}

export interface CompiledRule {
  readonly id: string;
  readonly query: Query;
  evaluate(run: RunContext): RuleFailure | null;
  /** The same decision step by step, for dry runs. */
  explain?(run: RunContext): RuleExplanation;
}

export type RuleExplanation = Omit<RuleTrace, 'ruleId' | 'status'>;

export interface CompileContext {
  slotFor(credentialType: string): number;
  readonly rules?: TypeRules;
}

export interface Evaluator {
  readonly objectType: ScenarioType;
  compileRule(configuration: QueryConfiguration, context: CompileContext): CompiledRule;
}

export type Evaluators = Readonly<Partial<Record<string, Evaluator>>>;

export interface TypeDeclarations {
  readonly evaluators: Evaluators;
  readonly policies?: QueryPolicies;
}

export interface Plan {
  scenarioId: string;
  revision: number;
  name: string;
  type: ScenarioType;
  rules: CompiledRule[];
  /** Credential type -> index in bySlot. */
  credentialSlots: ReadonlyMap<string, number>;
}

export interface RunInput {
  address: string;
  credentials: Credential[];
  now: number;
  executionId: string;
  /** By credential position; absent when verification is off. */
  trust?: ReadonlyArray<TrustVerdict | undefined>;
  extras?: ResultExtras;
}

/** What a type's module adds to every result. */
export type ResultExtras = Readonly<Partial<Omit<ExecutionResult['result'], 'result' | 'executionId' | 'status' | 'query'>>>;
export type ResultExtraField = keyof ResultExtras;
