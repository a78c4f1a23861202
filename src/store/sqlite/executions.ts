import type Database from 'better-sqlite3';
import type { ExecutionPage, ExecutionRecord, ExecutionRepository } from '../types.js';
import { EXECUTION_COLUMNS, PAGE_MAX_BYTES, pageWithinBytes, pageWithinBytesSql, webhookValues, type ExecutionColumns } from '../rows.js';
import type { GroupCommit } from '../group-commit.js';
import { read, WEBHOOK_INSERT, type Paged, type Transactional } from './database.js';
import type { RevisionWrites } from './revisions.js';
import { sqlitePurgeComparisons } from './shadows.js';

type Row = ExecutionColumns<string, string>;
type Completion = Parameters<ExecutionRepository['completeExecution']>[1];
const cols = EXECUTION_COLUMNS;

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
  const purge = db.prepare<[string]>('DELETE FROM executions WHERE created_at < ?');
  const purgeComparisons = sqlitePurgeComparisons(db);
  // A delivery goes with its execution, and by age in any case (it holds the address, the verdict, any attestation
  // and `$sd` disclosure).
  const purgeWebhooks = db.prepare<[string, string]>(
    'DELETE FROM webhook_deliveries WHERE created_at < ? OR execution_id IN (SELECT execution_id FROM executions WHERE created_at < ?)',
  );
  const finish = db.prepare<[string, string, string, string]>(
    "UPDATE executions SET state = ?, results = ?, updated_at = ? WHERE execution_id = ? AND state = 'pending'",
  );
  const insertWebhook = db.prepare<[Array<string | number | null>]>(WEBHOOK_INSERT);
  const countAnswer = db.prepare<[string, number], { zkp_answers: number }>(
    'UPDATE executions SET zkp_answers = zkp_answers + 1 WHERE execution_id = ? AND zkp_answers < ? RETURNING zkp_answers',
  );
  const expiredPending = db.prepare<[string, number], Row>(
    `SELECT ${cols} FROM executions WHERE state = 'pending' AND expires_at < ? ORDER BY expires_at LIMIT ?`,
  );
  const completeTx = write((executionId: string, completion: Completion): boolean => {
    if (finish.run(completion.state, JSON.stringify(completion.results), completion.updatedAt, executionId).changes === 0) return false;
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
    async listExecutions(scenarioId, limit, before = Number.MAX_SAFE_INTEGER, projects): Promise<ExecutionPage> {
      const rows = projects
        ? pageExecutionsIn.all(scenarioId, before, JSON.stringify(projects), limit + 1, PAGE_MAX_BYTES)
        : pageExecutions.all(scenarioId, before, limit + 1, PAGE_MAX_BYTES);
      return pageWithinBytes(rows, limit, read.execution);
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
