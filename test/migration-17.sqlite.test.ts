/**
 * Migration 17 rebuilds SQLite's webhook_deliveries (execution_id becomes nullable for deployment events): a database
 * made by the migrations before it keeps its deliveries, their leases and replays, and its indexes.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { openSqliteStore } from '../src/store/sqlite.js';
import { sqliteMigrations } from '../src/store/sqlite/migrations.js';
import { tempDir } from './helpers.js';

it('keeps the outbox of a database migrated up to 16 and takes deployment deliveries after it', async () => {
  const file = path.join(tempDir(), 'old.db');
  const old = new Database(file);
  old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
  for (const m of sqliteMigrations.filter((x) => x.version <= 16)) {
    old.exec(m.sql);
    old.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(m.version, '2026-01-01T00:00:00.000Z');
  }
  old.prepare(`INSERT INTO executions (execution_id, scenario_id, scenario_revision, project_id, address, state, results, credentials, created_at, updated_at)
    VALUES ('e1', 's1', 1, 'p1', '0xabc', 'completed', '[]', '[]', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`).run();
  old.prepare(`INSERT INTO webhook_deliveries (id, execution_id, event, url, payload, state, attempts, next_attempt_at, lease_until, last_status,
    last_error, created_at, updated_at, replay_requested)
    VALUES ('w1', 'e1', 'execution.completed', 'https://hooks.example/x', '{}', 'pending', 2, '2026-01-01T00:01:00.000Z',
      '2026-01-01T00:02:00.000Z', 500, 'answered 500', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:30.000Z', 1)`).run();
  old.close();

  const store = openSqliteStore({ file, synchronous: 'NORMAL' });
  try {
    expect(await store.webhooksOf('e1')).toEqual([{
      id: 'w1', executionId: 'e1', event: 'execution.completed', url: 'https://hooks.example/x', payload: '{}', state: 'pending', attempts: 2,
      nextAttemptAt: '2026-01-01T00:01:00.000Z', lastStatus: 500, lastError: 'answered 500', createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:30.000Z',
    }]);
  } finally {
    await store.close();
  }
  const db = new Database(file, { readonly: true });
  try {
    expect(db.prepare("SELECT lease_until, replay_requested, project_id FROM webhook_deliveries WHERE id = 'w1'").get())
      .toEqual({ lease_until: '2026-01-01T00:02:00.000Z', replay_requested: 1, project_id: null });
    const indexes = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('webhook_deliveries', 'scenarios')").pluck().all();
    expect(indexes).toEqual(expect.arrayContaining(['webhook_due', 'webhook_execution', 'webhook_created', 'scenarios_followed']));
    const notNull = db.prepare("SELECT \"notnull\" FROM pragma_table_info('webhook_deliveries') WHERE name = 'execution_id'").pluck().get();
    expect(notNull).toBe(0);
  } finally {
    db.close();
  }
});
