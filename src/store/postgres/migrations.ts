import type pg from 'pg';
import { PG_RULES } from '../shadow-rows.js';
import {
  CHAIN_SENDS, CHAIN_SENDS_BY_HASH, LEASES_TABLE, SAME_IN_BOTH, shadowCountsMigration, shadowMigration, verdictBackfill,
  verdictMigration, verdictSql, type HasStatus, type Migration,
} from '../migrations.js';
import { PG_FOLLOWED } from './following.js';

/** Any fixed number: the advisory lock that serialises migrations of instances starting at once. */
const MIGRATION_LOCK = 0x5c5_0001;
/** setTimeout's largest delay (0 would mean the pool's query_timeout). */
const MIGRATION_QUERY_TIMEOUT_MS = 2 ** 31 - 1;

const PG_HAS_STATUS: HasStatus = (results, status) =>
  `EXISTS (SELECT 1 FROM jsonb_array_elements(${results}) r WHERE r->'result'->>'status' = '${status}')`;

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
  {
    // Deployment events (see the SQLite migration 17).
    version: 17,
    sql: `
      ALTER TABLE webhook_deliveries ALTER COLUMN execution_id DROP NOT NULL;
      ALTER TABLE webhook_deliveries ADD COLUMN project_id TEXT;
      CREATE INDEX scenarios_followed ON scenarios (seq) WHERE ${PG_FOLLOWED};
      ${LEASES_TABLE.replace('expires_at TEXT', 'expires_at TIMESTAMPTZ')}
    `,
  },
  ...CHAIN_SENDS,
  {
    // Shadow runs (see shadowMigration).
    version: 19,
    sql: shadowMigration('BIGSERIAL PRIMARY KEY', 'TIMESTAMPTZ'),
  },
  {
    // Shadow counts (see shadowCountsMigration).
    version: 20,
    sql: shadowCountsMigration(...PG_RULES),
  },
  CHAIN_SENDS_BY_HASH,
  // A row written without a verdict (an instance before 22), or whose results an UPDATE changed but not its verdict.
  verdictMigration(`
    CREATE FUNCTION executions_verdict() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN NEW.verdict := ${verdictSql(PG_HAS_STATUS, 'NEW.results')}; RETURN NEW; END $$;
    CREATE TRIGGER executions_verdict_insert BEFORE INSERT ON executions FOR EACH ROW WHEN (NEW.verdict IS NULL)
      EXECUTE FUNCTION executions_verdict();
    CREATE TRIGGER executions_verdict_update BEFORE UPDATE OF results, state ON executions FOR EACH ROW
      WHEN (NEW.verdict IS NOT DISTINCT FROM OLD.verdict) EXECUTE FUNCTION executions_verdict();
  `),
];

export const PG_VERDICT_BACKFILL = verdictBackfill(PG_HAS_STATUS);

export async function migrate(pool: pg.Pool, schema: string | undefined): Promise<void> {
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
          // The pool's timeouts are for requests: an index built on a large table takes longer.
          await client.query('SET LOCAL statement_timeout = 0');
          const statement: pg.QueryConfig & { query_timeout: number } = { text: m.sql, query_timeout: MIGRATION_QUERY_TIMEOUT_MS };
          await client.query(statement);
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
