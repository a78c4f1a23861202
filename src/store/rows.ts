/**
 * Rows as both databases return them, and their mapping to records. The column names and meanings are the same;
 * only the physical types differ: SQLite gives JSON as text and instants as ISO strings, PostgreSQL gives JSONB as
 * values and timestamptz as Date. `J` and `T` are those types, and each store hands in how to read them.
 */
import type { Scenario } from '../schemas/scenario.js';
import type { ExecutionRecord, ScenarioRow, WebhookDelivery } from './types.js';

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
  /**
   * ExecutionRecord.pending. The column (and `zkp_answers`, countAnswer's) keeps the name of the first type that used
   * it: renaming would break instances of the previous version still running during a rolling upgrade.
   */
  zkp: J | null;
  expires_at: T | null;
  scenario_digest: string | null;
  /** 1 or 0; null in records written before it was kept. */
  holder_bound: number | null;
}

export interface WebhookColumns<T> {
  id: string;
  execution_id: string;
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
/** The columns an execution record is inserted with, in the order of executionValues. */
export const EXECUTION_INSERT_COLUMNS =
  'execution_id, scenario_id, scenario_revision, project_id, address, state, results, credentials, created_at, updated_at, zkp, expires_at, ' +
  'scenario_digest, holder_bound';
/** How many: the placeholders of one inserted row. */
export const EXECUTION_INSERT_FIELDS = EXECUTION_INSERT_COLUMNS.split(',').length;
export const EXECUTION_COLUMNS = `seq, ${EXECUTION_INSERT_COLUMNS}`;

/** An execution record as the values of one INSERT row (JSON as text: both databases take it so). */
export function executionValues(r: ExecutionRecord): Array<string | number | null> {
  return [
    r.executionId, r.scenarioId, r.scenarioRevision, r.projectId ?? null, r.address, r.state, r.resultsJson ?? JSON.stringify(r.results),
    JSON.stringify(r.credentials), r.createdAt, r.updatedAt, r.pending == null ? null : JSON.stringify(r.pending), r.expiresAt ?? null,
    r.scenarioDigest ?? null, r.holderBound === undefined ? null : Number(r.holderBound),
  ];
}

export const WEBHOOK_COLUMNS = 'id, execution_id, event, url, payload, state, attempts, next_attempt_at, last_status, last_error, created_at, updated_at';
/** How many: the placeholders of one inserted delivery. */
export const WEBHOOK_FIELDS = WEBHOOK_COLUMNS.split(',').length;

/** A delivery as the values of one INSERT row, in the order of WEBHOOK_COLUMNS. */
export function webhookValues(w: WebhookDelivery): Array<string | number | null> {
  return [w.id, w.executionId, w.event, w.url ?? null, w.payload, w.state, w.attempts, w.nextAttemptAt, w.lastStatus, w.lastError, w.createdAt, w.updatedAt];
}

/**
 * A page of at most `limit` records from up to limit + 1 rows, and the seq to continue from when there were more.
 * Throws a RangeError for a limit below 1, with which no page can say where the next one starts.
 */
function pageOf<R, V extends { seq: number }>(rows: readonly R[], limit: number, read: (row: R) => V): { items: V[]; next?: number } {
  const items = rows.slice(0, limit).map(read);
  if (rows.length <= limit) return { items };
  const last = items.at(-1);
  if (last === undefined) throw new RangeError(`a page limit must be at least 1, not ${limit}`);
  return { items, next: last.seq };
}

/**
 * The most bytes of stored JSON (an execution's results and credentials, a scenario's input) one page of a listing
 * holds: a page ends at `limit` records or at this budget, whichever comes first, and always holds one record. 100
 * executions of a large scenario made one page of 335 MB (10.6 s of CPU, 1.8 GB of memory) before.
 */
export const PAGE_MAX_BYTES = 1024 * 1024;

/**
 * A page query bounded in bytes as well as in rows: of the first `limit` rows `where` selects, in seq order, those
 * whose running total of `size` (bytes, measured by the database without reading the values out) stays within
 * `budget`, and always the first. Each row carries `page_rows`: how many the limit alone selected. `limit` and
 * `budget` are the placeholders of those parameters ('?' on SQLite, '$n' on PostgreSQL).
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

/** pageOf for the rows of pageWithinBytesSql: a page the byte budget ended early continues after its last record. */
export function pageWithinBytes<R extends { page_rows: number | string }, V extends { seq: number }>(
  rows: readonly R[], limit: number, read: (row: R) => V,
): { items: V[]; next?: number } {
  const page = pageOf(rows, limit, read);
  const last = page.items.at(-1);
  if (page.next !== undefined || last === undefined || rows.length >= Number(rows[0]?.page_rows)) return page;
  return { items: page.items, next: last.seq };
}

/**
 * The parse boundary of the stores: a JSON column holds what this service wrote there, validated on the way in,
 * so it is read back as that type without checking it again.
 */
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
