/** Numbered schema migrations, applied in order, each once (recorded in schema_migrations). */
export interface Migration {
  version: number;
  sql: string;
}

/** The migrations whose SQL both databases take as it is, at the end of both lists. */
const SAME_IN_BOTH: Migration[] = [
  {
    // A replay asked while an attempt is in flight: kept, and sent once that attempt ends (not overwritten by it).
    version: 11,
    sql: 'ALTER TABLE webhook_deliveries ADD COLUMN replay_requested INTEGER NOT NULL DEFAULT 0;',
  },
  {
    // What a later attestation restates as it was at execute time: the digest of the scenario revision that ran, and
    // whether the holder was bound (ExecutionRecord.scenarioDigest, holderBound). Null in older rows.
    version: 12,
    sql: `
      ALTER TABLE executions ADD COLUMN scenario_digest TEXT;
      ALTER TABLE executions ADD COLUMN holder_bound INTEGER;
    `,
  },
  {
    // Every revision of a scenario as its GET answered it (ScenarioRevision). Text, not JSONB: the content is kept to
    // the byte. No foreign key: a deleted scenario's revisions stay while executions ran them.
    version: 13,
    sql: `
      CREATE TABLE scenario_revisions (
        scenario_seq BIGINT NOT NULL,
        revision INTEGER NOT NULL,
        scenario_id TEXT NOT NULL,
        project_id TEXT,
        content TEXT NOT NULL,
        digest TEXT NOT NULL,
        patch TEXT,
        author TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (scenario_seq, revision)
      );
      CREATE INDEX scenario_revisions_ran ON scenario_revisions (scenario_id, revision);
    `,
  },
];

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
    // Scenario ids unique per project, not across projects (an id taken in another project must not be revealed by
    // a 409). SQLite cannot drop a column's UNIQUE: the table is rebuilt, seq values and the AUTOINCREMENT counter
    // kept (a seq is never reused). Scenarios without a project count as one project ('' is no project id: ids have
    // at least one character).
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
    // OffChainZKP nullifiers (credentialAtomicQueryV3), as hashes, per scenario: the address each was first seen
    // with (a hash too). Kept for the scenario's life: they are what "one holder, one address" remembers.
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
    // Idempotency claims are leased: a claim whose owner died is free once its lease runs out.
    version: 7,
    sql: 'ALTER TABLE idempotency_keys ADD COLUMN lease_until TEXT;',
  },
  {
    // The OffChainZKP answers an execution took (ZKP_ANSWERS_PER_EXECUTION), with the execution: one budget for all instances.
    version: 8,
    sql: 'ALTER TABLE executions ADD COLUMN zkp_answers INTEGER NOT NULL DEFAULT 0;',
  },
  {
    // Webhooks for every execution: a delivery may go to its scenario's own webhookUrl (null: WEBHOOK_URL).
    version: 9,
    sql: 'ALTER TABLE webhook_deliveries ADD COLUMN url TEXT;',
  },
  {
    // Deliveries are purged with their executions (and by age): the rows of executions purged before are deleted.
    version: 10,
    sql: `
      DELETE FROM webhook_deliveries WHERE execution_id NOT IN (SELECT execution_id FROM executions);
      CREATE INDEX webhook_created ON webhook_deliveries (created_at);
    `,
  },
  ...SAME_IN_BOTH,
];

export const postgresMigrations: Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE scenarios (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        input JSONB NOT NULL,
        project_id TEXT,
        revision INTEGER NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL
      );
      CREATE INDEX scenarios_project ON scenarios (project_id, seq);
    `,
  },
  {
    version: 2,
    sql: `
      CREATE TABLE executions (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        execution_id UUID NOT NULL UNIQUE,
        scenario_id TEXT NOT NULL,
        scenario_revision INTEGER NOT NULL,
        project_id TEXT,
        address TEXT NOT NULL,
        state TEXT NOT NULL,
        results JSONB NOT NULL,
        credentials JSONB NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL
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
        headers JSONB,
        body TEXT,
        created_at TIMESTAMPTZ NOT NULL
      );
      CREATE INDEX idempotency_created ON idempotency_keys (created_at);
    `,
  },
  {
    version: 4,
    sql: `
      ALTER TABLE executions ADD COLUMN zkp JSONB;
      ALTER TABLE executions ADD COLUMN expires_at TIMESTAMPTZ;
      CREATE INDEX executions_pending ON executions (state, expires_at);
      CREATE TABLE webhook_deliveries (
        id UUID PRIMARY KEY,
        execution_id UUID NOT NULL,
        event TEXT NOT NULL,
        payload TEXT NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        next_attempt_at TIMESTAMPTZ NOT NULL,
        lease_until TIMESTAMPTZ,
        last_status INTEGER,
        last_error TEXT,
        created_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL
      );
      CREATE INDEX webhook_due ON webhook_deliveries (state, next_attempt_at);
      CREATE INDEX webhook_execution ON webhook_deliveries (execution_id);
    `,
  },
  {
    // Scenario ids unique per project (see the SQLite migration 5).
    version: 5,
    sql: `
      ALTER TABLE scenarios DROP CONSTRAINT scenarios_id_key;
      CREATE UNIQUE INDEX scenarios_project_id ON scenarios ((COALESCE(project_id, '')), id);
      CREATE INDEX scenarios_id ON scenarios (id);
    `,
  },
  {
    // OffChainZKP nullifiers (see the SQLite migration 6).
    version: 6,
    sql: `
      CREATE TABLE zkp_nullifiers (
        project_id TEXT NOT NULL,
        scenario_id TEXT NOT NULL,
        nullifier_hash TEXT NOT NULL,
        address_hash TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (project_id, scenario_id, nullifier_hash)
      );
    `,
  },
  {
    // Idempotency claims are leased (see the SQLite migration 7).
    version: 7,
    sql: 'ALTER TABLE idempotency_keys ADD COLUMN lease_until TIMESTAMPTZ;',
  },
  {
    // OffChainZKP answers per execution (see the SQLite migration 8).
    version: 8,
    sql: 'ALTER TABLE executions ADD COLUMN zkp_answers INTEGER NOT NULL DEFAULT 0;',
  },
  {
    // Per-scenario webhook URLs (see the SQLite migration 9).
    version: 9,
    sql: 'ALTER TABLE webhook_deliveries ADD COLUMN url TEXT;',
  },
  {
    // Deliveries purged with their executions (see the SQLite migration 10).
    version: 10,
    sql: `
      DELETE FROM webhook_deliveries w WHERE NOT EXISTS (SELECT 1 FROM executions e WHERE e.execution_id = w.execution_id);
      CREATE INDEX webhook_created ON webhook_deliveries (created_at);
    `,
  },
  ...SAME_IN_BOTH,
];
