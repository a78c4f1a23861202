import type { Query, QueryConfiguration, ScenarioType } from '../schemas/scenario.js';
import type { Credential } from '../schemas/credential.js';
import type { ExecutionResult } from '../schemas/execution.js';
import type { QueryPolicies, TypeRules } from './policy.js';

/**
 * The outcome of the trust checks (src/trust) for one credential. `not-valid`: definitely unusable; `error`: trust
 * could not be decided. `reason` never quotes credentialSubject values.
 */
export type TrustVerdict = { ok: true } | { ok: false; status: 'not-valid' | 'error'; reason: string };

export interface PreparedCredential {
  /** 0-based; reasons say #index+1. */
  readonly index: number;
  readonly credential: Credential;
  readonly trust: TrustVerdict | undefined;
  /** -1 until assessed, then a state code of credentials.ts. */
  state: number;
}

export interface RunContext {
  /** epoch ms */
  readonly now: number;
  /** Presented credentials by the plan's credential-type slot, in input order. */
  readonly bySlot: ReadonlyArray<readonly PreparedCredential[] | undefined>;
}

/** Why a rule did not pass. A passing rule answers null and allocates nothing. */
export interface RuleFailure {
  readonly status: 'not-valid' | 'error';
  readonly reasons: string[];
}

export interface CompiledRule {
  readonly id: string;
  /** Frozen, as every result echoes it (frozenQuery). */
  readonly query: Query;
  evaluate(run: RunContext): RuleFailure | null;
}

export interface CompileContext {
  slotFor(credentialType: string): number;
  /** The scenario type's policy (its module's), where the caller gave the registry's policies. */
  readonly rules?: TypeRules;
}

/** One evaluator per scenario type: compiles its query configurations into rules. */
export interface Evaluator {
  readonly objectType: ScenarioType;
  compileRule(configuration: QueryConfiguration, context: CompileContext): CompiledRule;
}

/** The compile step of each registered type that declares one, by type (src/execution/registry.ts). */
export type Evaluators = Readonly<Partial<Record<string, Evaluator>>>;

/**
 * What compilePlan knows of the scenario types, as their modules declare them (src/execution/registry.ts hands them
 * in): each type's compile step, if it has one, and, where given, each type's query policy.
 */
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
  /** Credential type -> slot in RunContext.bySlot; only the types some rule reads. */
  credentialSlots: ReadonlyMap<string, number>;
}

export interface RunInput {
  address: string;
  credentials: Credential[];
  /** epoch ms */
  now: number;
  executionId: string;
  /**
   * Trust verdicts by credential position. A credential whose verdict is not ok is unusable for every rule; a failing
   * rule with an `error` candidate and no pass is `error`. Absent: dates and query only (verification off).
   */
  trust?: ReadonlyArray<TrustVerdict | undefined>;
  /** Fields every result's `result` carries (its type's: ChallengeQuery's `verification: 'off'` when trust is off). */
  extras?: ResultExtras;
}

/**
 * The fields a scenario type adds to its results' `result` beyond the verdict, status and query (the RuleResult
 * schema's optional fields); its module declares which (src/execution/<type>/index.ts).
 */
export type ResultExtras = Readonly<Partial<Omit<ExecutionResult['result'], 'result' | 'executionId' | 'status' | 'query'>>>;
export type ResultExtraField = keyof ResultExtras;
