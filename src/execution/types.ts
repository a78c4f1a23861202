import type { TObject, TSchema } from '@sinclair/typebox';
import type { CachedPlan } from '../domain/plan-cache.js';
import type { Evaluator, FieldProblem, QueryPolicy } from '../engine/index.js';
import type { ResultExtraField } from '../engine/result.js';
import type { Credential } from '../schemas/credential.js';
import type { ExecutionResult } from '../schemas/execution.js';
import type { Scenario, ScenarioType } from '../schemas/scenario.js';
import type { ExecutionRecord, PendingState } from '../store/types.js';
import type { ExecutionView } from './view.js';

/** One execute call, as the execution service hands it to a strategy: validated, the address parsed, ids and time fixed. */
export interface ExecuteInput {
  compiled: CachedPlan;
  /** The address string results carry. */
  address: string;
  /** The request's `address.chain`, when it gave one (OnChainZKP prefers a deployment on that chain). */
  addressChain?: string;
  credentials: Credential[];
  /** Each credential's content digest, same order (the trust checks key their caches on it). */
  digests: readonly string[];
  executionId: string;
  /** Evaluation time, epoch ms. */
  at: number;
  /** Whose budget new credentials' checks are charged to: the token's subject, or the client address. */
  tenant: string;
}

/** A strategy's verdicts: one result per rule; `pending` when the execution completes later (OffChainZKP). */
export interface Evaluation {
  results: ExecutionResult[];
  pending?: { state: PendingState; expiresAt: string };
}

/** A pending execution's end as its strategy judged it: `results` for the record, `shown` for the caller and the webhook. */
export interface Completion {
  results: ExecutionResult[];
  shown: ExecutionResult[];
}

/**
 * The execution service's side of pending executions (services/executions.ts): it writes the record and its webhook
 * row; a strategy only judges. `complete` is undefined when no pending execution has the id.
 */
export interface PendingExecutions {
  complete(executionId: string, judge: (record: ExecutionRecord, at: number) => Promise<Completion>): Promise<ExecutionView | undefined>;
  expireDue(): Promise<void>;
}

/**
 * How one scenario type is executed; its module (ScenarioModule) builds it. The execution service
 * (services/executions.ts) turns a call into ExecuteInput and the Evaluation into the audit record.
 */
export interface ScenarioStrategy {
  readonly type: ScenarioType;
  /** Create/patch-time checks beyond the engine's (validateScenarioRules), as field problems under the scenario. */
  validate?(scenario: Scenario): Promise<FieldProblem[]>;
  /** Decides the rules; writes nothing. Rejects only with a typed refusal carrying its status (e.g. CredentialTooLarge). */
  execute(input: ExecuteInput): Promise<Evaluation>;
}

/**
 * A scenario type as a whole: its folder's index.ts exports one, and registry.ts registers it (one line). `D`: the
 * dependencies its strategy is built from (the composition root, adapters.ts, hands them in). `create` imports the
 * strategy's module itself, so that the declarations load without the strategy's libraries (the create/patch checks
 * and the unit tests read them).
 */
export interface ScenarioModule<T extends ScenarioType = ScenarioType, D = never, S extends ScenarioStrategy = ScenarioStrategy> {
  readonly type: T;
  /** What its rules' queries may ask beyond the query language; the engine applies it at create/patch. */
  readonly policy: QueryPolicy;
  /**
   * Its compile step: the engine evaluator that compiles its rules once per scenario revision, for a type whose rules
   * the engine decides. None: its strategy decides the rules itself (runPlan would answer `error` for each).
   */
  readonly evaluator?: Evaluator;
  /**
   * The fields its results' `result` may carry beyond verdict, status and query (RuleResult's optional ones);
   * `firstOnly`: those the same on every result, which only the first keeps when the results are compacted.
   */
  readonly resultFields: { readonly adds: readonly ResultExtraField[]; readonly firstOnly: readonly ResultExtraField[] };
  /**
   * Whether its verdict is tied to the execute request's address (attestations say so, and an EIP-712 one needs it):
   * `always`, `when-required` (REQUIRE_HOLDER_BINDING decides) or `never` guaranteed.
   */
  readonly holderBinding: 'always' | 'when-required' | 'never';
  /** Whether it verifies the credentials sent with execute, which CREDENTIAL_VERIFICATION=off turns off. */
  readonly verifiesCredentials?: true;
  create(deps: D): S | Promise<S>;
  /** Work its strategy repeats while the app runs (an asynchronous type's expiry sweep, ...); the app starts and stops them. */
  readonly timers?: readonly ScenarioTimer<S>[];
  /** Routes it adds to the API (an asynchronous type's callback, where the holder's answer arrives). */
  readonly routes?: readonly ScenarioRoute<S>[];
}

/**
 * A route of a scenario type, declared without HTTP machinery (src/execution/ knows nothing of src/http/):
 * src/http/type-routes.ts registers it. It is open (no bearer token): whoever calls it, the handler's own checks (a
 * proof, a thread id) decide. The handler answers the 200 body, or throws an error carrying its status (errors.ts).
 */
export interface ScenarioRoute<S> {
  readonly method: 'POST';
  /** With `:name` parameters, which `params` declares. */
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly description: string;
  readonly tags: readonly string[];
  /** The content types it takes; those in `textTypes` are handed to the handler as a string. */
  readonly consumes: readonly string[];
  readonly textTypes?: readonly string[];
  readonly bodyLimit?: number;
  readonly params: TObject;
  readonly body: TSchema;
  /** The 200 answer: its schema and when it is given. */
  readonly ok: { readonly schema: TSchema; readonly description: string };
  /** Each problem status it may answer, with when and what to do. */
  readonly problems: Readonly<Partial<Record<number, string>>>;
  /**
   * Calls per client address and minute it takes, instead of the service-wide rate limit (0: the service-wide limit
   * only); `what` names the calls in the 429's detail ("at most N <what> a minute from this client address").
   */
  readonly perClient?: { perMinute(strategy: S): number; readonly what: string };
  handle(strategy: S, call: { readonly params: Readonly<Record<string, string>>; readonly body: unknown }): Promise<unknown>;
}

/** A scenario type's route bound to its strategy, as the app registers it (src/http/type-routes.ts). */
export interface BoundRoute extends Omit<ScenarioRoute<unknown>, 'perClient' | 'handle'> {
  readonly type: ScenarioType;
  /** 0: the service-wide limit only. */
  readonly perClient: { readonly perMinute: number; readonly what: string } | undefined;
  handle(call: { readonly params: Readonly<Record<string, string>>; readonly body: unknown }): Promise<unknown>;
}

/** A repeating task of a scenario type, on its strategy. `name` says what it does, in the log line of a failed run. */
export interface ScenarioTimer<S> {
  readonly name: string;
  readonly everyMs: number;
  run(strategy: S): Promise<unknown>;
}

/** A scenario type's timer bound to its strategy, as the app runs it (plugins/lifecycle.ts). */
export interface BoundTimer {
  readonly type: ScenarioType;
  readonly name: string;
  readonly everyMs: number;
  run(): Promise<unknown>;
}
