import type { TObject, TSchema } from '@sinclair/typebox';
import type { CachedPlan } from '../domain/plan-cache.js';
import type { Evaluator, FieldProblem, QueryPolicy } from '../engine/index.js';
import type { ResultExtraField } from '../engine/result.js';
import type { Credential } from '../schemas/credential.js';
import type { ExecutionResult } from '../schemas/execution.js';
import type { Scenario, ScenarioType } from '../schemas/scenario.js';
import type { ExecutionRecord, PendingState } from '../store/types.js';
import type { ExecutionView } from './view.js';

export interface ExecuteInput {
  compiled: CachedPlan;
  address: string;
  addressChain?: string;
  credentials: Credential[];
  digests: readonly string[];
  executionId: string;
  at: number;
  tenant: string;
  /** Verification from what is already known only (VerifyContext.warmOnly): a shadow run's evaluation. */
  warmOnly?: boolean;
}

export interface Evaluation {
  results: ExecutionResult[];
  pending?: { state: PendingState; expiresAt: string };
}

/** `shown` may carry disclosed values, which the record never keeps. */
export interface Completion {
  results: ExecutionResult[];
  shown: ExecutionResult[];
}

/** The execution service, which writes what a strategy judged. */
export interface PendingExecutions {
  complete(executionId: string, judge: (record: ExecutionRecord, at: number) => Promise<Completion>): Promise<ExecutionView | undefined>;
  expireDue(): Promise<void>;
}

export interface ScenarioStrategy {
  readonly type: ScenarioType;
  validate?(scenario: Scenario): Promise<FieldProblem[]>;
  /** Writes nothing. */
  execute(input: ExecuteInput): Promise<Evaluation>;
}

/** `create` imports the strategy itself: the declarations load without the strategy's libraries. */
export interface ScenarioModule<T extends ScenarioType = ScenarioType, D = never, S extends ScenarioStrategy = ScenarioStrategy> {
  readonly type: T;
  readonly policy: QueryPolicy;
  /** For a type whose rules the engine decides. */
  readonly evaluator?: Evaluator;
  readonly resultFields: { readonly adds: readonly ResultExtraField[]; readonly firstOnly: readonly ResultExtraField[] };
  /** `when-required`: REQUIRE_HOLDER_BINDING decides. */
  readonly holderBinding: 'always' | 'when-required' | 'never';
  readonly verifiesCredentials?: true;
  create(deps: D): S | Promise<S>;
  readonly timers?: readonly ScenarioTimer<S>[];
  readonly routes?: readonly ScenarioRoute<S>[];
}

/** Open: the handler's own checks decide. */
export interface ScenarioRoute<S> {
  readonly method: 'POST';
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly description: string;
  readonly tags: readonly string[];
  readonly consumes: readonly string[];
  readonly textTypes?: readonly string[];
  readonly bodyLimit?: number;
  readonly params: TObject;
  readonly body: TSchema;
  readonly ok: { readonly schema: TSchema; readonly description: string };
  readonly problems: Readonly<Partial<Record<number, string>>>;
  readonly perClient?: { perMinute(strategy: S): number; readonly what: string };
  handle(strategy: S, call: { readonly params: Readonly<Record<string, string>>; readonly body: unknown }): Promise<unknown>;
}

export interface BoundRoute extends Omit<ScenarioRoute<unknown>, 'perClient' | 'handle'> {
  readonly type: ScenarioType;
  readonly perClient: { readonly perMinute: number; readonly what: string } | undefined;
  handle(call: { readonly params: Readonly<Record<string, string>>; readonly body: unknown }): Promise<unknown>;
}

export interface ScenarioTimer<S> {
  readonly name: string;
  readonly everyMs: number;
  run(strategy: S): Promise<unknown>;
}

export interface BoundTimer {
  readonly type: ScenarioType;
  readonly name: string;
  readonly everyMs: number;
  run(): Promise<unknown>;
}
