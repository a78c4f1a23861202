import type { ExecutionDelivery, WebhookOutbox } from '../types.js';
import { WEBHOOK_COLUMNS, type WebhookColumns } from '../rows.js';
import { read, UUID, type PostgresDatabase } from './database.js';
import { GroupCommit } from '../group-commit.js';

type Row = WebhookColumns<Date>;
const WCOLS = WEBHOOK_COLUMNS;
/** A delivery's target, its URL's origin: as SQLITE_TARGET in sqlite/webhooks.ts (and targetKey in the domain). */
const PG_TARGET = "CASE WHEN w.url IS NULL THEN '' WHEN strpos(substr(w.url, 9), '/') = 0 THEN substr(w.url, 1, 7) ELSE substr(w.url, 1, strpos(substr(w.url, 9), '/') + 7) END";

type Attempt = Parameters<WebhookOutbox['updateWebhook']>[0];

export function postgresWebhooks({ query, write }: PostgresDatabase): { outbox: WebhookOutbox; drain(): Promise<void> } {
  // The attempts that ended in one turn of the event loop, recorded by one statement (one round trip and one commit,
  // not two each): each caller resumes once that statement committed, and a failed batch is retried row by row
  // (GroupCommit). As in SQLite, a replay asked during an attempt stands and the attempt only ends its lease: the two
  // UPDATEs take disjoint rows (replay_requested 0 or 1).
  const attempts = new GroupCommit<{ delivery: Attempt; leaseUntil: string }>(async (batch) => {
    const column = <K extends keyof Attempt>(key: K) => batch.map((a) => a.delivery[key]);
    await write(
      `WITH a AS (
         SELECT * FROM unnest($1::uuid[], $2::text[], $3::int[], $4::timestamptz[], $5::int[], $6::text[], $7::timestamptz[], $8::timestamptz[])
           AS a(id, state, attempts, next_attempt_at, last_status, last_error, updated_at, lease)
       ), recorded AS (
         UPDATE webhook_deliveries w SET state = a.state, attempts = a.attempts, next_attempt_at = a.next_attempt_at,
           last_status = a.last_status, last_error = a.last_error, updated_at = a.updated_at, lease_until = NULL
         FROM a WHERE w.id = a.id AND w.lease_until = a.lease AND w.replay_requested = 0
       )
       UPDATE webhook_deliveries w SET lease_until = NULL, replay_requested = 0
       FROM a WHERE w.id = a.id AND w.lease_until = a.lease AND w.replay_requested = 1`,
      [
        column('id'), column('state'), column('attempts'), column('nextAttemptAt'), column('lastStatus'), column('lastError'), column('updatedAt'),
        batch.map((a) => a.leaseUntil),
      ],
    );
  }, 256, 2);

  const outbox: WebhookOutbox = {
    async claimWebhooks(now, limit, leaseUntil, fair) {
      // Instances polling at once take different deliveries: only the picked rows are locked (SKIP LOCKED), and a row
      // another instance leased meanwhile fails the lease condition, which READ COMMITTED checks again on the row's
      // latest version when locking it. Not the `scan` rows: locking (and WAL-logging) 500 rows a claim was most of
      // its cost. Fair as in SQLite's claim (see there): targets by origin, at most each one's room, projects in turn
      // within their rooms.
      const { rows } = await write<Row & { project_id: string | null; turn: string }>(
        `WITH due AS (
           SELECT w.id, ${PG_TARGET} AS target, COALESCE(e.project_id, w.project_id) AS project_id, w.next_attempt_at
           FROM webhook_deliveries w LEFT JOIN executions e ON e.execution_id = w.execution_id
           WHERE w.state = 'pending' AND w.next_attempt_at <= $1 AND (w.lease_until IS NULL OR w.lease_until < $1)
             AND NOT (${PG_TARGET} = ANY($4::text[])) AND NOT (COALESCE(e.project_id, w.project_id, '') = ANY($5::text[]))
           ORDER BY w.next_attempt_at LIMIT $6
         ), by_target AS (
           SELECT id, project_id, next_attempt_at, ROW_NUMBER() OVER (PARTITION BY target ORDER BY next_attempt_at, id) AS k,
             COALESCE(($8::jsonb ->> target)::int, $7) AS room
           FROM due
         ), by_project AS (
           SELECT id, project_id, next_attempt_at,
             ROW_NUMBER() OVER (PARTITION BY COALESCE(project_id, '') ORDER BY next_attempt_at, id) AS turn
           FROM by_target WHERE k <= room
         ), picked AS (
           SELECT id, project_id, turn FROM by_project
           WHERE turn <= COALESCE(($9::jsonb ->> COALESCE(project_id, ''))::int, $10)
           ORDER BY turn, next_attempt_at, id LIMIT $2
         ), locked AS (
           SELECT w.id FROM webhook_deliveries w JOIN picked ON picked.id = w.id
           WHERE w.state = 'pending' AND (w.lease_until IS NULL OR w.lease_until < $1)
           FOR UPDATE OF w SKIP LOCKED
         )
         UPDATE webhook_deliveries w SET lease_until = $3, replay_requested = 0 FROM picked
         WHERE w.id = picked.id AND w.id IN (SELECT id FROM locked)
         RETURNING ${WCOLS.split(', ').map((column) => `w.${column}`).join(', ')}, picked.project_id, picked.turn`,
        [
          now, limit, leaseUntil, fair.skipTargets, fair.skipProjects, fair.scan, fair.perTarget,
          JSON.stringify(fair.targetRooms), JSON.stringify(fair.projectRooms), fair.perProject,
        ],
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
      await attempts.add({ delivery, leaseUntil });
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
  return { outbox, drain: () => attempts.drain() };
}
