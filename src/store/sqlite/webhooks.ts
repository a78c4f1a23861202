import type Database from 'better-sqlite3';
import type { ClaimedWebhook, ExecutionDelivery, WebhookFairness, WebhookOutbox } from '../types.js';
import { WEBHOOK_COLUMNS, type WebhookColumns } from '../rows.js';
import { read, type Transactional } from './database.js';
import { GroupCommit } from '../group-commit.js';

type Row = WebhookColumns<string>;
type Attempt = Parameters<WebhookOutbox['updateWebhook']>[0];
const cols = WEBHOOK_COLUMNS;
/** A delivery's target, its URL's origin (see the claim below). */
const SQLITE_TARGET = "CASE WHEN w.url IS NULL THEN '' WHEN instr(substr(w.url, 9), '/') = 0 THEN substr(w.url, 1, 7) ELSE substr(w.url, 1, instr(substr(w.url, 9), '/') + 7) END";

export function sqliteWebhooks(db: Database.Database, write: Transactional): { outbox: WebhookOutbox; drain(): Promise<void> } {
  // Fair claims: the first `scan` due deliveries outside the skipped targets and projects, at most the room of each
  // target (targetRooms, else perTarget), then projects in turn: every project's earliest before any project's second
  // (a tenant's older backlog does not take every freed slot), at most the room of each project (projectRooms, else
  // perProject). A target is its URL's origin (targetKey in src/domain/webhook-slots.ts): the URL up to the first '/'
  // after 'http://' or 'https://'; '' for WEBHOOK_URL.
  const dueWebhooks = db.prepare<[string, string, string, string, number, string, number, string, number, number], { id: string; project_id: string | null }>(
    `WITH due AS (
       SELECT w.id, ${SQLITE_TARGET} AS target, COALESCE(e.project_id, w.project_id) AS project_id, w.next_attempt_at
       FROM webhook_deliveries w LEFT JOIN executions e ON e.execution_id = w.execution_id
       WHERE w.state = 'pending' AND w.next_attempt_at <= ? AND (w.lease_until IS NULL OR w.lease_until < ?)
         AND ${SQLITE_TARGET} NOT IN (SELECT value FROM json_each(?))
         AND COALESCE(e.project_id, w.project_id, '') NOT IN (SELECT value FROM json_each(?))
       ORDER BY w.next_attempt_at LIMIT ?
     ), target_rooms AS (
       SELECT key AS target, value AS room FROM json_each(?)
     ), by_target AS (
       SELECT id, project_id, next_attempt_at, ROW_NUMBER() OVER (PARTITION BY target ORDER BY next_attempt_at, id) AS k,
         COALESCE((SELECT room FROM target_rooms r WHERE r.target = due.target), ?) AS room
       FROM due
     ), project_rooms AS (
       SELECT key AS project, value AS room FROM json_each(?)
     ), by_project AS (
       SELECT id, project_id, next_attempt_at,
         ROW_NUMBER() OVER (PARTITION BY COALESCE(project_id, '') ORDER BY next_attempt_at, id) AS turn
       FROM by_target WHERE k <= room
     )
     SELECT id, project_id FROM by_project
     WHERE turn <= COALESCE((SELECT room FROM project_rooms r WHERE r.project = COALESCE(by_project.project_id, '')), ?)
     ORDER BY turn, next_attempt_at, id LIMIT ?`,
  );
  const lease = db.prepare<[string, string], Row>(`UPDATE webhook_deliveries SET lease_until = ?, replay_requested = 0 WHERE id = ? RETURNING ${cols}`);
  const release = db.prepare<[string, string]>('UPDATE webhook_deliveries SET lease_until = NULL WHERE id = ? AND lease_until = ?');
  const updateWebhookRow = db.prepare(
    `UPDATE webhook_deliveries SET state = @state, attempts = @attempts, next_attempt_at = @nextAttemptAt, last_status = @lastStatus,
     last_error = @lastError, updated_at = @updatedAt, lease_until = NULL WHERE id = @id AND lease_until = @lease AND replay_requested = 0`,
  );
  // A replay asked during the attempt stands: the attempt only ends its lease.
  const endReplayedLease = db.prepare<[string, string]>(
    'UPDATE webhook_deliveries SET lease_until = NULL, replay_requested = 0 WHERE id = ? AND lease_until = ? AND replay_requested = 1',
  );
  const webhooksOfExecution = db.prepare<[string], Row>(`SELECT ${cols} FROM webhook_deliveries WHERE execution_id = ? ORDER BY created_at, id`);
  // During an attempt (its lease runs), the lease is kept and the replay marked: the attempt's end does not overwrite it.
  const replay = db.prepare<[string, string, string, string, string, string], Row>(
    `UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_at = ?, updated_at = ?,
     replay_requested = CASE WHEN lease_until >= ? THEN 1 ELSE 0 END, lease_until = CASE WHEN lease_until >= ? THEN lease_until END
     WHERE id = ? AND execution_id = ? RETURNING ${cols}`,
  );

  const claimTx = write((now: string, limit: number, leaseUntil: string, fair: WebhookFairness): ClaimedWebhook[] => {
    const picked = dueWebhooks.all(
      now, now, JSON.stringify(fair.skipTargets), JSON.stringify(fair.skipProjects), fair.scan,
      JSON.stringify(fair.targetRooms), fair.perTarget, JSON.stringify(fair.projectRooms), fair.perProject, limit,
    );
    return picked.flatMap((p) => {
      const row = lease.get(leaseUntil, p.id);
      return row ? [{ ...read.webhook(row), projectId: p.project_id }] : [];
    });
  });
  const releaseTx = write((ids: readonly string[], leaseUntil: string) => {
    for (const id of ids) release.run(id, leaseUntil);
  });
  // The attempts that ended in one turn of the event loop, recorded in one transaction (one BEGIN IMMEDIATE and COMMIT
  // on the request thread, not one each): each caller resumes once the transaction holding its row committed, and a
  // failed batch is retried row by row (GroupCommit), so an attempt is acknowledged only when it is written.
  const recordAttempts = write((attempts: Array<{ delivery: Attempt; leaseUntil: string }>) => {
    for (const { delivery, leaseUntil } of attempts) {
      if (updateWebhookRow.run({ ...delivery, lease: leaseUntil }).changes === 0) endReplayedLease.run(delivery.id, leaseUntil);
    }
  });
  const attempts = new GroupCommit(recordAttempts, 256);
  const replayTx = write((now: string, id: string, executionId: string) => replay.get(now, now, now, now, id, executionId));

  const outbox: WebhookOutbox = {
    async claimWebhooks(now, limit, leaseUntil, fair) {
      return claimTx(now, limit, leaseUntil, fair);
    },
    async releaseWebhooks(ids, leaseUntil) {
      if (ids.length > 0) await releaseTx(ids, leaseUntil);
    },
    async updateWebhook(delivery, leaseUntil) {
      await attempts.add({ delivery, leaseUntil });
    },
    async webhooksOf(executionId) {
      // Found by their execution: its events.
      return webhooksOfExecution.all(executionId).map((r) => read.webhook(r) as ExecutionDelivery);
    },
    async replayWebhook(executionId, deliveryId, now) {
      const row = await replayTx(now, deliveryId, executionId);
      return row ? read.webhook(row) as ExecutionDelivery : undefined;
    },
  };
  return { outbox, drain: () => attempts.drain() };
}
