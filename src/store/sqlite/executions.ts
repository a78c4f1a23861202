import type Database from 'better-sqlite3';
import { verdictOf, type Verdict } from '../../domain/verdict.js';
import type { ExecutionCounts, ExecutionFilter, ExecutionPage, ExecutionRecord, ExecutionRepository, SummaryBucket } from '../types.js';
import {
  EXECUTION_COLUMNS, PAGE_MAX_BYTES, countByRuleSql, countUpToSql, countByVerdictSql, executionFilterWhere, pageWithinBytes, pageWithinBytesSql, webhookValues,
  type ExecutionColumns,
} from '../rows.js';
import type { GroupCommit } from '../group-commit.js';
import { read, statementCache, WEBHOOK_INSERT, type Paged, type Transactional } from './database.js';
import type { RevisionWrites } from './revisions.js';
import { sqlitePurgeComparisons } from './shadows.js';

type Row = ExecutionColumns<string, string>;
type Completion = Parameters<ExecutionRepository['completeExecution']>[1];
const cols = EXECUTION_COLUMNS;
/** ISO text: the bucket is its first 13 (hour) or 10 (day) characters. */
const BUCKET: Record<SummaryBucket, string> = { hour: 'substr(created_at, 1, 13)', day: 'substr(created_at, 1, 10)' };
const RULES = 'json_each(executions.results) AS r';
const RULE_FIELD = { id: "json_extract(r.value, '$.objectId')", status: "json_extract(r.value, '$.result.status')" };

/** Bound values in order, and the SQL of a filter over them. */
function filtered(scenarioId: string, filter: ExecutionFilter, projects: readonly string[] | undefined) {
  const values: unknown[] = [];
  const where = executionFilterWhere(scenarioId, filter, projects, (v) => {
    values.push(v);
    return '?';
  }, (list) => {
    values.push(JSON.stringify(list));
    return 'IN (SELECT value FROM json_each(?))';
  });
  return { where, values };
}

/** Records are inserted through `audit`, the group commit of the writer; the rest on the request thread's connection. */
export function sqliteExecutions(
  db: Database.Database, write: Transactional, audit: GroupCommit<ExecutionRecord>, revisions: Pick<RevisionWrites, 'purge'>,
): ExecutionRepository {
  const selectExecution = db.prepare<[string], Row>(`SELECT ${cols} FROM executions WHERE execution_id = ?`);
  const executionPage = (where: string) => pageWithinBytesSql({
    table: 'executions', columns: cols, where, order: 'DESC', size: 'octet_length(results) + octet_length(credentials)', limit: '?', budget: '?',
  });
  const pageExecutions = db.prepare<[string, number, number, number], Paged<Row>>(executionPage('scenario_id = ? AND seq < ?'));
  const pageExecutionsIn = db.prepare<[string, number, string, number, number], Paged<Row>>(
    executionPage('scenario_id = ? AND seq < ? AND project_id IN (SELECT value FROM json_each(?))'),
  );
  const prepared = statementCache(db);
  const purge = db.prepare<[string]>('DELETE FROM executions WHERE created_at < ?');
  const purgeComparisons = sqlitePurgeComparisons(db);
  // A delivery goes with its execution, and by age in any case (it holds the address, the verdict, any attestation
  // and `$sd` disclosure).
  const purgeWebhooks = db.prepare<[string, string]>(
    'DELETE FROM webhook_deliveries WHERE created_at < ? OR execution_id IN (SELECT execution_id FROM executions WHERE created_at < ?)',
  );
  const finish = db.prepare<[string, string, string, Verdict, string]>(
    "UPDATE executions SET state = ?, results = ?, updated_at = ?, verdict = ? WHERE execution_id = ? AND state = 'pending'",
  );
  const insertWebhook = db.prepare<[Array<string | number | null>]>(WEBHOOK_INSERT);
  const countAnswer = db.prepare<[string, number], { zkp_answers: number }>(
    'UPDATE executions SET zkp_answers = zkp_answers + 1 WHERE execution_id = ? AND zkp_answers < ? RETURNING zkp_answers',
  );
  const expiredPending = db.prepare<[string, number], Row>(
    `SELECT ${cols} FROM executions WHERE state = 'pending' AND expires_at < ? ORDER BY expires_at LIMIT ?`,
  );
  const completeTx = write((executionId: string, completion: Completion): boolean => {
    const verdict = verdictOf(completion.results.map((x) => x.result));
    if (finish.run(completion.state, JSON.stringify(completion.results), completion.updatedAt, verdict, executionId).changes === 0) return false;
    if (completion.webhook) insertWebhook.run(webhookValues(completion.webhook));
    return true;
  });
  const purgeTx = write((createdBefore: string) => {
    purgeWebhooks.run(createdBefore, createdBefore);
    const purged = purge.run(createdBefore);
    revisions.purge(createdBefore);
    purgeComparisons(createdBefore);
    return purged;
  });
  const countAnswerTx = write((executionId: string, max: number) => countAnswer.get(executionId, max)?.zkp_answers);

  return {
    recordExecution(record) {
      return audit.add(record);
    },
    async getExecution(executionId) {
      const row = selectExecution.get(executionId);
      return row ? read.execution(row) : undefined;
    },
    async listExecutions(scenarioId, limit, before = Number.MAX_SAFE_INTEGER, projects, filter): Promise<ExecutionPage> {
      if (filter !== undefined && Object.keys(filter).length > 0) {
        const { where, values } = filtered(scenarioId, filter, projects);
        const rows = prepared(executionPage(`${where} AND seq < ?`)).all(...values, before, limit + 1, PAGE_MAX_BYTES) as Paged<Row>[];
        return pageWithinBytes(rows, limit, read.execution);
      }
      const rows = projects
        ? pageExecutionsIn.all(scenarioId, before, JSON.stringify(projects), limit + 1, PAGE_MAX_BYTES)
        : pageExecutions.all(scenarioId, before, limit + 1, PAGE_MAX_BYTES);
      return pageWithinBytes(rows, limit, read.execution);
    },
    async countExecutions(scenarioId, filter, bucket, projects, max): Promise<ExecutionCounts | undefined> {
      const { where, values } = filtered(scenarioId, filter, projects);
      if (max !== undefined && (prepared(countUpToSql(where, '?')).get(...values, max + 1) as { n: number }).n > max) return undefined;
      return {
        buckets: prepared(countByVerdictSql(BUCKET[bucket], where)).all(...values) as ExecutionCounts['buckets'],
        rules: prepared(countByRuleSql(RULES, (name) => RULE_FIELD[name], where)).all(...values) as ExecutionCounts['rules'],
      };
    },
    async purgeExecutions(createdBefore) {
      return (await purgeTx(createdBefore)).changes;
    },
    async completeExecution(executionId, completion) {
      return completeTx(executionId, completion);
    },
    async countAnswer(executionId, max) {
      return countAnswerTx(executionId, max);
    },
    async expiredPendingExecutions(before, limit) {
      return expiredPending.all(before, limit).map(read.execution);
    },
  };
}
