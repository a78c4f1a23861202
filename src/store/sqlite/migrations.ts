import type Database from 'better-sqlite3';
import { SQLITE_RULES } from '../shadow-rows.js';
import {
  CHAIN_SENDS, CHAIN_SENDS_BY_HASH, LEASES_TABLE, SAME_IN_BOTH, shadowCountsMigration, shadowMigration, verdictBackfill,
  verdictMigration, verdictSql, type HasStatus, type Migration,
} from '../migrations.js';
import { SQLITE_FOLLOWED } from './following.js';

const SQLITE_HAS_STATUS: HasStatus = (results, status) =>
  `EXISTS (SELECT 1 FROM json_each(${results}) WHERE json_extract(value, '$.result.status') = '${status}')`;

export const sqliteMigrations: Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE scenarios (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        input TEXT NOT NULL,
        project_id TEXT,
        revision INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX scenarios_project ON scenarios (project_id, seq);
    `,
  },
  {
    version: 2,
    sql: `
      CREATE TABLE executions (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        execution_id TEXT NOT NULL UNIQUE,
        scenario_id TEXT NOT NULL,
        scenario_revision INTEGER NOT NULL,
        project_id TEXT,
        address TEXT NOT NULL,
        state TEXT NOT NULL,
        results TEXT NOT NULL,
        credentials TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX executions_scenario ON executions (scenario_id, seq);
      CREATE INDEX executions_created ON executions (created_at);
    `,
  },
  {
    version: 3,
    sql: `
      CREATE TABLE idempotency_keys (
        key TEXT PRIMARY KEY,
        request_hash TEXT NOT NULL,
        status INTEGER,
        headers TEXT,
        body TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX idempotency_created ON idempotency_keys (created_at);
    `,
  },
  {
    version: 4,
    sql: `
      ALTER TABLE executions ADD COLUMN zkp TEXT;
      ALTER TABLE executions ADD COLUMN expires_at TEXT;
      CREATE INDEX executions_pending ON executions (state, expires_at);
      CREATE TABLE webhook_deliveries (
        id TEXT PRIMARY KEY,
        execution_id TEXT NOT NULL,
        event TEXT NOT NULL,
        payload TEXT NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        next_attempt_at TEXT NOT NULL,
        lease_until TEXT,
        last_status INTEGER,
        last_error TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX webhook_due ON webhook_deliveries (state, next_attempt_at);
      CREATE INDEX webhook_execution ON webhook_deliveries (execution_id);
    `,
  },
  {
    // Ids unique per project, so a 409 reveals no other project's id. SQLite cannot drop a UNIQUE: the table is
    // rebuilt, keeping seq and the AUTOINCREMENT counter; '' stands for no project.
    version: 5,
    sql: `
      CREATE TABLE scenarios_v5 (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL,
        input TEXT NOT NULL,
        project_id TEXT,
        revision INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      INSERT INTO scenarios_v5 (seq, id, input, project_id, revision, created_at, updated_at)
        SELECT seq, id, input, project_id, revision, created_at, updated_at FROM scenarios;
      DELETE FROM sqlite_sequence WHERE name = 'scenarios_v5';
      UPDATE sqlite_sequence SET name = 'scenarios_v5' WHERE name = 'scenarios';
      DROP TABLE scenarios;
      ALTER TABLE scenarios_v5 RENAME TO scenarios;
      CREATE UNIQUE INDEX scenarios_project_id ON scenarios (COALESCE(project_id, ''), id);
      CREATE INDEX scenarios_id ON scenarios (id);
      CREATE INDEX scenarios_project ON scenarios (project_id, seq);
    `,
  },
  {
    // Nullifier and first address, as hashes, per scenario, kept for its life: "one holder, one address".
    version: 6,
    sql: `
      CREATE TABLE zkp_nullifiers (
        project_id TEXT NOT NULL,
        scenario_id TEXT NOT NULL,
        nullifier_hash TEXT NOT NULL,
        address_hash TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (project_id, scenario_id, nullifier_hash)
      );
    `,
  },
  {
    // A claim whose owner died is free once its lease runs out.
    version: 7,
    sql: 'ALTER TABLE idempotency_keys ADD COLUMN lease_until TEXT;',
  },
  {
    // ZKP_ANSWERS_PER_EXECUTION: one budget for all instances.
    version: 8,
    sql: 'ALTER TABLE executions ADD COLUMN zkp_answers INTEGER NOT NULL DEFAULT 0;',
  },
  {
    // A scenario's own webhookUrl (null: WEBHOOK_URL).
    version: 9,
    sql: 'ALTER TABLE webhook_deliveries ADD COLUMN url TEXT;',
  },
  {
    // Deliveries are purged with their executions: orphans go.
    version: 10,
    sql: `
      DELETE FROM webhook_deliveries WHERE execution_id NOT IN (SELECT execution_id FROM executions);
      CREATE INDEX webhook_created ON webhook_deliveries (created_at);
    `,
  },
  ...SAME_IN_BOTH,
  {
    // Deployment events have no execution: SQLite cannot drop a NOT NULL, so the table is rebuilt. The scenarios the
    // chain follower reads are indexed (a partial index: only those with something to follow).
    version: 17,
    sql: `
      CREATE TABLE webhook_deliveries_v17 (
        id TEXT PRIMARY KEY,
        execution_id TEXT,
        event TEXT NOT NULL,
        payload TEXT NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        next_attempt_at TEXT NOT NULL,
        lease_until TEXT,
        last_status INTEGER,
        last_error TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        url TEXT,
        replay_requested INTEGER NOT NULL DEFAULT 0,
        project_id TEXT
      );
      INSERT INTO webhook_deliveries_v17 (id, execution_id, event, payload, state, attempts, next_attempt_at, lease_until, last_status,
        last_error, created_at, updated_at, url, replay_requested)
        SELECT id, execution_id, event, payload, state, attempts, next_attempt_at, lease_until, last_status, last_error, created_at,
          updated_at, url, replay_requested FROM webhook_deliveries;
      DROP TABLE webhook_deliveries;
      ALTER TABLE webhook_deliveries_v17 RENAME TO webhook_deliveries;
      CREATE INDEX webhook_due ON webhook_deliveries (state, next_attempt_at);
      CREATE INDEX webhook_execution ON webhook_deliveries (execution_id);
      CREATE INDEX webhook_created ON webhook_deliveries (created_at);
      CREATE INDEX scenarios_followed ON scenarios (seq) WHERE ${SQLITE_FOLLOWED};
      ${LEASES_TABLE}
    `,
  },
  ...CHAIN_SENDS,
  {
    // Shadow runs (see shadowMigration): the comparisons' seq pages the flipped executions.
    version: 19,
    sql: shadowMigration('INTEGER PRIMARY KEY', 'TEXT'),
  },
  {
    // Shadow counts kept as comparisons are written (see shadowCountsMigration).
    version: 20,
    sql: shadowCountsMigration(...SQLITE_RULES),
  },
  CHAIN_SENDS_BY_HASH,
  // A row written without a verdict (an instance before 22), or whose results an UPDATE changed but not its verdict.
  verdictMigration(`
    CREATE TRIGGER executions_verdict_insert AFTER INSERT ON executions WHEN NEW.verdict IS NULL
    BEGIN UPDATE executions SET verdict = ${verdictSql(SQLITE_HAS_STATUS, 'results')} WHERE seq = NEW.seq; END;
    CREATE TRIGGER executions_verdict_update AFTER UPDATE OF results, state ON executions WHEN NEW.verdict IS OLD.verdict
    BEGIN UPDATE executions SET verdict = ${verdictSql(SQLITE_HAS_STATUS, 'results')} WHERE seq = NEW.seq; END;
  `),
];

export const SQLITE_VERDICT_BACKFILL = verdictBackfill(SQLITE_HAS_STATUS);

export function migrate(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
  const applied = new Set(db.prepare<[], { version: number }>('SELECT version FROM schema_migrations').all().map((r) => r.version));
  const record = db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)');
  for (const m of sqliteMigrations) {
    if (applied.has(m.version)) continue;
    // BEGIN IMMEDIATE: two processes opening one file serialise here.
    db.transaction(() => {
      const again = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(m.version);
      if (again) return;
      db.exec(m.sql);
      record.run(m.version, new Date().toISOString());
    }).immediate();
  }
}
