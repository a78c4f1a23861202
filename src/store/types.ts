import type { Scenario } from '../schemas/scenario.js';
import type { ExecutionResult } from '../schemas/execution.js';

/** `seq` is never reused, even after a delete. */
export interface ScenarioRow {
  seq: number;
  id: string;
  input: Scenario;
  revision: number;
  createdAt: string;
  updatedAt: string;
}

export interface ScenarioPage {
  items: ScenarioRow[];
  next?: number;
}

/** Project ids a request may see, or undefined for every project (operator). In `find` and `heads`, '' is no project. */
export type ProjectScope = readonly string[] | undefined;

/** Cheap to read, for checking a cached plan. */
export interface ScenarioHead {
  seq: number;
  revision: number;
}

/**
 * A scenario id is unique within its project (project-less scenarios form one more), so two projects may each have
 * a `kyc` and neither learns of the other's. Every method is atomic; `update` is a compare-and-set on the revision,
 * so concurrent writers (threads, processes, instances) never lose an update.
 */
export interface ScenarioRepository {
  /** null when its project has a scenario with that id. */
  create(id: string, input: Scenario, now: string): Promise<ScenarioRow | null>;
  /** In seq order: none, one, or two when the id is in several of the scope's projects. */
  find(id: string, scope: ProjectScope): Promise<ScenarioRow[]>;
  heads(id: string, scope: ProjectScope): Promise<ScenarioHead[]>;
  list(limit: number, after?: number, projects?: ProjectScope): Promise<ScenarioPage>;
  /** null when the row is gone or its revision moved; throws ScenarioIdTaken when moved into a project holding its id. */
  update(seq: number, input: Scenario, expectedRevision: number, now: string): Promise<ScenarioRow | null>;
  delete(seq: number): Promise<boolean>;
}

/** The database as a whole: what health checks and shutdown use. */
export interface StoreHandle {
  readonly kind: 'sqlite' | 'postgres';
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** A credential's id and a SHA-256 of its canonical JSON, never its content. */
interface CredentialDigest {
  id: string;
  sha256: string;
}

type ExecutionState = 'completed' | 'pending' | 'failed';

export interface ExecutionRecord {
  executionId: string;
  scenarioId: string;
  scenarioRevision: number;
  /** The scenario's project when it ran (tenancy follows the scenario). */
  projectId: string | null;
  address: string;
  state: ExecutionState;
  results: ExecutionResult[];
  /** `results` as JSON text, when the caller has it (execute records the very text it answers). */
  resultsJson?: string;
  credentials: CredentialDigest[];
  createdAt: string;
  updatedAt: string;
  /** An asynchronous type's state while the execution is pending (its module makes and reads it); null once it ends. */
  pending?: PendingState | null;
  expiresAt?: string | null;
  /** Inserted in the record's own transaction. */
  webhook?: WebhookDelivery;
  /**
   * What an attestation signed later must restate as it was when the execution ran: the digest of the scenario
   * revision that ran (a scenario deleted and created again, or moved in from another project, has another content or
   * is refused), and whether the verdict was tied to the address under the configuration then in force. Absent in
   * records written before they were kept.
   */
  scenarioDigest?: string;
  holderBound?: boolean;
}

/**
 * Plain JSON the scenario type's module makes and parses (OffChainZKP: its PendingAuthorization); the store keeps it
 * whole. `expiresAt`: epoch seconds; `request`: what the holder is asked, which the API shows as `authorizationRequest`.
 */
export type PendingState = Record<string, unknown> & { expiresAt: number; request?: object };

/** Transactional outbox: written with the state change it announces. */
export interface WebhookDelivery {
  id: string;
  executionId: string;
  event: 'execution.completed' | 'execution.failed';
  /** null or absent: WEBHOOK_URL as configured when it is sent. */
  url?: string | null;
  payload: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt: string;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface WebhookFairness {
  perTarget: number;
  scan: number;
  skipTargets: readonly string[];
  skipProjects: readonly string[];
}

/** A claimed delivery and the project of its execution (null: none). */
export type ClaimedWebhook = WebhookDelivery & { projectId: string | null };

interface ExecutionCompletion {
  state: 'completed' | 'failed';
  results: ExecutionResult[];
  updatedAt: string;
  webhook?: WebhookDelivery;
}

export interface ExecutionPage {
  items: ExecutionRecord[];
  next?: number;
}

/** Execution records: the audit log, and the state of pending executions. */
export interface ExecutionRepository {
  /** Resolves once committed (group commit: concurrent calls share a transaction). */
  recordExecution(record: ExecutionRecord): Promise<void>;
  getExecution(executionId: string): Promise<ExecutionRecord | undefined>;
  listExecutions(scenarioId: string, limit: number, before?: number, projects?: ProjectScope): Promise<ExecutionPage>;
  purgeExecutions(createdBefore: string): Promise<number>;
  /** Compare-and-set on state = pending, with its webhook in the same transaction; false when no longer pending. */
  completeExecution(executionId: string, completion: ExecutionCompletion): Promise<boolean>;
  /** Atomic, so the budget holds across instances: the new count, or undefined when `max` was reached (or it is gone). */
  countAnswer(executionId: string, max: number): Promise<number | undefined>;
  expiredPendingExecutions(before: string, limit: number): Promise<ExecutionRecord[]>;
}

/** An execution as evidence: its rules' statuses and credential digests, never a reason's text nor a credential id. */
export interface ExecutionEvidence {
  executionId: string;
  createdAt: string;
  projectId: string | null;
  scenarioId: string;
  scenarioRevision: number;
  scenarioDigest: string | null;
  address: string;
  state: ExecutionState;
  rules: { id: string; status: ExecutionResult['result']['status'] }[];
  credentials: string[];
  seq: number;
}

export interface EvidenceKey {
  createdAt: string;
  seq: number;
}

/** Created in [from, to), of `projects` ('' for none), after `after`, up to `through`. */
export interface EvidenceRange {
  from: string;
  to: string;
  scenarioId?: string;
  projects: ProjectScope;
  after?: EvidenceKey;
  through?: EvidenceKey;
}

/** Keyset pages of the audit log by creation time. */
export interface ExecutionExport {
  evidencePage(range: EvidenceRange, limit: number): Promise<ExecutionEvidence[]>;
  /** The key of the range's `n`th record (from 1). */
  evidenceKeyAt(range: EvidenceRange, n: number): Promise<EvidenceKey | undefined>;
}

/** The webhook outbox: deliveries are inserted with the execution state they announce (ExecutionRepository). */
export interface WebhookOutbox {
  /**
   * Due deliveries leased to this caller until `leaseUntil`, so instances do not send one twice: at most `limit`,
   * earliest first, at most `fair.perTarget` of one target (`url`, '' for WEBHOOK_URL), none of `fair.skipTargets`
   * nor of the projects in `fair.skipProjects` ('' for none), looked for among the first `fair.scan` due ones.
   */
  claimWebhooks(now: string, limit: number, leaseUntil: string, fair: WebhookFairness): Promise<ClaimedWebhook[]>;
  /** Gives claimed deliveries back unsent (their lease ends now). */
  releaseWebhooks(ids: readonly string[], leaseUntil: string): Promise<void>;
  /**
   * Records an attempt made under the lease `leaseUntil` and ends that lease. Not recorded when the lease is no
   * longer the caller's, or when a replay was asked during the attempt: the replay stands and is due at once.
   */
  updateWebhook(delivery: Pick<WebhookDelivery, 'id' | 'state' | 'attempts' | 'nextAttemptAt' | 'lastStatus' | 'lastError' | 'updatedAt'>, leaseUntil: string): Promise<void>;
  webhooksOf(executionId: string): Promise<WebhookDelivery[]>;
  /**
   * A replay: due now with a fresh attempt count, whatever its state (during an attempt: once it ends); undefined
   * when there is no such delivery.
   */
  replayWebhook(executionId: string, deliveryId: string, now: string): Promise<WebhookDelivery | undefined>;
}

interface IdempotentResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

type IdempotencyClaim =
  | { claimed: true }
  | { claimed: false; requestHash: string; response?: IdempotentResponse };

/** Idempotency keys (Stripe's model): the first request with a key does the work, retries get its response. */
export interface IdempotencyRepository {
  /**
   * Claims the key, leased until `leaseUntil`. Not claimed: in progress or finished (its response). A key created
   * before `expiredBefore`, or whose lease ran out (its owner died), counts as free.
   */
  claimIdempotencyKey(key: string, requestHash: string, now: string, expiredBefore: string, leaseUntil: string): Promise<IdempotencyClaim>;
  renewIdempotencyLease(key: string, leaseUntil: string): Promise<void>;
  completeIdempotencyKey(key: string, response: IdempotentResponse): Promise<void>;
  /** For a failure worth retrying (e.g. 503). */
  releaseIdempotencyKey(key: string): Promise<void>;
  purgeIdempotencyKeys(createdBefore: string): Promise<number>;
}

/** Hashes only (no nullifier, no address), per scenario. */
interface NullifierBinding {
  projectId: string;
  scenarioId: string;
  nullifierHash: string;
  addressHash: string;
  at: string;
}

/** "One holder, one address" per scenario. */
export interface NullifierRepository {
  /** Binds the nullifier to the address unless it is bound already; answers the address hash it is bound to. */
  bindNullifier(binding: NullifierBinding): Promise<string>;
}

/** Every repository over one database; a service takes only the repositories it uses. */
export type Store = StoreHandle & ScenarioRepository & ExecutionRepository & ExecutionExport & WebhookOutbox & IdempotencyRepository
  & NullifierRepository;
