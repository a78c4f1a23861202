import type { ExecutionDelivery, WebhookOutbox } from '../types.js';
import { WEBHOOK_COLUMNS, type WebhookColumns } from '../rows.js';
import { read, UUID, type PostgresDatabase } from './database.js';

type Row = WebhookColumns<Date>;
const WCOLS = WEBHOOK_COLUMNS;
/** A delivery's target, its URL's origin: as SQLITE_TARGET in sqlite/webhooks.ts (and targetKey in the domain). */
const PG_TARGET = "CASE WHEN w.url IS NULL THEN '' WHEN strpos(substr(w.url, 9), '/') = 0 THEN substr(w.url, 1, 7) ELSE substr(w.url, 1, strpos(substr(w.url, 9), '/') + 7) END";

export function postgresWebhooks({ query, write }: PostgresDatabase): WebhookOutbox {
  return {
    async claimWebhooks(now, limit, leaseUntil, fair) {
      // SKIP LOCKED: instances polling at once take different deliveries. Fair as in SQLite's claim (see there):
      // targets by origin, at most perTarget of each, projects in turn.
      const { rows } = await write<Row & { project_id: string | null; turn: string }>(
        `WITH due AS (
           SELECT w.id, ${PG_TARGET} AS target, COALESCE(e.project_id, w.project_id) AS project_id, w.next_attempt_at
           FROM webhook_deliveries w LEFT JOIN executions e ON e.execution_id = w.execution_id
           WHERE w.state = 'pending' AND w.next_attempt_at <= $1 AND (w.lease_until IS NULL OR w.lease_until < $1)
             AND NOT (${PG_TARGET} = ANY($4::text[])) AND NOT (COALESCE(e.project_id, w.project_id, '') = ANY($5::text[]))
           ORDER BY w.next_attempt_at LIMIT $6 FOR UPDATE OF w SKIP LOCKED
         ), by_target AS (
           SELECT id, project_id, next_attempt_at, ROW_NUMBER() OVER (PARTITION BY target ORDER BY next_attempt_at, id) AS k FROM due
         ), by_project AS (
           SELECT id, project_id, next_attempt_at,
             ROW_NUMBER() OVER (PARTITION BY COALESCE(project_id, '') ORDER BY next_attempt_at, id) AS turn
           FROM by_target WHERE k <= $7
         ), picked AS (
           SELECT id, project_id, turn FROM by_project ORDER BY turn, next_attempt_at, id LIMIT $2
         )
         UPDATE webhook_deliveries w SET lease_until = $3, replay_requested = 0 FROM picked WHERE w.id = picked.id
         RETURNING ${WCOLS.split(', ').map((column) => `w.${column}`).join(', ')}, picked.project_id, picked.turn`,
        [now, limit, leaseUntil, fair.skipTargets, fair.skipProjects, fair.scan, fair.perTarget],
      );
      // RETURNING has no order: the claim's (projects in turn, then earliest first) is restored here.
      return rows
        .map((r) => ({ turn: Number(r.turn), delivery: { ...read.webhook(r), projectId: r.project_id } }))
        .sort((a, b) => a.turn - b.turn || a.delivery.nextAttemptAt.localeCompare(b.delivery.nextAttemptAt) || a.delivery.id.localeCompare(b.delivery.id))
        .map((r) => r.delivery);
    },
    async releaseWebhooks(ids, leaseUntil) {
      if (ids.length === 0) return;
      await write('UPDATE webhook_deliveries SET lease_until = NULL WHERE id = ANY($1::uuid[]) AND lease_until = $2', [ids, leaseUntil]);
    },
    async updateWebhook(delivery, leaseUntil) {
      // As in SQLite: a replay asked during the attempt stands, and the attempt only ends its lease.
      const { rowCount } = await write(
        `UPDATE webhook_deliveries SET state = $2, attempts = $3, next_attempt_at = $4, last_status = $5, last_error = $6,
         updated_at = $7, lease_until = NULL WHERE id = $1 AND lease_until = $8 AND replay_requested = 0`,
        [delivery.id, delivery.state, delivery.attempts, delivery.nextAttemptAt, delivery.lastStatus, delivery.lastError, delivery.updatedAt, leaseUntil],
      );
      if (!rowCount) {
        await write(
          'UPDATE webhook_deliveries SET lease_until = NULL, replay_requested = 0 WHERE id = $1 AND lease_until = $2 AND replay_requested = 1',
          [delivery.id, leaseUntil],
        );
      }
    },
    async webhooksOf(executionId) {
      if (!UUID.test(executionId)) return [];
      const { rows } = await query<Row>(`SELECT ${WCOLS} FROM webhook_deliveries WHERE execution_id = $1 ORDER BY created_at, id`, [executionId]);
      // Found by their execution: its events.
      return rows.map((r) => read.webhook(r) as ExecutionDelivery);
    },
    async replayWebhook(executionId, deliveryId, now) {
      if (!UUID.test(executionId) || !UUID.test(deliveryId)) return undefined;
      const { rows } = await write<Row>(
        `UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_at = $1, updated_at = $1,
         replay_requested = CASE WHEN lease_until >= $1 THEN 1 ELSE 0 END, lease_until = CASE WHEN lease_until >= $1 THEN lease_until END
         WHERE id = $2 AND execution_id = $3 RETURNING ${WCOLS}`,
        [now, deliveryId, executionId],
      );
      return rows[0] ? read.webhook(rows[0]) as ExecutionDelivery : undefined;
    },
  };
}
