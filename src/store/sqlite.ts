import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { ClaimedWebhook, ExecutionRecord, ExecutionPage, Revise, ScenarioHead, ScenarioPage, Store, WebhookFairness } from './types.js';
import {
  EXECUTION_COLUMNS, EXECUTION_INSERT_COLUMNS, EXECUTION_INSERT_FIELDS, SCENARIO_COLUMNS, WEBHOOK_COLUMNS, WEBHOOK_FIELDS, executionValues, webhookValues, PAGE_MAX_BYTES, pageWithinBytes, pageWithinBytesSql, readers,
  type ExecutionColumns, type ScenarioColumns, type WebhookColumns,
} from './rows.js';
import { sqliteMigrations } from './migrations.js';
import { isUniqueViolation, ScenarioIdTaken } from './errors.js';
import { GroupCommit } from './group-commit.js';
import { BACKSTOP_CHECKPOINT_PAGES, BUSY_TIMEOUT_MS, inlineWriter, threadWriter } from './sqlite-writer.js';
import { PROBE_BYTES, PROBE_KEY, StorageState } from './storage-state.js';
import { sqliteRevisions } from './sqlite-revisions.js';

type Row = ScenarioColumns<string, string>;
type ExecutionRow = ExecutionColumns<string, string>;
type Paged<R> = R & { page_rows: number };
type WebhookRow = WebhookColumns<string>;
const read = readers<string, string>({ json: (v) => JSON.parse(v), time: (v) => v });

const WRITER_BATCHES_IN_FLIGHT = 16;
/** A delivery's target, its URL's origin (see the claim below). */
const SQLITE_TARGET = "CASE WHEN w.url IS NULL THEN '' WHEN instr(substr(w.url, 9), '/') = 0 THEN substr(w.url, 1, 7) ELSE substr(w.url, 1, instr(substr(w.url, 9), '/') + 7) END";

export interface SqliteOptions {
  file: string;
  /** NORMAL survives a crash of the process; FULL also a power loss (an fsync per commit). */
  synchronous: 'NORMAL' | 'FULL';
  /**
   * A cap on the database's size, in pages (PRAGMA max_page_count on each of its connections): a write that would
   * grow it further fails with SQLITE_FULL, as on a full disk. Unset: SQLite's own (no practical cap).
   */
  maxPages?: number;
}

const WAL_SWITCH_PAUSE_MS = 10;

/**
 * journal_mode = WAL, tried again while another connection holds the file's write lock: two processes opening a new
 * (rollback-journal) file at once each read it, then want to write it, and SQLite answers SQLITE_BUSY at once to the
 * one holding a read lock, without calling its busy handler, since waiting could deadlock. It runs at start only, so
 * it may block.
 */
function switchToWal(db: Database.Database): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      const busy = err instanceof Error && 'code' in err && err.code === 'SQLITE_BUSY';
      if (!busy || Date.now() > deadline) throw err;
      Atomics.wait(pause, 0, 0, WAL_SWITCH_PAUSE_MS);
    }
  }
}

/**
 * The embedded store. better-sqlite3 is synchronous: each statement runs to completion on the event loop, so
 * a read-compare-write inside one call cannot interleave with another request of this process.
 */
export function openSqliteStore(options: SqliteOptions): Store {
  if (options.file !== ':memory:') fs.mkdirSync(path.dirname(options.file), { recursive: true });
  const db = new Database(options.file);
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  switchToWal(db);
  db.pragma(`synchronous = ${options.synchronous}`);
  db.pragma('foreign_keys = ON');
  migrate(db);
  if (options.maxPages !== undefined) db.pragma(`max_page_count = ${options.maxPages}`);

  const insertProbe = db.prepare<[string, number, string]>(
    'INSERT OR REPLACE INTO idempotency_keys (key, request_hash, created_at) VALUES (?, randomblob(?), ?)',
  );
  const deleteProbe = db.prepare<[string]>('DELETE FROM idempotency_keys WHERE key = ?');
  // Two commits: pages freed in the transaction that allocated them need not be written, so one would not show that
  // the storage takes PROBE_BYTES.
  const storage = new StorageState(() => {
    db.transaction(() => insertProbe.run(PROBE_KEY, PROBE_BYTES, new Date().toISOString())).immediate();
    db.transaction(() => deleteProbe.run(PROBE_KEY)).immediate();
  });
  // Every write runs in an explicit transaction, whose COMMIT is a statement of its own: a commit that fails (a full
  // disk) throws. Alone, an INSERT ... RETURNING read with .get() commits in sqlite3_reset, after its row was returned,
  // and better-sqlite3 ignores what that reset answers: a refused commit looked like a success.
  const write = <A extends unknown[], R>(fn: (...args: A) => R) => {
    const tx = db.transaction(fn);
    return (...args: A): Promise<R> => storage.write(() => tx.immediate(...args));
  };

  const cols = SCENARIO_COLUMNS;
  const insert = db.prepare<[string, string, string | null, string, string], Row>(
    `INSERT INTO scenarios (id, input, project_id, revision, created_at, updated_at)
     VALUES (?, ?, ?, 1, ?, ?) ON CONFLICT DO NOTHING RETURNING ${cols}`,
  );
  // Lookups by id within a scope read at most two rows: enough to tell one scenario from an ambiguous id.
  const select = db.prepare<[string], Row>(`SELECT ${cols} FROM scenarios WHERE id = ? ORDER BY seq LIMIT 2`);
  const selectIn = db.prepare<[string, string], Row>(
    `SELECT ${cols} FROM scenarios WHERE id = ? AND COALESCE(project_id, '') IN (SELECT value FROM json_each(?)) ORDER BY seq LIMIT 2`,
  );
  const selectHeads = db.prepare<[string], ScenarioHead>('SELECT seq, revision FROM scenarios WHERE id = ? ORDER BY seq LIMIT 2');
  const selectHeadsIn = db.prepare<[string, string], ScenarioHead>(
    "SELECT seq, revision FROM scenarios WHERE id = ? AND COALESCE(project_id, '') IN (SELECT value FROM json_each(?)) ORDER BY seq LIMIT 2",
  );
  // Listings are bounded in bytes too (PAGE_MAX_BYTES); octet_length reads a value's size, not the value.
  const scenarioPage = (where: string) => pageWithinBytesSql({
    table: 'scenarios', columns: cols, where, order: 'ASC', size: 'octet_length(input)', limit: '?', budget: '?',
  });
  const page = db.prepare<[number, number, number], Paged<Row>>(scenarioPage('seq > ?'));
  const pageIn = db.prepare<[number, string, number, number], Paged<Row>>(
    scenarioPage('seq > ? AND project_id IN (SELECT value FROM json_each(?))'),
  );
  const cas = db.prepare<[string, string | null, string, number, number], Row>(
    `UPDATE scenarios SET input = ?, project_id = ?, revision = revision + 1, updated_at = ?
     WHERE seq = ? AND revision = ? RETURNING ${cols}`,
  );
  const remove = db.prepare<[number]>('DELETE FROM scenarios WHERE seq = ?');

  const ecols = EXECUTION_COLUMNS;
  const insertExecutionSql =
    `INSERT INTO executions (${EXECUTION_INSERT_COLUMNS}) VALUES (${Array(EXECUTION_INSERT_FIELDS).fill('?').join(', ')})`;
  const selectExecution = db.prepare<[string], ExecutionRow>(`SELECT ${ecols} FROM executions WHERE execution_id = ?`);
  const executionPage = (where: string) => pageWithinBytesSql({
    table: 'executions', columns: ecols, where, order: 'DESC', size: 'octet_length(results) + octet_length(credentials)', limit: '?', budget: '?',
  });
  const pageExecutions = db.prepare<[string, number, number, number], Paged<ExecutionRow>>(executionPage('scenario_id = ? AND seq < ?'));
  const pageExecutionsIn = db.prepare<[string, number, string, number, number], Paged<ExecutionRow>>(
    executionPage('scenario_id = ? AND seq < ? AND project_id IN (SELECT value FROM json_each(?))'),
  );
  const purge = db.prepare<[string]>('DELETE FROM executions WHERE created_at < ?');
  // A delivery goes with its execution, and by age in any case (it holds the address, the verdict, any attestation
  // and `$sd` disclosure).
  const purgeWebhooks = db.prepare<[string, string]>(
    'DELETE FROM webhook_deliveries WHERE created_at < ? OR execution_id IN (SELECT execution_id FROM executions WHERE created_at < ?)',
  );
  // Audit records are inserted by a writer thread (its own connection), in group commits: the request thread only
  // serialises them. A `:memory:` database has one connection, so it inserts in place.
  // The outbox rows of the records (their webhooks) are inserted in the records' own transaction.
  const insertWebhookSql = `INSERT INTO webhook_deliveries (${WEBHOOK_COLUMNS}) VALUES (${Array(WEBHOOK_FIELDS).fill('?').join(', ')})`;
  let writer;
  if (options.file === ':memory:') {
    writer = inlineWriter(db, insertExecutionSql, insertWebhookSql);
  } else {
    writer = threadWriter(options.file, options.synchronous, insertExecutionSql, options.maxPages, insertWebhookSql);
    // The writer's checkpointer thread keeps the WAL short; this connection checkpoints only as a backstop.
    db.pragma(`wal_autocheckpoint = ${BACKSTOP_CHECKPOINT_PAGES}`);
  }
  const commit = (records: ExecutionRecord[]) => storage.write(() => writer.write(
    records.map(executionValues),
    records.flatMap((r) => (r.webhook ? [webhookValues(r.webhook)] : [])),
  ));
  // The writer thread commits its messages in order: a batch is sent as soon as it is formed (each turn of the
  // event loop), without waiting for the one before it to be acknowledged.
  const audit = new GroupCommit<ExecutionRecord>(commit, 256, WRITER_BATCHES_IN_FLIGHT);

  const finish = db.prepare<[string, string, string, string]>(
    "UPDATE executions SET state = ?, results = ?, updated_at = ? WHERE execution_id = ? AND state = 'pending'",
  );
  const wcols = WEBHOOK_COLUMNS;
  const insertWebhook = db.prepare<[Array<string | number | null>]>(insertWebhookSql);
  const completeTx = write((executionId: string, c: Parameters<Store['completeExecution']>[1]): boolean => {
    if (finish.run(c.state, JSON.stringify(c.results), c.updatedAt, executionId).changes === 0) return false;
    if (c.webhook) insertWebhook.run(webhookValues(c.webhook));
    return true;
  });
  const countAnswer = db.prepare<[string, number], { zkp_answers: number }>(
    'UPDATE executions SET zkp_answers = zkp_answers + 1 WHERE execution_id = ? AND zkp_answers < ? RETURNING zkp_answers',
  );
  const expiredPending = db.prepare<[string, number], ExecutionRow>(
    `SELECT ${ecols} FROM executions WHERE state = 'pending' AND expires_at < ? ORDER BY expires_at LIMIT ?`,
  );
  // Fair claims: the first `scan` due deliveries outside the skipped targets and projects, at most
  // `perTarget` of each target, then projects in turn: every project's earliest before any project's second (a
  // tenant's older backlog does not take every freed slot). A target is its URL's origin (targetKey in
  // src/domain/webhook-slots.ts): the URL up to the first '/' after 'http://' or 'https://'; '' for WEBHOOK_URL.
  const dueWebhooks = db.prepare<[string, string, string, string, number, number, number], { id: string; project_id: string | null }>(
    `WITH due AS (
       SELECT w.id, ${SQLITE_TARGET} AS target, e.project_id, w.next_attempt_at
       FROM webhook_deliveries w LEFT JOIN executions e ON e.execution_id = w.execution_id
       WHERE w.state = 'pending' AND w.next_attempt_at <= ? AND (w.lease_until IS NULL OR w.lease_until < ?)
         AND ${SQLITE_TARGET} NOT IN (SELECT value FROM json_each(?))
         AND COALESCE(e.project_id, '') NOT IN (SELECT value FROM json_each(?))
       ORDER BY w.next_attempt_at LIMIT ?
     ), by_target AS (
       SELECT id, project_id, next_attempt_at, ROW_NUMBER() OVER (PARTITION BY target ORDER BY next_attempt_at, id) AS k FROM due
     ), by_project AS (
       SELECT id, project_id, next_attempt_at,
         ROW_NUMBER() OVER (PARTITION BY COALESCE(project_id, '') ORDER BY next_attempt_at, id) AS turn
       FROM by_target WHERE k <= ?
     )
     SELECT id, project_id FROM by_project ORDER BY turn, next_attempt_at, id LIMIT ?`,
  );
  const lease = db.prepare<[string, string], WebhookRow>(`UPDATE webhook_deliveries SET lease_until = ?, replay_requested = 0 WHERE id = ? RETURNING ${wcols}`);
  const claimTx = write((now: string, limit: number, leaseUntil: string, fair: WebhookFairness): ClaimedWebhook[] => {
    const picked = dueWebhooks.all(now, now, JSON.stringify(fair.skipTargets), JSON.stringify(fair.skipProjects), fair.scan, fair.perTarget, limit);
    return picked.flatMap((p) => {
      const row = lease.get(leaseUntil, p.id);
      return row ? [{ ...read.webhook(row), projectId: p.project_id }] : [];
    });
  });
  const release = db.prepare<[string, string]>('UPDATE webhook_deliveries SET lease_until = NULL WHERE id = ? AND lease_until = ?');
  const releaseTx = write((ids: readonly string[], leaseUntil: string) => {
    for (const id of ids) release.run(id, leaseUntil);
  });
  const updateWebhookRow = db.prepare(
    `UPDATE webhook_deliveries SET state = @state, attempts = @attempts, next_attempt_at = @nextAttemptAt, last_status = @lastStatus,
     last_error = @lastError, updated_at = @updatedAt, lease_until = NULL WHERE id = @id AND lease_until = @lease AND replay_requested = 0`,
  );
  // A replay asked during the attempt stands: the attempt only ends its lease.
  const endReplayedLease = db.prepare<[string, string]>(
    'UPDATE webhook_deliveries SET lease_until = NULL, replay_requested = 0 WHERE id = ? AND lease_until = ? AND replay_requested = 1',
  );
  const webhooksOfExecution = db.prepare<[string], WebhookRow>(`SELECT ${wcols} FROM webhook_deliveries WHERE execution_id = ? ORDER BY created_at, id`);
  // During an attempt (its lease runs), the lease is kept and the replay marked: the attempt's end does not overwrite it.
  const replay = db.prepare<[string, string, string, string, string, string], WebhookRow>(
    `UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_at = ?, updated_at = ?,
     replay_requested = CASE WHEN lease_until >= ? THEN 1 ELSE 0 END, lease_until = CASE WHEN lease_until >= ? THEN lease_until END
     WHERE id = ? AND execution_id = ? RETURNING ${wcols}`,
  );
  const replayTx = write((now: string, id: string, executionId: string) => replay.get(now, now, now, now, id, executionId));

  // A claim without a lease dates from before leases: its owner is gone (the service was restarted since).
  const freeExpiredKey = db.prepare<[string, string, string]>(
    'DELETE FROM idempotency_keys WHERE key = ? AND (created_at < ? OR (status IS NULL AND (lease_until IS NULL OR lease_until < ?)))',
  );
  const claimKey = db.prepare<[string, string, string, string]>(
    'INSERT INTO idempotency_keys (key, request_hash, created_at, lease_until) VALUES (?, ?, ?, ?) ON CONFLICT (key) DO NOTHING',
  );
  const renewKey = db.prepare<[string, string]>('UPDATE idempotency_keys SET lease_until = ? WHERE key = ? AND status IS NULL');
  const selectKey = db.prepare<[string], { request_hash: string; status: number | null; headers: string | null; body: string | null }>(
    'SELECT request_hash, status, headers, body FROM idempotency_keys WHERE key = ?',
  );
  const completeKey = db.prepare<[number, string, string, string]>('UPDATE idempotency_keys SET status = ?, headers = ?, body = ? WHERE key = ?');
  const releaseKey = db.prepare<[string]>('DELETE FROM idempotency_keys WHERE key = ? AND status IS NULL');
  const purgeKeys = db.prepare<[string]>('DELETE FROM idempotency_keys WHERE created_at < ?');
  const bindNullifier = db.prepare<[string, string, string, string, string]>(
    'INSERT INTO zkp_nullifiers (project_id, scenario_id, nullifier_hash, address_hash, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
  );
  const boundAddress = db.prepare<[string, string, string], { address_hash: string }>(
    'SELECT address_hash FROM zkp_nullifiers WHERE project_id = ? AND scenario_id = ? AND nullifier_hash = ?',
  );
  const claim = write((key: string, requestHash: string, now: string, expiredBefore: string, leaseUntil: string) => {
    freeExpiredKey.run(key, expiredBefore, now);
    if (claimKey.run(key, requestHash, now, leaseUntil).changes > 0) return { claimed: true as const };
    const row = selectKey.get(key);
    if (row === undefined) throw new Error('idempotency_keys: the row the claim conflicted with is missing');
    return {
      claimed: false as const,
      requestHash: row.request_hash,
      // completeKey sets status, headers and body together
      response: row.status === null || row.headers === null || row.body === null
        ? undefined
        : { status: row.status, headers: JSON.parse(row.headers), body: row.body },
    };
  });

  // A scenario's revision is kept in the transaction that writes it.
  const revisions = sqliteRevisions(db);
  const revised = (row: Row | undefined, revise: Revise | undefined) => {
    const scenario = row && read.scenario(row);
    if (scenario) revisions.keep(scenario, revise);
    return scenario ?? null;
  };
  const createTx = write((revise: Revise | undefined, ...args: Parameters<typeof insert.get>) => revised(insert.get(...args), revise));
  const casTx = write((revise: Revise | undefined, ...args: Parameters<typeof cas.get>) => revised(cas.get(...args), revise));
  const removeTx = write((seq: number) => remove.run(seq));
  const purgeTx = write((createdBefore: string) => {
    purgeWebhooks.run(createdBefore, createdBefore);
    const purged = purge.run(createdBefore);
    revisions.purge(createdBefore);
    return purged;
  });
  const updateWebhookTx = write((delivery: Parameters<Store['updateWebhook']>[0], lease: string) => {
    if (updateWebhookRow.run({ ...delivery, lease }).changes === 0) endReplayedLease.run(delivery.id, lease);
  });
  const completeKeyTx = write((...args: Parameters<typeof completeKey.run>) => completeKey.run(...args));
  const releaseKeyTx = write((key: string) => releaseKey.run(key));
  const purgeKeysTx = write((createdBefore: string) => purgeKeys.run(createdBefore));
  const renewKeyTx = write((leaseUntil: string, key: string) => renewKey.run(leaseUntil, key));
  // UPDATE ... RETURNING read with get() commits in sqlite3_reset, whose failure is ignored: in a transaction instead.
  const countAnswerTx = write((executionId: string, max: number) => countAnswer.get(executionId, max)?.zkp_answers);
  // The insert and the read in one committed transaction: the address is answered only once the binding is durable.
  const bindNullifierTx = write((b: Parameters<Store['bindNullifier']>[0]): string => {
    bindNullifier.run(b.projectId, b.scenarioId, b.nullifierHash, b.addressHash, b.at);
    const row = boundAddress.get(b.projectId, b.scenarioId, b.nullifierHash);
    if (row === undefined) throw new Error('zkp_nullifiers: the row just written is missing');
    return row.address_hash;
  });

  return {
    kind: 'sqlite',
    ...revisions.repository,
    async create(id, input, now, revise) {
      return createTx(revise, id, JSON.stringify(input), input.projectId ?? null, now, now);
    },
    async find(id, scope) {
      return (scope ? selectIn.all(id, JSON.stringify(scope)) : select.all(id)).map(read.scenario);
    },
    async heads(id, scope) {
      return scope ? selectHeadsIn.all(id, JSON.stringify(scope)) : selectHeads.all(id);
    },
    async list(limit, after = 0, projects): Promise<ScenarioPage> {
      const rows = projects
        ? pageIn.all(after, JSON.stringify(projects), limit + 1, PAGE_MAX_BYTES)
        : page.all(after, limit + 1, PAGE_MAX_BYTES);
      return pageWithinBytes(rows, limit, read.scenario);
    },
    async update(seq, input, expectedRevision, now, revise) {
      try {
        return await casTx(revise, JSON.stringify(input), input.projectId ?? null, now, seq, expectedRevision);
      } catch (err) {
        if (isUniqueViolation(err)) throw new ScenarioIdTaken(input.projectId ?? null);
        throw err;
      }
    },
    async delete(seq) {
      return (await removeTx(seq)).changes > 0;
    },
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
    async claimWebhooks(now, limit, leaseUntil, fair) {
      return claimTx(now, limit, leaseUntil, fair);
    },
    async releaseWebhooks(ids, leaseUntil) {
      if (ids.length > 0) await releaseTx(ids, leaseUntil);
    },
    async updateWebhook(delivery, leaseUntil) {
      await updateWebhookTx(delivery, leaseUntil);
    },
    async webhooksOf(executionId) {
      return webhooksOfExecution.all(executionId).map(read.webhook);
    },
    async replayWebhook(executionId, deliveryId, now) {
      const row = await replayTx(now, deliveryId, executionId);
      return row ? read.webhook(row) : undefined;
    },
    async claimIdempotencyKey(key, requestHash, now, expiredBefore, leaseUntil) {
      return claim(key, requestHash, now, expiredBefore, leaseUntil);
    },
    async renewIdempotencyLease(key, leaseUntil) {
      await renewKeyTx(leaseUntil, key);
    },
    async completeIdempotencyKey(key, response) {
      await completeKeyTx(response.status, JSON.stringify(response.headers), response.body, key);
    },
    async releaseIdempotencyKey(key) {
      await releaseKeyTx(key);
    },
    async purgeIdempotencyKeys(createdBefore) {
      return (await purgeKeysTx(createdBefore)).changes;
    },
    async bindNullifier(b) {
      return bindNullifierTx(b);
    },
    async ping() {
      db.prepare('SELECT 1').get();
      await storage.check();
    },
    async close() {
      await audit.drain();
      await writer.close();
      if (db.open) db.close();
    },
  };
}

function migrate(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
  const applied = new Set(db.prepare<[], { version: number }>('SELECT version FROM schema_migrations').all().map((r) => r.version));
  const record = db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)');
  for (const m of sqliteMigrations) {
    if (applied.has(m.version)) continue;
    // BEGIN IMMEDIATE: two processes opening one file serialise here, and the second sees the first's work.
    db.transaction(() => {
      const again = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(m.version);
      if (again) return;
      db.exec(m.sql);
      record.run(m.version, new Date().toISOString());
    }).immediate();
  }
}
