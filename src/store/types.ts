import type { ExecutionResult } from '../schemas/execution.js';
import type { Verdict } from '../domain/verdict.js';
import type { ProjectScope, ScenarioApprovals, ScenarioRepository, ScenarioRevisionRepository, ScenarioRow, ShadowRepository, WebhookDelivery } from './scenario-types.js';

export type * from './scenario-types.js';

export interface StoreHandle {
  readonly kind: 'sqlite' | 'postgres';
  ping(): Promise<void>;
  close(): Promise<void>;
}

interface CredentialDigest {
  id: string;
  sha256: string;
}

type ExecutionState = 'completed' | 'pending' | 'failed';

export interface ExecutionRecord {
  executionId: string;
  scenarioId: string;
  scenarioRevision: number;
  projectId: string | null;
  address: string;
  state: ExecutionState;
  results: ExecutionResult[];
  resultsJson?: string;
  credentials: CredentialDigest[];
  createdAt: string;
  updatedAt: string;
  pending?: PendingState | null;
  expiresAt?: string | null;
  webhook?: ExecutionDelivery;
  /** As when it ran; absent in older records. */
  scenarioDigest?: string;
  holderBound?: boolean;
}

/** Kept whole; `expiresAt` in epoch seconds. */
export type PendingState = Record<string, unknown> & { expiresAt: number; request?: object };

/** A delivery of an execution's event: what an execution's deliveries are. */
export type ExecutionDelivery = WebhookDelivery & { executionId: string; event: 'execution.completed' | 'execution.failed' };

/**
 * What one claim may take: of the first `scan` due deliveries outside the skipped targets and projects, at most
 * `targetRooms[target]` of a target (`perTarget` for one not listed) and `projectRooms[project]` of a project
 * (`perProject` for one not listed; '' is no project).
 */
export interface WebhookFairness {
  perTarget: number;
  perProject: number;
  scan: number;
  skipTargets: readonly string[];
  skipProjects: readonly string[];
  targetRooms: Readonly<Record<string, number>>;
  projectRooms: Readonly<Record<string, number>>;
}

export type ClaimedWebhook = WebhookDelivery & { projectId: string | null };

interface ExecutionCompletion {
  state: 'completed' | 'failed';
  results: ExecutionResult[];
  updatedAt: string;
  webhook?: ExecutionDelivery;
}

export interface ExecutionPage {
  items: ExecutionRecord[];
  next?: number;
}

/** What narrows a scenario's executions: each one given must hold; created in [from, to). */
export interface ExecutionFilter {
  verdict?: Verdict;
  address?: string;
  from?: string;
  to?: string;
}

export type SummaryBucket = 'hour' | 'day';

/** Counted by the database: per bucket (its start's text, `YYYY-MM-DDTHH` or `YYYY-MM-DD`, UTC) and verdict, per rule and status. */
export interface ExecutionCounts {
  buckets: { bucket: string; verdict: Verdict; n: number }[];
  rules: { id: string; status: 'not-valid' | 'error'; n: number }[];
}

export interface ExecutionRepository {
  recordExecution(record: ExecutionRecord): Promise<void>;
  getExecution(executionId: string): Promise<ExecutionRecord | undefined>;
  listExecutions(scenarioId: string, limit: number, before?: number, projects?: ProjectScope, filter?: ExecutionFilter): Promise<ExecutionPage>;
  /**
   * The executions of [from, to) that pass `filter`, counted; undefined when they are more than `max` (counted first
   * with a LIMIT, so a long period costs no more than `max` rows).
   */
  countExecutions(
    scenarioId: string, filter: ExecutionFilter & { from: string; to: string }, bucket: SummaryBucket, projects?: ProjectScope, max?: number,
  ): Promise<ExecutionCounts | undefined>;
  purgeExecutions(createdBefore: string): Promise<number>;
  /** Compare-and-set on pending, with its webhook; false when not pending. */
  completeExecution(executionId: string, completion: ExecutionCompletion): Promise<boolean>;
  /** The new count; undefined at `max` or when gone. */
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
  verdict?: Verdict;
  address?: string;
  project?: string | null;
  after?: EvidenceKey;
  through?: EvidenceKey;
}

/** Keyset pages of the audit log by creation time. */
export interface ExecutionExport {
  evidencePage(range: EvidenceRange, limit: number): Promise<ExecutionEvidence[]>;
  /** The key of the range's `n`th record (from 1), if any, and whether a record follows it: one read. */
  evidenceCut(range: EvidenceRange, n: number): Promise<{ key?: EvidenceKey; more: boolean }>;
}

export interface WebhookOutbox {
  /** Leased until `leaseUntil`, earliest first. */
  claimWebhooks(now: string, limit: number, leaseUntil: string, fair: WebhookFairness): Promise<ClaimedWebhook[]>;
  releaseWebhooks(ids: readonly string[], leaseUntil: string): Promise<void>;
  /** Ends the lease; a replay asked meanwhile stands. */
  updateWebhook(delivery: Pick<WebhookDelivery, 'id' | 'state' | 'attempts' | 'nextAttemptAt' | 'lastStatus' | 'lastError' | 'updatedAt'>, leaseUntil: string): Promise<void>;
  webhooksOf(executionId: string): Promise<ExecutionDelivery[]>;
  /** Due now with fresh attempts, whatever its state. */
  replayWebhook(executionId: string, deliveryId: string, now: string): Promise<ExecutionDelivery | undefined>;
}

interface IdempotentResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

type IdempotencyClaim =
  | { claimed: true }
  | { claimed: false; requestHash: string; response?: IdempotentResponse };

export interface IdempotencyRepository {
  /** Expired or lease-lapsed keys count as free. */
  claimIdempotencyKey(key: string, requestHash: string, now: string, expiredBefore: string, leaseUntil: string): Promise<IdempotencyClaim>;
  renewIdempotencyLease(key: string, leaseUntil: string): Promise<void>;
  completeIdempotencyKey(key: string, response: IdempotentResponse): Promise<void>;
  releaseIdempotencyKey(key: string): Promise<void>;
  purgeIdempotencyKeys(createdBefore: string): Promise<number>;
}

interface NullifierBinding {
  projectId: string;
  scenarioId: string;
  nullifierHash: string;
  addressHash: string;
  at: string;
}

export interface NullifierRepository {
  /** The address hash bound to it (this one if none). */
  bindNullifier(binding: NullifierBinding): Promise<string>;
}

/** What the chain follower reads and holds (src/services/deployment-follower.ts). */
export interface DeploymentFollowing {
  /** Live scenarios holding a TxPosted transaction or a DeploymentStarted deployment (an index of them), by seq after `after`. */
  scenariosToFollow(after: number, limit: number): Promise<ScenarioRow[]>;
  /** Takes or renews lease `name` for `holder` until `until`; false while another holder's has not expired at `now`. */
  holdLease(name: string, holder: string, ttlMs: number): Promise<boolean>;
  releaseLease(name: string, holder: string): Promise<void>;
}

/**
 * A deploy transaction's life: `reserved` (its nonce taken, not signed), `signed` (raw transaction and hash stored,
 * maybe not broadcast), `broadcast`, `recorded` (in its scenario's deployment), then `mined` (its nonce is used on
 * chain) or `replaced` (a higher fee took its nonce).
 */
export type ChainSendState = 'reserved' | 'signed' | 'broadcast' | 'recorded' | 'mined' | 'replaced' | 'failed';
export const OPEN_SEND_STATES: readonly ChainSendState[] = ['reserved', 'signed', 'broadcast', 'recorded'];

export interface ChainSend {
  id: string;
  chain: string;
  sender: string;
  nonce: number;
  /** The unsigned transaction (JSON): no key, no signature. */
  request: string;
  raw: string | null;
  txHash: string | null;
  /** What it is for (JSON): its scenario and deployment. */
  purpose: string;
  state: ChainSendState;
  /** The send whose nonce it takes again with a higher fee. */
  replaces: string | null;
  createdAt: string;
  updatedAt: string;
}

export type NewChainSend = Pick<ChainSend, 'id' | 'chain' | 'sender' | 'request' | 'purpose' | 'createdAt'>;

export interface ChainSendRepository {
  /**
   * Under the lock of the (chain, sender) row: the nonce is the larger of its next nonce and `chainNonce` (what the
   * chain expects), the row moves past it, and the send is stored `reserved`, all in one transaction. An open send of
   * the same (chain, sender) that `duplicate` accepts is answered instead, nothing stored (its id tells it apart); so
   * is one that became `mined` at or after `minedSince` (its deploy ended while the caller prepared the same call).
   */
  reserveSend(send: NewChainSend, chainNonce: number, duplicate?: (open: ChainSend) => boolean, minedSince?: string): Promise<ChainSend>;
  signSend(id: string, raw: string, txHash: string, at: string): Promise<void>;
  /** True when this call moved it (its state was one of `from`). */
  moveSend(id: string, from: readonly ChainSendState[], to: ChainSendState, at: string): Promise<boolean>;
  /**
   * Stores `replacement` (signed, the same nonce) when `replacedId` is still open, marking it replaced (from
   * broadcast or recorded) or failed (from signed: the node refused it for good); false otherwise.
   */
  replaceSend(replacedId: string, replacement: ChainSend, outcome?: 'replaced' | 'failed'): Promise<boolean>;
  openSends(): Promise<ChainSend[]>;
  /** The sends on `chain` whose transaction hash (lower case) is among `hashes`, whatever their state. */
  sendsWithHashes(chain: string, hashes: readonly string[]): Promise<ChainSend[]>;
}

export type Store = StoreHandle & ScenarioRepository & ScenarioRevisionRepository & ScenarioApprovals & ExecutionRepository & WebhookOutbox &
  IdempotencyRepository & NullifierRepository & ExecutionExport & ChainSendRepository & DeploymentFollowing & ShadowRepository;
