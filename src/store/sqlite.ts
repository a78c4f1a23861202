import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { ExecutionRecord, Store } from './types.js';
import { executionValues, webhookValues } from './rows.js';
import { GroupCommit } from './group-commit.js';
import { BACKSTOP_CHECKPOINT_PAGES, BUSY_TIMEOUT_MS, inlineWriter, threadWriter } from './sqlite-writer.js';
import { PROBE_BYTES, PROBE_KEY, StorageState } from './storage-state.js';
import { EXECUTION_INSERT, WEBHOOK_INSERT, type Transactional } from './sqlite/database.js';
import { migrate, SQLITE_VERDICT_BACKFILL } from './sqlite/migrations.js';
import { VerdictBackfill } from './verdict-backfill.js';
import { sqliteScenarios } from './sqlite/scenarios.js';
import { sqliteExecutions } from './sqlite/executions.js';
import { sqliteExport } from './sqlite/export.js';
import { sqliteWebhooks } from './sqlite/webhooks.js';
import { sqliteFollowing } from './sqlite/following.js';
import { sqliteIdempotency } from './sqlite/idempotency.js';
import { sqliteNullifiers } from './sqlite/nullifiers.js';
import { sqliteChainSends } from './sqlite/chain-sends.js';
import { sqliteRevisions } from './sqlite/revisions.js';
import { sqliteApprovals } from './sqlite/approvals.js';
import { sqliteShadows } from './sqlite/shadows.js';

const WRITER_BATCHES_IN_FLIGHT = 16;

export interface SqliteOptions {
  file: string;
  /** FULL also survives a power loss. */
  synchronous: 'NORMAL' | 'FULL';
  /** PRAGMA max_page_count: beyond it a write fails with SQLITE_FULL. */
  maxPages?: number;
  /** A failure of the verdict backfill (it stops; the next start goes on). */
  onError?: (err: Error) => void;
}

const WAL_SWITCH_PAUSE_MS = 10;

/** Retried: two processes opening a new file at once get SQLITE_BUSY, bypassing the busy handler. */
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

/** Synchronous: a read-compare-write in one call cannot interleave with another request. */
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
  // Two commits: pages freed where they were allocated are never written.
  const storage = new StorageState(() => {
    db.transaction(() => insertProbe.run(PROBE_KEY, PROBE_BYTES, new Date().toISOString())).immediate();
    db.transaction(() => deleteProbe.run(PROBE_KEY)).immediate();
  });
  const write: Transactional = (fn) => {
    const tx = db.transaction(fn);
    return (...args) => storage.write(() => tx.immediate(...args));
  };

  // A writer thread group-commits records and their webhooks; `:memory:` has one connection.
  let writer;
  if (options.file === ':memory:') {
    writer = inlineWriter(db, EXECUTION_INSERT, WEBHOOK_INSERT);
  } else {
    writer = threadWriter(options.file, options.synchronous, EXECUTION_INSERT, options.maxPages, WEBHOOK_INSERT);
    // The writer's checkpointer keeps the WAL short.
    db.pragma(`wal_autocheckpoint = ${BACKSTOP_CHECKPOINT_PAGES}`);
  }
  const commit = (records: ExecutionRecord[]) => storage.write(() => writer.write(
    records.map(executionValues),
    records.flatMap((r) => (r.webhook ? [webhookValues(r.webhook)] : [])),
  ));
  // The writer commits in order: a batch need not wait for the previous one.
  const audit = new GroupCommit<ExecutionRecord>(commit, 256, WRITER_BATCHES_IN_FLIGHT);

  const fillVerdicts = db.prepare(SQLITE_VERDICT_BACKFILL);
  const backfill = new VerdictBackfill(async () => fillVerdicts.run().changes, (err) => options.onError?.(err as Error));

  const revisions = sqliteRevisions(db);
  const shadows = sqliteShadows(db, write);
  const webhooks = sqliteWebhooks(db, write);

  return {
    kind: 'sqlite',
    ...sqliteScenarios(db, write, revisions.writes),
    ...revisions.repository,
    ...sqliteApprovals(db, write, revisions.writes, shadows.stop),
    ...shadows.repository,
    ...sqliteExecutions(db, write, audit, revisions.writes),
    ...sqliteExport(db),
    ...webhooks.outbox,
    ...sqliteFollowing(db, write),
    ...sqliteIdempotency(db, write),
    ...sqliteNullifiers(db, write),
    ...sqliteChainSends(db, write),
    async ping() {
      db.prepare('SELECT 1').get();
      await storage.check();
    },
    async close() {
      await backfill.stop();
      await audit.drain();
      await webhooks.drain();
      await writer.close();
      if (db.open) db.close();
    },
  };
}
