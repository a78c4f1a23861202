// Both databases' rows: only `J` (JSON: text or values) and `T` (instants: ISO strings or Date) differ.
import type { Scenario } from '../schemas/scenario.js';
import { verdictOf } from '../domain/verdict.js';
import type { EvidenceRange, ExecutionFilter, ExecutionEvidence, ExecutionRecord, ScenarioRow, WebhookDelivery } from './types.js';

export interface Columns<J, T> {
  json: (v: J) => unknown;
  time: (v: T) => string;
}

export interface ScenarioColumns<J, T> {
  seq: number;
  id: string;
  input: J;
  revision: number;
  created_at: T;
  updated_at: T;
}

export interface ExecutionColumns<J, T> {
  seq: number;
  execution_id: string;
  scenario_id: string;
  scenario_revision: number;
  project_id: string | null;
  address: string;
  state: ExecutionRecord['state'];
  results: J;
  credentials: J;
  created_at: T;
  updated_at: T;
  /** ExecutionRecord.pending; like `zkp_answers`, named for its first type: a rename would break rolling upgrades. */
  zkp: J | null;
  expires_at: T | null;
  scenario_digest: string | null;
  /** 1 or 0; null in older records. */
  holder_bound: number | null;
  /** Of the results, kept for the filters and counts (migration 22). */
  verdict: string | null;
}

export interface EvidenceColumns<J, T> {
  seq: number;
  execution_id: string;
  created_at: T;
  project_id: string | null;
  scenario_id: string;
  scenario_revision: number;
  scenario_digest: string | null;
  address: string;
  state: ExecutionRecord['state'];
  rules: J;
  credentials: J;
}

/** `rules` and `digests`: SQL that makes the JSON arrays from `results` and `credentials` in the database. */
export const evidenceColumns = (rules: string, digests: string) =>
  `seq, execution_id, created_at, project_id, scenario_id, scenario_revision, scenario_digest, address, state, ${rules} AS rules, ${digests} AS credentials`;

/**
 * An evidence range as SQL: `param` binds a value and gives its placeholder; `inProjects` tests the projects' one.
 * One bound a side on created_at, the tighter: SQLite seeks by one of them and would otherwise scan from `from`.
 */
export function evidenceWhere(range: EvidenceRange, param: (value: unknown) => string): string {
  const { after, through } = range;
  const parts: string[] = [];
  if (after && after.createdAt >= range.from) {
    parts.push(`created_at >= ${param(after.createdAt)} AND (created_at > ${param(after.createdAt)} OR seq > ${param(after.seq)})`);
  } else {
    parts.push(`created_at >= ${param(range.from)}`);
  }
  if (through && through.createdAt < range.to) {
    parts.push(`created_at <= ${param(through.createdAt)} AND (created_at < ${param(through.createdAt)} OR seq <= ${param(through.seq)})`);
  } else {
    parts.push(`created_at < ${param(range.to)}`);
  }
  if (range.scenarioId !== undefined) parts.push(`scenario_id = ${param(range.scenarioId)}`);
  if (range.verdict !== undefined) parts.push(`verdict = ${param(range.verdict)}`);
  if (range.address !== undefined) parts.push(`address = ${param(range.address)}`);
  if (range.project === null) parts.push('project_id IS NULL');
  else if (range.project !== undefined) parts.push(`project_id = ${param(range.project)}`);
  return parts.join(' AND ');
}

/**
 * A scenario's executions that pass `filter`, as SQL: `param` binds a value and gives its placeholder, `inProjects`
 * tests the project against the bound list. Served by the indexes of migration 22 (scenario and verdict, address, or
 * creation time).
 */
export function executionFilterWhere(
  scenarioId: string, filter: ExecutionFilter, projects: readonly string[] | undefined,
  param: (value: unknown) => string, inProjects: (projects: readonly string[]) => string,
): string {
  const parts = [`scenario_id = ${param(scenarioId)}`];
  if (filter.verdict !== undefined) parts.push(`verdict = ${param(filter.verdict)}`);
  if (filter.address !== undefined) parts.push(`address = ${param(filter.address)}`);
  if (filter.from !== undefined) parts.push(`created_at >= ${param(filter.from)}`);
  if (filter.to !== undefined) parts.push(`created_at < ${param(filter.to)}`);
  // '' names the project-less, as for scenarios (a row without a project has NULL).
  if (projects !== undefined) parts.push(`COALESCE(project_id, '') ${inProjects(projects)}`);
  return parts.join(' AND ');
}

/** Up to `max + 1` rows of the filter, counted: more than `max` refuses the summary. */
export const countUpToSql = (where: string, limit: string) =>
  `SELECT count(*) AS n FROM (SELECT 1 FROM executions WHERE ${where} LIMIT ${limit}) AS capped`;

/** Per bucket and verdict; `bucket` is the dialect's SQL for the bucket's text. */
export const countByVerdictSql = (bucket: string, where: string) =>
  `SELECT ${bucket} AS bucket, verdict, count(*) AS n FROM executions WHERE ${where} GROUP BY 1, 2`;

/**
 * Per rule id and failing status; `rules` unnests `results` as `r`, `field` reads its id or status. Only the results
 * of failed and error executions are read: a rule not-valid or error makes one of those verdicts.
 */
export const countByRuleSql = (rules: string, field: (name: 'id' | 'status') => string, where: string) =>
  `SELECT ${field('id')} AS id, ${field('status')} AS status, count(*) AS n FROM executions, ${rules}
    WHERE ${where} AND verdict IN ('failed', 'error') AND ${field('status')} IN ('not-valid', 'error') GROUP BY 1, 2`;

export interface WebhookColumns<T> {
  id: string;
  execution_id: string | null;
  event: WebhookDelivery['event'];
  url: string | null;
  payload: string;
  state: WebhookDelivery['state'];
  attempts: number;
  next_attempt_at: T;
  last_status: number | null;
  last_error: string | null;
  created_at: T;
  updated_at: T;
}

export const SCENARIO_COLUMNS = 'seq, id, input, revision, created_at, updated_at';
/** In the order of executionValues. */
export const EXECUTION_INSERT_COLUMNS =
  'execution_id, scenario_id, scenario_revision, project_id, address, state, results, credentials, created_at, updated_at, zkp, expires_at, ' +
  'scenario_digest, holder_bound, verdict';
export const EXECUTION_INSERT_FIELDS = EXECUTION_INSERT_COLUMNS.split(',').length;
export const EXECUTION_COLUMNS = `seq, ${EXECUTION_INSERT_COLUMNS}`;

/** JSON as text: both databases take it so. */
export function executionValues(r: ExecutionRecord): Array<string | number | null> {
  return [
    r.executionId, r.scenarioId, r.scenarioRevision, r.projectId ?? null, r.address, r.state, r.resultsJson ?? JSON.stringify(r.results),
    JSON.stringify(r.credentials), r.createdAt, r.updatedAt, r.pending == null ? null : JSON.stringify(r.pending), r.expiresAt ?? null,
    r.scenarioDigest ?? null, r.holderBound === undefined ? null : Number(r.holderBound), verdictOf(r.results.map((x) => x.result)),
  ];
}

export const WEBHOOK_COLUMNS = 'id, execution_id, event, url, payload, state, attempts, next_attempt_at, last_status, last_error, created_at, updated_at';
export const WEBHOOK_FIELDS = WEBHOOK_COLUMNS.split(',').length;

export function webhookValues(w: WebhookDelivery): Array<string | number | null> {
  return [w.id, w.executionId, w.event, w.url ?? null, w.payload, w.state, w.attempts, w.nextAttemptAt, w.lastStatus, w.lastError, w.createdAt, w.updatedAt];
}

/** A deployment event, of a scenario of project `projectId` (its claims are fair by it, as an execution's by its own). */
export const DEPLOYMENT_DELIVERY_INSERT = (placeholder: (k: number) => string) =>
  `INSERT INTO webhook_deliveries (${WEBHOOK_COLUMNS}, project_id) VALUES (${Array.from({ length: WEBHOOK_FIELDS + 1 }, (_, k) => placeholder(k)).join(', ')})`;

/** `limit` below 1: a RangeError, since no page could say where the next starts. */
function pageOf<R, V extends { seq: number }>(rows: readonly R[], limit: number, read: (row: R) => V): { items: V[]; next?: number } {
  const items = rows.slice(0, limit).map(read);
  if (rows.length <= limit) return { items };
  const last = items.at(-1);
  if (last === undefined) throw new RangeError(`a page limit must be at least 1, not ${limit}`);
  return { items, next: last.seq };
}

/** Of stored JSON per page (which holds one record at least): 100 large executions would make 335 MB. */
export const PAGE_MAX_BYTES = 1024 * 1024;

/**
 * Of the first `limit` rows in seq order, those whose running total of `size` (measured by the database, without
 * reading the values out) stays within `budget`, and always the first; `page_rows` is how many the limit selected.
 */
export function pageWithinBytesSql(q: {
  table: string; columns: string; where: string; order: 'ASC' | 'DESC'; size: string; limit: string; budget: string;
}): string {
  const columns = q.columns.split(', ').map((c) => `t.${c}`).join(', ');
  return `WITH page AS (SELECT seq, ${q.size} AS bytes FROM ${q.table} WHERE ${q.where} ORDER BY seq ${q.order} LIMIT ${q.limit}),
    sized AS (
      SELECT seq, row_number() OVER w AS n, sum(bytes) OVER w AS running, count(*) OVER () AS page_rows
      FROM page WINDOW w AS (ORDER BY seq ${q.order})
    )
    SELECT ${columns}, sized.page_rows FROM sized JOIN ${q.table} t ON t.seq = sized.seq
    WHERE sized.n = 1 OR sized.running <= ${q.budget} ORDER BY t.seq ${q.order}`;
}

/** A page the byte budget ended early continues after its last record. */
export function pageWithinBytes<R extends { page_rows: number | string }, V extends { seq: number }>(
  rows: readonly R[], limit: number, read: (row: R) => V,
): { items: V[]; next?: number } {
  const page = pageOf(rows, limit, read);
  const last = page.items.at(-1);
  if (page.next !== undefined || last === undefined || rows.length >= Number(rows[0]?.page_rows)) return page;
  return { items: page.items, next: last.seq };
}

/** A JSON column holds what this service validated and wrote. */
function stored<V>(value: unknown): V {
  return value as V;
}

export function readers<J, T>({ json, time }: Columns<J, T>) {
  return {
    scenario: (r: ScenarioColumns<J, T>): ScenarioRow => ({
      seq: r.seq,
      id: r.id,
      input: stored<Scenario>(json(r.input)),
      revision: r.revision,
      createdAt: time(r.created_at),
      updatedAt: time(r.updated_at),
    }),
    execution: (r: ExecutionColumns<J, T>): ExecutionRecord & { seq: number } => ({
      seq: r.seq,
      executionId: r.execution_id,
      scenarioId: r.scenario_id,
      scenarioRevision: r.scenario_revision,
      projectId: r.project_id,
      address: r.address,
      state: r.state,
      results: stored<ExecutionRecord['results']>(json(r.results)),
      credentials: stored<ExecutionRecord['credentials']>(json(r.credentials)),
      createdAt: time(r.created_at),
      updatedAt: time(r.updated_at),
      pending: r.zkp === null ? null : stored<ExecutionRecord['pending']>(json(r.zkp)),
      expiresAt: r.expires_at === null ? null : time(r.expires_at),
      ...(r.scenario_digest !== null && { scenarioDigest: r.scenario_digest }),
      ...(r.holder_bound !== null && { holderBound: r.holder_bound === 1 }),
    }),
    evidence: (r: EvidenceColumns<J, T>): ExecutionEvidence => ({
      executionId: r.execution_id,
      createdAt: time(r.created_at),
      projectId: r.project_id,
      scenarioId: r.scenario_id,
      scenarioRevision: r.scenario_revision,
      scenarioDigest: r.scenario_digest,
      address: r.address,
      state: r.state,
      rules: stored<ExecutionEvidence['rules']>(json(r.rules)),
      credentials: stored<string[]>(json(r.credentials)),
      seq: r.seq,
    }),
    webhook: (r: WebhookColumns<T>): WebhookDelivery => ({
      id: r.id,
      executionId: r.execution_id,
      event: r.event,
      url: r.url,
      payload: r.payload,
      state: r.state,
      attempts: r.attempts,
      nextAttemptAt: time(r.next_attempt_at),
      lastStatus: r.last_status,
      lastError: r.last_error,
      createdAt: time(r.created_at),
      updatedAt: time(r.updated_at),
    }),
  };
}
