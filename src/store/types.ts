import type { Scenario } from '../schemas/scenario.js';
import type { ExecutionResult } from '../schemas/execution.js';

/** A stored scenario. `seq` is unique for the life of the database (never reused after a delete). */
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
  /** The `seq` to continue after, when there may be more. */
  next?: number;
}

/**
 * The projects a request may see: a list of project ids, or undefined for every project (an operator token). In
 * `find` and `heads`, '' in the list stands for the scenarios without a project.
 */
export type ProjectScope = readonly string[] | undefined;

/** A scenario's current seq and revision: cheap to read, for checking a cached plan. */
export interface ScenarioHead {
  seq: number;
  revision: number;
}

/**
 * Where scenarios live. A scenario id is unique within its project (scenarios without a project form one more
 * project), so two projects may each have a scenario `kyc` and neither can learn of the other's. A scenario is
 * found by its id within the projects a request may see; it is then addressed by its `seq`. Every method is atomic;
 * `update` is a compare-and-set on the revision so that concurrent writers (threads, processes or instances) never
 * lose an update.
 */
export interface ScenarioStore {
  readonly kind: 'sqlite' | 'postgres';
  /** Inserts a scenario at revision 1; null when its project has a scenario with that id. */
  create(id: string, input: Scenario, now: string): Promise<ScenarioRow | null>;
  /** The scenarios with this id in the scope, in seq order: none, one, or two when the id is in several of its projects (never more). */
  find(id: string, scope: ProjectScope): Promise<ScenarioRow[]>;
  /** The heads of what `find` would answer. */
  heads(id: string, scope: ProjectScope): Promise<ScenarioHead[]>;
  /** Scenarios in creation order, after the given seq; only those of `projects` when given (tenancy). */
  list(limit: number, after?: number, projects?: ProjectScope): Promise<ScenarioPage>;
  /**
   * Writes `input` as revision expectedRevision + 1 of the scenario at `seq`; null when the row is gone or its
   * revision moved. Throws ScenarioIdTaken when input moves it to a project that has a scenario with its id.
   */
  update(seq: number, input: Scenario, expectedRevision: number, now: string): Promise<ScenarioRow | null>;
  delete(seq: number): Promise<boolean>;
  /** Throws when the database cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** What the audit log keeps of one credential: its id and a SHA-256 of its canonical JSON, never its content. */
interface CredentialDigest {
  id: string;
  sha256: string;
}

type ExecutionState = 'completed' | 'pending' | 'failed';

/** One execute call, as the audit log records it. */
export interface ExecutionRecord {
  executionId: string;
  scenarioId: string;
  scenarioRevision: number;
  /** The scenario's project when it ran (tenancy follows the scenario). */
  projectId: string | null;
  address: string;
  state: ExecutionState;
  results: ExecutionResult[];
  /** `results` as JSON text, when the caller has it already (execute records the very text it answers). */
  resultsJson?: string;
  credentials: CredentialDigest[];
  createdAt: string;
  updatedAt: string;
  /** OffChainZKP: what the proof verification needs (the authorization request and its binding). */
  zkp?: PendingZkp | null;
  /** OffChainZKP: when the authorization request expires (a pending execution then fails). */
  expiresAt?: string | null;
  /** The webhook announcing the execution's end (when one is configured): inserted in the record's own transaction. */
  webhook?: WebhookDelivery;
}

/** The OffChainZKP state of a pending execution: plain JSON made by src/zkp (PendingAuthorization). */
export type PendingZkp = Record<string, unknown> & { thid: string; expiresAt: number; request?: object };

/** A webhook to deliver (transactional outbox: written with the state change it announces). */
export interface WebhookDelivery {
  id: string;
  executionId: string;
  event: 'execution.completed' | 'execution.failed';
  /** Where to send it (the scenario's `webhookUrl`); null or absent: WEBHOOK_URL when it is sent. */
  url?: string | null;
  /** The exact body to send. */
  payload: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt: string;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
}

/** What the end of an OffChainZKP execution writes, atomically. */
interface ExecutionCompletion {
  state: 'completed' | 'failed';
  results: ExecutionResult[];
  updatedAt: string;
  /** Announced by webhook when one is configured. */
  webhook?: WebhookDelivery;
}

export interface ExecutionPage {
  items: ExecutionRecord[];
  /** The seq to continue before (newest first), when there may be more. */
  next?: number;
}

/** The execution audit log. */
interface ExecutionStore {
  /** Appends a record; resolves once it is committed (group commit: concurrent calls share a transaction). */
  recordExecution(record: ExecutionRecord): Promise<void>;
  getExecution(executionId: string): Promise<ExecutionRecord | undefined>;
  /** A scenario's executions, newest first, before the given seq; only those of `projects` when given. */
  listExecutions(scenarioId: string, limit: number, before?: number, projects?: ProjectScope): Promise<ExecutionPage>;
  /** Deletes executions created before the instant; answers how many. */
  purgeExecutions(createdBefore: string): Promise<number>;
  /**
   * Moves a pending execution to its end state (compare-and-set on state = pending) and queues its webhook in the
   * same transaction. False when it was no longer pending (another answer or the expiry got there first).
   */
  completeExecution(executionId: string, completion: ExecutionCompletion): Promise<boolean>;
  /**
   * Counts one OffChainZKP answer against a pending execution's budget, atomically, so the budget holds across
   * processes and instances: the new count, or undefined when the execution had taken `max` already (or is gone).
   */
  countZkpAnswer(executionId: string, max: number): Promise<number | undefined>;
  /** Pending executions whose authorization request expired before the instant. */
  expiredPendingExecutions(before: string, limit: number): Promise<ExecutionRecord[]>;
  /** Due webhook deliveries, leased to this caller for leaseMs so that instances do not send one twice. */
  claimWebhooks(now: string, limit: number, leaseUntil: string): Promise<WebhookDelivery[]>;
  /** Records an attempt's outcome. */
  updateWebhook(delivery: Pick<WebhookDelivery, 'id' | 'state' | 'attempts' | 'nextAttemptAt' | 'lastStatus' | 'lastError' | 'updatedAt'>): Promise<void>;
  webhooksOf(executionId: string): Promise<WebhookDelivery[]>;
  /**
   * Makes an execution's delivery due now with a fresh attempt count (a replay), whatever its state; the delivery as
   * it now stands, or undefined when the execution has no delivery with this id.
   */
  replayWebhook(executionId: string, deliveryId: string, now: string): Promise<WebhookDelivery | undefined>;
}

/** A stored response to a request carrying an Idempotency-Key. */
interface IdempotentResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

type IdempotencyClaim =
  | { claimed: true }
  | { claimed: false; requestHash: string; response?: IdempotentResponse };

/** Idempotency keys (Stripe's model): the first request with a key does the work, retries get its response. */
export interface IdempotencyStore {
  /**
   * Claims the key for a request whose identity hashes to requestHash, leased until `leaseUntil`. Not claimed: another
   * request holds it (no response yet, lease running: in progress) or finished it (its response). A key created before
   * `expiredBefore`, or claimed and left with its lease run out (its owner died), counts as free.
   */
  claimIdempotencyKey(key: string, requestHash: string, now: string, expiredBefore: string, leaseUntil: string): Promise<IdempotencyClaim>;
  /** Extends the lease of a claimed key still in progress (the owner's heartbeat). */
  renewIdempotencyLease(key: string, leaseUntil: string): Promise<void>;
  completeIdempotencyKey(key: string, response: IdempotentResponse): Promise<void>;
  /** Frees a claimed key whose request failed in a way worth retrying (e.g. 503). */
  releaseIdempotencyKey(key: string): Promise<void>;
  purgeIdempotencyKeys(createdBefore: string): Promise<number>;
}

/** Everything the service keeps, in one database. */
/** A nullifier seen in an OffChainZKP answer: hashes only (no nullifier, no address), per scenario. */
interface NullifierBinding {
  /** The scenario's project ('' when none) and id: nullifiers are per scenario. */
  projectId: string;
  scenarioId: string;
  nullifierHash: string;
  addressHash: string;
  at: string;
}

/** OffChainZKP nullifiers: "one holder, one address" per scenario. */
interface NullifierStore {
  /** Binds the nullifier to the address unless it is bound already; answers the address hash it is bound to. */
  bindNullifier(binding: NullifierBinding): Promise<string>;
}

export type Store = ScenarioStore & ExecutionStore & IdempotencyStore & NullifierStore;
