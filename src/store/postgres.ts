import pg from 'pg';
import { guard } from './errors.js';
import { GroupCommit } from './group-commit.js';
import { PROBE_BYTES, PROBE_KEY, StorageState } from './storage-state.js';
import type { ExecutionRecord, Store } from './types.js';
import type { PostgresDatabase } from './postgres/database.js';
import { migrate, PG_VERDICT_BACKFILL } from './postgres/migrations.js';
import { VerdictBackfill } from './verdict-backfill.js';
import { postgresScenarios } from './postgres/scenarios.js';
import { insertExecutions, postgresExecutions } from './postgres/executions.js';
import { postgresExport } from './postgres/export.js';
import { postgresWebhooks } from './postgres/webhooks.js';
import { postgresFollowing } from './postgres/following.js';
import { postgresIdempotency } from './postgres/idempotency.js';
import { postgresNullifiers } from './postgres/nullifiers.js';
import { postgresChainSends } from './postgres/chain-sends.js';
import { postgresRevisions } from './postgres/revisions.js';
import { postgresApprovals } from './postgres/approvals.js';
import { postgresShadows } from './postgres/shadows.js';

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

  // A lone statement commits before ReadyForQuery, so a failed commit (disk_full) rejects the query; `storage` sees it.
  const storage = new StorageState(async () => {
    await pool.query(
      `INSERT INTO idempotency_keys (key, request_hash, created_at) SELECT $1, string_agg(md5(random()::text), ''), now()
       FROM generate_series(1, $2::int / 32) ON CONFLICT (key) DO UPDATE SET request_hash = EXCLUDED.request_hash`,
      [PROBE_KEY, PROBE_BYTES],
    );
    await pool.query('DELETE FROM idempotency_keys WHERE key = $1', [PROBE_KEY]);
  });
  const db: PostgresDatabase = {
    pool,
    storage,
    query: (text, values) => guard(() => pool.query(text, values)),
    write: (text, values) => storage.write(() => pool.query(text, values)),
  };

  try {
    await guard(() => migrate(pool, schema));
  } catch (err) {
    await pool.end().catch(() => {});
    throw err;
  }

  const backfill = new VerdictBackfill(
    async () => (await db.write(PG_VERDICT_BACKFILL)).rowCount ?? 0,
    (err) => options.onError?.(err as Error),
  );

  // Batches are independent INSERTs, a few in flight at once; at most half the pool, so reads find a connection.
  const audit = new GroupCommit<ExecutionRecord>(insertExecutions(db), 256, Math.max(1, Math.min(4, Math.floor(poolSize / 2))));

  const webhooks = postgresWebhooks(db);

  return {
    kind: 'postgres',
    ...postgresScenarios(db),
    ...postgresRevisions(db),
    ...postgresApprovals(db),
    ...postgresShadows(db),
    ...postgresExecutions(db, audit),
    ...postgresExport(db),
    ...webhooks.outbox,
    ...postgresFollowing(db),
    ...postgresIdempotency(db),
    ...postgresNullifiers(db),
    ...postgresChainSends(db),
    async ping() {
      await db.query('SELECT 1');
      await storage.check();
    },
    async close() {
      await backfill.stop();
      await audit.drain();
      await webhooks.drain();
      await pool.end();
    },
  };
}
