import type { Query, QueryConfiguration, ScenarioType } from '../schemas/scenario.js';
import type { Credential } from '../schemas/credential.js';

/**
 * The outcome of the credential trust checks (proof, trusted issuer, revocation, holder binding) for one presented
 * credential, computed outside the engine (src/trust) and handed in with RunInput.trust. `not-valid`: the credential
 * is definitely unusable (forged, tampered, revoked, untrusted issuer, another holder); `error`: its trust could not
 * be decided (e.g. revocation status unresolvable). `reason` never quotes credentialSubject values.
 */
export type TrustVerdict = { ok: true } | { ok: false; status: 'not-valid' | 'error'; reason: string };

/** A credential of this run, prepared once: its usability is assessed on first use and kept. */
export interface PreparedCredential {
  /** Position in the presented credentials array (0-based; reasons say #index+1). */
  readonly index: number;
  readonly credential: Credential;
  /** The trust verdict for this credential, when the caller verified credentials (RunInput.trust). */
  readonly trust: TrustVerdict | undefined;
  /** -1 until assessed, then one of the CredentialState codes (see credentials.ts). */
  state: number;
}

/** What a compiled rule reads at run time. */
export interface RunContext {
  /** Evaluation time, epoch ms. */
  readonly now: number;
  /** Presented credentials by the plan's credential-type slot (see CompileContext.slotFor), in input order. */
  readonly bySlot: ReadonlyArray<readonly PreparedCredential[] | undefined>;
}

/** Why a rule did not pass. A passing rule answers null and allocates nothing. */
export interface RuleFailure {
  readonly status: 'not-valid' | 'error';
  readonly reasons: string[];
}

export interface CompiledRule {
  /** The query configuration id (objectId of its result). */
  readonly id: string;
  /** The query configuration's query as every result echoes it, frozen (frozenQuery: a long value list abbreviated). */
  readonly query: Query;
  evaluate(run: RunContext): RuleFailure | null;
}

/** Handed to evaluators while compiling. */
export interface CompileContext {
  /** The slot of a credential type: runPlan indexes the presented credentials of that type under it. */
  slotFor(credentialType: string): number;
}

/** One evaluator per objectType (scenario type): compiles that type's query configurations into rules. */
export interface Evaluator {
  readonly objectType: ScenarioType;
  compileRule(configuration: QueryConfiguration, context: CompileContext): CompiledRule;
}

export interface Plan {
  scenarioId: string;
  revision: number;
  name: string;
  type: ScenarioType;
  rules: CompiledRule[];
  /** Credential type -> slot in RunContext.bySlot; only the types some rule reads (empty for ZKP scenarios). */
  credentialSlots: ReadonlyMap<string, number>;
}

export interface RunInput {
  address: string;
  credentials: Credential[];
  /** Evaluation time, epoch ms. */
  now: number;
  executionId: string;
  /**
   * Trust verdicts indexed by credential position (same order as `credentials`). A credential whose verdict is not ok
   * is unusable for every rule, with the verdict's reason; when a rule fails, no candidate passed and at least one
   * candidate failed with an `error` verdict, the rule's status is `error`. Absent (or an undefined entry): the
   * credential is judged by its dates and the query only (verification off or not run).
   */
  trust?: ReadonlyArray<TrustVerdict | undefined>;
}
