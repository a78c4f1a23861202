import { verdictOf } from '../../domain/verdict.js';
import type { ExecutionCounts, ExecutionFilter, ExecutionPage, ExecutionRecord, ExecutionRepository, SummaryBucket } from '../types.js';
import {
  EXECUTION_COLUMNS, EXECUTION_INSERT_COLUMNS, WEBHOOK_COLUMNS, WEBHOOK_FIELDS, executionValues, webhookValues, PAGE_MAX_BYTES, pageWithinBytes,
  pageWithinBytesSql, countByRuleSql, countByVerdictSql, countUpToSql, executionFilterWhere, type ExecutionColumns,
} from '../rows.js';
import type { GroupCommit } from '../group-commit.js';
import { placeholders, read, UUID, type Paged, type PostgresDatabase } from './database.js';
import { PURGE_REVISIONS_CTE, inTransaction, readOnly } from './revisions.js';
import { PURGE_COMPARISONS_CTES } from './shadows.js';

type Row = ExecutionColumns<unknown, Date>;
const ECOLS = EXECUTION_COLUMNS;
const WCOLS = WEBHOOK_COLUMNS;
const executionPage = (where: string, limit = '$3', budget = '$4') => pageWithinBytesSql({
  table: 'executions', columns: ECOLS, where, order: 'DESC', size: 'octet_length(results::text) + octet_length(credentials::text)', limit, budget,
});
const EXECUTION_PAGE = executionPage('scenario_id = $1 AND seq < $2');
const EXECUTION_PAGE_IN = executionPage('scenario_id = $1 AND seq < $2 AND project_id = ANY($5)');
/** The bucket's text as SQLite's (the first characters of the ISO instant), in UTC. */
const BUCKET: Record<SummaryBucket, string> = {
  hour: 'to_char(created_at AT TIME ZONE \'UTC\', \'YYYY-MM-DD"T"HH24\')', day: 'to_char(created_at AT TIME ZONE \'UTC\', \'YYYY-MM-DD\')',
};
const RULES = 'jsonb_array_elements(executions.results) AS r';
const RULE_FIELD = { id: "r->>'objectId'", status: "r->'result'->>'status'" };

/** Numbered placeholders in order, and the SQL of a filter over them. */
function filtered(scenarioId: string, filter: ExecutionFilter, projects: readonly string[] | undefined) {
  const values: unknown[] = [];
  const param = (v: unknown) => `$${values.push(v)}`;
  const where = executionFilterWhere(scenarioId, filter, projects, param, (list) => `= ANY(${param(list)})`);
  return { where, values, param };
}

/**
 * One multi-row INSERT per batch of concurrent executions. Their webhooks (the outbox) join it as a data-modifying
 * CTE: one statement, so one transaction and one round trip.
 */
export function insertExecutions({ write }: PostgresDatabase) {
  return async (records: ExecutionRecord[]) => {
    const values: unknown[] = [];
    const tuple = (row: unknown[]) => {
      const first = values.length + 1;
      values.push(...row);
      return `(${row.map((_, k) => `$${first + k}`).join(', ')})`;
    };
    const rows = records.map((r) => tuple(executionValues(r)));
    const hooks = records.flatMap((r) => (r.webhook ? [tuple(webhookValues(r.webhook))] : []));
    const outbox = hooks.length > 0 ? `WITH outbox AS (INSERT INTO webhook_deliveries (${WCOLS}) VALUES ${hooks.join(', ')}) ` : '';
    await write(`${outbox}INSERT INTO executions (${EXECUTION_INSERT_COLUMNS}) VALUES ${rows.join(', ')}`, values);
  };
}

/** Records are inserted through `audit`, the group commit of insertExecutions. */
export function postgresExecutions(db: PostgresDatabase, audit: GroupCommit<ExecutionRecord>): ExecutionRepository {
  const { query, write } = db;
  return {
    recordExecution(record) {
      return audit.add(record);
    },
    async getExecution(executionId) {
      if (!UUID.test(executionId)) return undefined; // the column is a uuid: anything else cannot match
      const { rows } = await query<Row>(`SELECT ${ECOLS} FROM executions WHERE execution_id = $1`, [executionId]);
      return rows[0] ? read.execution(rows[0]) : undefined;
    },
    async listExecutions(scenarioId, limit, before = Number.MAX_SAFE_INTEGER, projects, filter): Promise<ExecutionPage> {
      if (filter !== undefined && Object.keys(filter).length > 0) {
        const { where, values, param } = filtered(scenarioId, filter, projects);
        const sql = executionPage(`${where} AND seq < ${param(before)}`, param(limit + 1), param(PAGE_MAX_BYTES));
        const { rows } = await query<Paged<Row>>(sql, values);
        return pageWithinBytes(rows, limit, read.execution);
      }
      const { rows } = projects
        ? await query<Paged<Row>>(EXECUTION_PAGE_IN, [scenarioId, before, limit + 1, PAGE_MAX_BYTES, projects])
        : await query<Paged<Row>>(EXECUTION_PAGE, [scenarioId, before, limit + 1, PAGE_MAX_BYTES]);
      return pageWithinBytes(rows, limit, read.execution);
    },
    async countExecutions(scenarioId, filter, bucket, projects, max): Promise<ExecutionCounts | undefined> {
      const { where, values } = filtered(scenarioId, filter, projects);
      // count(*) is a bigint, which pg hands as text.
      type Counted<T> = Omit<T, 'n'> & { n: string };
      // One connection, one snapshot: the counts agree with each other and with the bound, one pool slot taken.
      return readOnly(db, async (client) => {
        if (max !== undefined) {
          const { rows } = await client.query<{ n: string }>(countUpToSql(where, `$${values.length + 1}`), [...values, max + 1]);
          if (Number(rows[0]!.n) > max) return undefined;
        }
        const buckets = await client.query<Counted<ExecutionCounts['buckets'][number]>>(countByVerdictSql(BUCKET[bucket], where), values);
        const rules = await client.query<Counted<ExecutionCounts['rules'][number]>>(countByRuleSql(RULES, (name) => RULE_FIELD[name], where), values);
        return { buckets: buckets.rows.map((r) => ({ ...r, n: Number(r.n) })), rules: rules.rows.map((r) => ({ ...r, n: Number(r.n) })) };
      });
    },
    async purgeExecutions(createdBefore) {
      // A delivery goes with its execution, and by age in any case (see the SQLite store), in one statement.
      const { rows } = await write<{ purged: number }>(
        `WITH gone AS (DELETE FROM executions WHERE created_at < $1 RETURNING execution_id),
         hooks AS (DELETE FROM webhook_deliveries WHERE created_at < $1 OR execution_id IN (SELECT execution_id FROM gone)),
         ${PURGE_REVISIONS_CTE},
         ${PURGE_COMPARISONS_CTES}
         SELECT count(*)::int AS purged FROM gone`,
        [createdBefore],
      );
      return rows[0]?.purged ?? 0;
    },
    async completeExecution(executionId, completion) {
      return inTransaction(db, async (client) => {
        const updated = await client.query(
          "UPDATE executions SET state = $1, results = $2, updated_at = $3, verdict = $5 WHERE execution_id = $4 AND state = 'pending'",
          [completion.state, JSON.stringify(completion.results), completion.updatedAt, executionId, verdictOf(completion.results.map((x) => x.result))],
        );
        if (!updated.rowCount) return false;
        if (completion.webhook) {
          await client.query(`INSERT INTO webhook_deliveries (${WCOLS}) VALUES (${placeholders(WEBHOOK_FIELDS)})`, webhookValues(completion.webhook));
        }
        return true;
      });
    },
    async countAnswer(executionId, max) {
      if (!UUID.test(executionId)) return undefined;
      const { rows } = await write<{ zkp_answers: number }>(
        'UPDATE executions SET zkp_answers = zkp_answers + 1 WHERE execution_id = $1 AND zkp_answers < $2 RETURNING zkp_answers',
        [executionId, max],
      );
      return rows[0]?.zkp_answers;
    },
    async expiredPendingExecutions(before, limit) {
      const { rows } = await query<Row>(
        `SELECT ${ECOLS} FROM executions WHERE state = 'pending' AND expires_at < $1 ORDER BY expires_at LIMIT $2`,
        [before, limit],
      );
      return rows.map(read.execution);
    },
  };
}
