import type { Scenario } from '../schemas/scenario.js';

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

/** undefined: all; '' is no project. */
export type ProjectScope = readonly string[] | undefined;

export interface ScenarioHead {
  seq: number;
  revision: number;
  /** The revision in shadow, if any: read with the head, so no shadow costs no read. */
  shadow: number | null;
}

/** Atomic; an id is unique per project. */
export interface ScenarioRepository {
  /** null: the id is taken; `revise` runs in its transaction. */
  create(id: string, input: Scenario, now: string, revise?: Revise): Promise<ScenarioRow | null>;
  /** In seq order, at most two. */
  find(id: string, scope: ProjectScope): Promise<ScenarioRow[]>;
  heads(id: string, scope: ProjectScope): Promise<ScenarioHead[]>;
  list(limit: number, after?: number, projects?: ProjectScope): Promise<ScenarioPage>;
  /** Compare-and-set: null when gone or moved on; throws ScenarioIdTaken. */
  update(seq: number, input: Scenario, expectedRevision: number, now: string, revise?: Revise): Promise<ScenarioRow | null>;
  delete(seq: number): Promise<boolean>;
}

export type RevisionState = 'live' | 'proposed' | 'approved' | 'rejected';

/** `content`: the text its GET answered. */
export interface ScenarioRevision {
  incarnation: number;
  scenarioId: string;
  projectId: string | null;
  revision: number;
  content: string;
  digest: string;
  patch: string | null;
  author: string | null;
  createdAt: string;
  state: RevisionState;
  baseRevision: number | null;
  decidedBy: string | null;
  decidedAt: string | null;
}

export type RevisionDraft = Omit<ScenarioRevision, 'incarnation' | 'scenarioId' | 'state' | 'baseRevision' | 'decidedBy' | 'decidedAt'>;

/** Run in the write's transaction; its `deliveries` (deployment events) are written in it too. */
export type Revise = (row: ScenarioRow) => {
  made: RevisionDraft;
  replaced?: { revision: number; draft: () => RevisionDraft };
  deliveries?: readonly WebhookDelivery[];
};

export interface RevisionPage {
  items: ScenarioRevision[];
  next?: number;
}

export interface RevisionRun {
  scenarioId: string;
  projectId: string | null;
  scenarioRevision: number;
  scenarioDigest?: string;
  createdAt: string;
}

/** Written by ScenarioRepository's writes. */
export interface ScenarioRevisionRepository {
  listRevisions(incarnation: number, limit: number, after?: number): Promise<RevisionPage>;
  getRevision(incarnation: number, revision: number): Promise<ScenarioRevision | undefined>;
  /** Of the latest incarnation that had it when it ran. */
  revisionRan(run: RevisionRun): Promise<ScenarioRevision | undefined>;
}

interface Approval {
  seq: number;
  revision: number;
  base: number;
  input: Scenario;
  decidedBy: string;
  now: string;
  revise: Revise;
}

/** Four eyes. */
export interface ScenarioApprovals {
  /** null: gone, or no longer at `current.revision`. */
  propose(current: ScenarioRow, input: Scenario, now: string, revise: Revise): Promise<ScenarioRevision | null>;
  /** Compare-and-set on `base`; throws ScenarioIdTaken. */
  approve(approval: Approval): Promise<ScenarioRow | 'stale' | 'decided'>;
  reject(incarnation: number, revision: number, decidedBy: string, now: string): Promise<boolean>;
}

/** An outbox row: an execution's event, or a deployment's (written with a scenario's revision). */
export interface WebhookDelivery {
  id: string;
  /** null: a deployment event (`deployment.updated`), of a scenario rather than an execution. */
  executionId: string | null;
  event: 'execution.completed' | 'execution.failed' | 'deployment.updated';
  /** null: WEBHOOK_URL. */
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

type Status = 'valid' | 'not-valid' | 'error' | 'pending';

/** One rule of a comparison, matched by id; null: the rule is not in that revision. */
export interface ShadowRule {
  id: string;
  live: Status | null;
  shadow: Status | null;
}

/** No credential, no address: the execution id links the rest. */
export interface ShadowComparison {
  incarnation: number;
  revision: number;
  executionId: string;
  /** The execution's, so the retention purge takes both together. */
  createdAt: string;
  flipped: boolean;
  /** The shadow's verdict could not be decided (an error, a credential not verified yet): neither same nor flipped. */
  undecided?: boolean;
  rules: ShadowRule[];
}

export interface ShadowRuleCount {
  ruleId: string;
  compared: number;
  differs: number;
  changes: { live: Status | null; shadow: Status | null; count: number }[];
}

export interface ShadowRun {
  startedAt: string;
  startedBy: string | null;
  stoppedAt: string | null;
  active: boolean;
  compared: number;
  flipped: number;
  undecided: number;
  skipped: number;
  byRule: ShadowRuleCount[];
}

export type ShadowRunPage = ShadowRun & { flippedExecutions: string[]; next?: number };

export interface ShadowSkip {
  incarnation: number;
  revision: number;
  count: number;
}

/** The shadowed revision is kept on the scenario's row (ScenarioHead.shadow): at most one per scenario. */
export interface ShadowRepository {
  startShadow(incarnation: number, revision: number, startedBy: string | null, now: string): Promise<'started' | 'not-proposed' | 'busy' | 'gone'>;
  stopShadow(incarnation: number, revision: number, now: string): Promise<void>;
  /** The kept counts and a page of the flipped executions' ids (after the seq `after`), read in one snapshot. */
  shadowRun(incarnation: number, revision: number, limit: number, after?: number): Promise<ShadowRunPage | undefined>;
  hasShadowRun(incarnation: number, revision: number): Promise<boolean>;
  recordComparisons(comparisons: readonly ShadowComparison[], skipped: readonly ShadowSkip[]): Promise<void>;
}
