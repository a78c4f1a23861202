import pg from 'pg';
import { postgresMigrations } from './migrations.js';
import { guard, isUniqueViolation, ScenarioIdTaken } from './errors.js';
import { GroupCommit } from './group-commit.js';
import { PROBE_BYTES, PROBE_KEY, StorageState } from './storage-state.js';
import { PURGE_REVISIONS_CTE, postgresRevisions, writeRevised } from './postgres-revisions.js';
import type { ExecutionPage, ExecutionRecord, ScenarioHead, ScenarioPage, Store } from './types.js';
import {
  EXECUTION_COLUMNS, EXECUTION_INSERT_COLUMNS, SCENARIO_COLUMNS, WEBHOOK_COLUMNS, WEBHOOK_FIELDS, executionValues, webhookValues, PAGE_MAX_BYTES, pageWithinBytes, pageWithinBytesSql, readers, type ExecutionColumns, type ScenarioColumns, type WebhookColumns,
} from './rows.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// BIGINT as a JS number: seq stays far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export interface PostgresOptions {
  url: string;
  /** A schema of its own (tests use one per run); created when missing. */
  schema?: string;
  poolSize?: number;
  statementTimeoutMs?: number;
  connectionTimeoutMs?: number;
  onError?: (err: Error) => void;
}

type Row = ScenarioColumns<unknown, Date>;
type ExecutionRow = ExecutionColumns<unknown, Date>;
type WebhookRow = WebhookColumns<Date>;
const read = readers<unknown, Date>({ json: (v) => v, time: (v) => v.toISOString() });

const COLS = SCENARIO_COLUMNS;
const ECOLS = EXECUTION_COLUMNS;
const WCOLS = WEBHOOK_COLUMNS;
/** A delivery's target, its URL's origin: as SQLITE_TARGET in sqlite.ts (and targetKey in the domain). */
const PG_TARGET = "CASE WHEN w.url IS NULL THEN '' WHEN strpos(substr(w.url, 9), '/') = 0 THEN substr(w.url, 1, 7) ELSE substr(w.url, 1, strpos(substr(w.url, 9), '/') + 7) END";
type Paged<R> = R & { page_rows: string };
// Listings are bounded in bytes too (PAGE_MAX_BYTES), measured on the JSON text (jsonb's, a little longer than the
// answer's). Parameters: the filter's, then $n = limit, $n+1 = budget, and the projects last where filtered.
const scenarioPage = (where: string) => pageWithinBytesSql({
  table: 'scenarios', columns: COLS, where, order: 'ASC', size: 'octet_length(input::text)', limit: '$2', budget: '$3',
});
const SCENARIO_PAGE = scenarioPage('seq > $1');
const SCENARIO_PAGE_IN = scenarioPage('seq > $1 AND project_id = ANY($4)');
const executionPage = (where: string) => pageWithinBytesSql({
  table: 'executions', columns: ECOLS, where, order: 'DESC', size: 'octet_length(results::text) + octet_length(credentials::text)', limit: '$3', budget: '$4',
});
const EXECUTION_PAGE = executionPage('scenario_id = $1 AND seq < $2');
const EXECUTION_PAGE_IN = executionPage('scenario_id = $1 AND seq < $2 AND project_id = ANY($5)');

/** Any fixed number: the advisory lock that serialises migrations of instances starting at once. */
const MIGRATION_LOCK = 0x5c5_0001;

export async function openPostgresStore(options: PostgresOptions): Promise<Store> {
  const schema = options.schema;
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error('invalid schema name');
  const poolSize = options.poolSize ?? 10;
  const pool = new pg.Pool({
    connectionString: options.url,
    max: poolSize,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 2000,
    statement_timeout: options.statementTimeoutMs ?? 2000,
    query_timeout: (options.statementTimeoutMs ?? 2000) + 500,
    options: schema ? `-c search_path=${schema}` : undefined,
  });
  // Without a listener an idle client's error (the server restarting) would kill the process.
  pool.on('error', (err) => options.onError?.(err));

  const query = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => guard(() => pool.query<R>(text, values));
  // A statement sent alone commits before PostgreSQL answers ReadyForQuery, which node-postgres waits for: a commit
  // that fails (disk_full) rejects the query. Writes go through `storage` to learn whether the storage is full.
  const storage = new StorageState(async () => {
    await pool.query(
      `INSERT INTO idempotency_keys (key, request_hash, created_at) SELECT $1, string_agg(md5(random()::text), ''), now()
       FROM generate_series(1, $2::int / 32) ON CONFLICT (key) DO UPDATE SET request_hash = EXCLUDED.request_hash`,
      [PROBE_KEY, PROBE_BYTES],
    );
    await pool.query('DELETE FROM idempotency_keys WHERE key = $1', [PROBE_KEY]);
  });
  const write = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => storage.write(() => pool.query<R>(text, values));

  try {
    await guard(() => migrate(pool, schema));
  } catch (err) {
    await pool.end().catch(() => {});
    throw err;
  }

  // One multi-row INSERT per batch of concurrent executions. Their webhooks (the outbox) join it as a data-modifying
  // CTE: one statement, so one transaction and one round trip.
  const insertBatch = async (records: ExecutionRecord[]) => {
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
  // Batches are independent INSERTs on pooled connections, so a few may commit at once: a batch need not wait for
  // the round trip of the one before it. Half the pool at most, so that reads always find a connection.
  const audit = new GroupCommit<ExecutionRecord>(insertBatch, 256, Math.max(1, Math.min(4, Math.floor(poolSize / 2))));

  return {
    kind: 'postgres',
    ...postgresRevisions(query),
    // A scenario's revision is kept in the transaction that writes it.
    async create(id, input, now, revise) {
      return storage.write(() => writeRevised<Row>(
        pool,
        `INSERT INTO scenarios (id, input, project_id, revision, created_at, updated_at)
         VALUES ($1, $2, $3, 1, $4, $4) ON CONFLICT DO NOTHING RETURNING ${COLS}`,
        [id, JSON.stringify(input), input.projectId ?? null, now],
        read.scenario, revise,
      ));
    },
    // Lookups by id within a scope read at most two rows: enough to tell one scenario from an ambiguous id.
    async find(id, scope) {
      const { rows } = scope
        ? await query<Row>(`SELECT ${COLS} FROM scenarios WHERE id = $1 AND COALESCE(project_id, '') = ANY($2) ORDER BY seq LIMIT 2`, [id, scope])
        : await query<Row>(`SELECT ${COLS} FROM scenarios WHERE id = $1 ORDER BY seq LIMIT 2`, [id]);
      return rows.map(read.scenario);
    },
    async heads(id, scope) {
      const { rows } = scope
        ? await query<ScenarioHead>("SELECT seq, revision FROM scenarios WHERE id = $1 AND COALESCE(project_id, '') = ANY($2) ORDER BY seq LIMIT 2", [id, scope])
        : await query<ScenarioHead>('SELECT seq, revision FROM scenarios WHERE id = $1 ORDER BY seq LIMIT 2', [id]);
      return rows;
    },
    async list(limit, after = 0, projects): Promise<ScenarioPage> {
      const { rows } = projects
        ? await query<Paged<Row>>(SCENARIO_PAGE_IN, [after, limit + 1, PAGE_MAX_BYTES, projects])
        : await query<Paged<Row>>(SCENARIO_PAGE, [after, limit + 1, PAGE_MAX_BYTES]);
      return pageWithinBytes(rows, limit, read.scenario);
    },
    async update(seq, input, expectedRevision, now, revise) {
      try {
        return await storage.write(() => writeRevised<Row>(
          pool,
          `UPDATE scenarios SET input = $1, project_id = $2, revision = revision + 1, updated_at = $3
           WHERE seq = $4 AND revision = $5 RETURNING ${COLS}`,
          [JSON.stringify(input), input.projectId ?? null, now, seq, expectedRevision],
          read.scenario, revise,
        ));
      } catch (err) {
        if (isUniqueViolation(err)) throw new ScenarioIdTaken(input.projectId ?? null);
        throw err;
      }
    },
    async delete(seq) {
      const { rowCount } = await write('DELETE FROM scenarios WHERE seq = $1', [seq]);
      return (rowCount ?? 0) > 0;
    },
    recordExecution(record) {
      return audit.add(record);
    },
    async getExecution(executionId) {
      if (!UUID.test(executionId)) return undefined; // the column is a uuid: anything else cannot match
      const { rows } = await query<ExecutionRow>(`SELECT ${ECOLS} FROM executions WHERE execution_id = $1`, [executionId]);
      return rows[0] ? read.execution(rows[0]) : undefined;
    },
    async listExecutions(scenarioId, limit, before = Number.MAX_SAFE_INTEGER, projects): Promise<ExecutionPage> {
      const { rows } = projects
        ? await query<Paged<ExecutionRow>>(EXECUTION_PAGE_IN, [scenarioId, before, limit + 1, PAGE_MAX_BYTES, projects])
        : await query<Paged<ExecutionRow>>(EXECUTION_PAGE, [scenarioId, before, limit + 1, PAGE_MAX_BYTES]);
      return pageWithinBytes(rows, limit, read.execution);
    },
    async purgeExecutions(createdBefore) {
      // A delivery goes with its execution, and by age in any case (see the SQLite store), in one statement.
      const { rows } = await write<{ purged: number }>(
        `WITH gone AS (DELETE FROM executions WHERE created_at < $1 RETURNING execution_id),
         hooks AS (DELETE FROM webhook_deliveries WHERE created_at < $1 OR execution_id IN (SELECT execution_id FROM gone)),
         ${PURGE_REVISIONS_CTE}
         SELECT count(*)::int AS purged FROM gone`,
        [createdBefore],
      );
      return rows[0]?.purged ?? 0;
    },
    async completeExecution(executionId, c) {
      return storage.write(async () => {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          const updated = await client.query(
            "UPDATE executions SET state = $1, results = $2, updated_at = $3 WHERE execution_id = $4 AND state = 'pending'",
            [c.state, JSON.stringify(c.results), c.updatedAt, executionId],
          );
          if (!updated.rowCount) {
            await client.query('ROLLBACK');
            return false;
          }
          if (c.webhook) {
            await client.query(
              `INSERT INTO webhook_deliveries (${WCOLS}) VALUES (${Array.from({ length: WEBHOOK_FIELDS }, (_, k) => `$${k + 1}`).join(', ')})`,
              webhookValues(c.webhook),
            );
          }
          await client.query('COMMIT');
          return true;
        } catch (err) {
          await client.query('ROLLBACK').catch(() => {});
          throw err;
        } finally {
          client.release();
        }
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
      const { rows } = await query<ExecutionRow>(
        `SELECT ${ECOLS} FROM executions WHERE state = 'pending' AND expires_at < $1 ORDER BY expires_at LIMIT $2`,
        [before, limit],
      );
      return rows.map(read.execution);
    },
    async claimWebhooks(now, limit, leaseUntil, fair) {
      // SKIP LOCKED: instances polling at once take different deliveries. Fair as in SQLite's claim (see there):
      // targets by origin, at most perTarget of each, projects in turn.
      const { rows } = await write<WebhookRow & { project_id: string | null; turn: string }>(
        `WITH due AS (
           SELECT w.id, ${PG_TARGET} AS target, e.project_id, w.next_attempt_at
           FROM webhook_deliveries w LEFT JOIN executions e ON e.execution_id = w.execution_id
           WHERE w.state = 'pending' AND w.next_attempt_at <= $1 AND (w.lease_until IS NULL OR w.lease_until < $1)
             AND NOT (${PG_TARGET} = ANY($4::text[])) AND NOT (COALESCE(e.project_id, '') = ANY($5::text[]))
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
         RETURNING ${WCOLS.split(', ').map((c) => `w.${c}`).join(', ')}, picked.project_id, picked.turn`,
        [now, limit, leaseUntil, fair.skipTargets, fair.skipProjects, fair.scan, fair.perTarget],
      );
      // RETURNING has no order: the claim's (projects in turn, then earliest first) is restored here.
      return rows
        .map((r) => ({ turn: Number(r.turn), d: { ...read.webhook(r), projectId: r.project_id } }))
        .sort((a, b) => a.turn - b.turn || a.d.nextAttemptAt.localeCompare(b.d.nextAttemptAt) || a.d.id.localeCompare(b.d.id))
        .map((r) => r.d);
    },
    async releaseWebhooks(ids, leaseUntil) {
      if (ids.length === 0) return;
      await write('UPDATE webhook_deliveries SET lease_until = NULL WHERE id = ANY($1::uuid[]) AND lease_until = $2', [ids, leaseUntil]);
    },
    async updateWebhook(d, leaseUntil) {
      // As in SQLite: a replay asked during the attempt stands, and the attempt only ends its lease.
      const { rowCount } = await write(
        `UPDATE webhook_deliveries SET state = $2, attempts = $3, next_attempt_at = $4, last_status = $5, last_error = $6,
         updated_at = $7, lease_until = NULL WHERE id = $1 AND lease_until = $8 AND replay_requested = 0`,
        [d.id, d.state, d.attempts, d.nextAttemptAt, d.lastStatus, d.lastError, d.updatedAt, leaseUntil],
      );
      if (!rowCount) {
        await write('UPDATE webhook_deliveries SET lease_until = NULL, replay_requested = 0 WHERE id = $1 AND lease_until = $2 AND replay_requested = 1', [d.id, leaseUntil]);
      }
    },
    async webhooksOf(executionId) {
      if (!UUID.test(executionId)) return [];
      const { rows } = await query<WebhookRow>(`SELECT ${WCOLS} FROM webhook_deliveries WHERE execution_id = $1 ORDER BY created_at, id`, [executionId]);
      return rows.map(read.webhook);
    },
    async replayWebhook(executionId, deliveryId, now) {
      if (!UUID.test(executionId) || !UUID.test(deliveryId)) return undefined;
      const { rows } = await write<WebhookRow>(
        `UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_at = $1, updated_at = $1,
         replay_requested = CASE WHEN lease_until >= $1 THEN 1 ELSE 0 END, lease_until = CASE WHEN lease_until >= $1 THEN lease_until END
         WHERE id = $2 AND execution_id = $3 RETURNING ${WCOLS}`,
        [now, deliveryId, executionId],
      );
      return rows[0] ? read.webhook(rows[0]) : undefined;
    },
    async claimIdempotencyKey(key, requestHash, now, expiredBefore, leaseUntil) {
      // Insert-or-read; a row deleted between the two (released, expired) makes us try again. A claim whose lease ran
      // out (or without one: from before leases) lost its owner, and is free.
      for (;;) {
        await write(
          'DELETE FROM idempotency_keys WHERE key = $1 AND (created_at < $2 OR (status IS NULL AND (lease_until IS NULL OR lease_until < $3)))',
          [key, expiredBefore, now],
        );
        const inserted = await write(
          'INSERT INTO idempotency_keys (key, request_hash, created_at, lease_until) VALUES ($1, $2, $3, $4) ON CONFLICT (key) DO NOTHING RETURNING key',
          [key, requestHash, now, leaseUntil],
        );
        if (inserted.rowCount) return { claimed: true };
        const { rows } = await query<{ request_hash: string; status: number | null; headers: Record<string, string> | null; body: string | null }>(
          'SELECT request_hash, status, headers, body FROM idempotency_keys WHERE key = $1',
          [key],
        );
        const row = rows[0];
        if (!row) continue;
        return {
          claimed: false,
          requestHash: row.request_hash,
          // completeIdempotencyKey sets status, headers and body together
          response: row.status === null || row.headers === null || row.body === null
            ? undefined
            : { status: row.status, headers: row.headers, body: row.body },
        };
      }
    },
    async renewIdempotencyLease(key, leaseUntil) {
      await write('UPDATE idempotency_keys SET lease_until = $1 WHERE key = $2 AND status IS NULL', [leaseUntil, key]);
    },
    async completeIdempotencyKey(key, response) {
      await write('UPDATE idempotency_keys SET status = $1, headers = $2, body = $3 WHERE key = $4',
        [response.status, JSON.stringify(response.headers), response.body, key]);
    },
    async releaseIdempotencyKey(key) {
      await write('DELETE FROM idempotency_keys WHERE key = $1 AND status IS NULL', [key]);
    },
    async purgeIdempotencyKeys(createdBefore) {
      const { rowCount } = await write('DELETE FROM idempotency_keys WHERE created_at < $1', [createdBefore]);
      return rowCount ?? 0;
    },
    async bindNullifier(b) {
      // Rows are never deleted: the insert-or-read needs no transaction.
      await query('INSERT INTO zkp_nullifiers (project_id, scenario_id, nullifier_hash, address_hash, created_at) VALUES ($1, $2, $3, $4, $5) ' +
        'ON CONFLICT DO NOTHING', [b.projectId, b.scenarioId, b.nullifierHash, b.addressHash, b.at]);
      const { rows } = await query<{ address_hash: string }>(
        'SELECT address_hash FROM zkp_nullifiers WHERE project_id = $1 AND scenario_id = $2 AND nullifier_hash = $3',
        [b.projectId, b.scenarioId, b.nullifierHash],
      );
      const row = rows[0];
      if (row === undefined) throw new Error('zkp_nullifiers: the row just written is missing');
      return row.address_hash;
    },
    async ping() {
      await query('SELECT 1');
      await storage.check();
    },
    async close() {
      await audit.drain();
      await pool.end();
    },
  };
}

async function migrate(pool: pg.Pool, schema: string | undefined): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      if (schema) {
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
        await client.query(`SET search_path TO ${schema}`);
      }
      await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())');
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
      const applied = new Set(rows.map((r) => r.version));
      for (const m of postgresMigrations) {
        if (applied.has(m.version)) continue;
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [m.version]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw err;
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}
