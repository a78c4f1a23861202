/** Migrations 5 (scenario ids unique per project), 10 (webhook deliveries of purged executions) and 22 (the verdict column) on databases written before them. */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { sqliteMigrations } from '../../src/store/sqlite/migrations.js';
import { postgresMigrations } from '../../src/store/postgres/migrations.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import { openPostgresStore } from '../../src/store/postgres.js';
import type { Scenario } from '../../src/schemas/scenario.js';
import { scenario, tempDir } from '../helpers.js';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from '../pg.js';

const input = (over: Record<string, unknown> = {}) => JSON.stringify(scenario(over));
const T = '2026-01-01T00:00:00.000Z';

/** A schema of its own, migrated as a service before migration `version` left it. */
async function migratedBelow(client: pg.Client, schema: string, version: number): Promise<void> {
  await client.query(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`);
  await client.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())');
  for (const m of postgresMigrations.filter((x) => x.version < version)) {
    await client.query(m.sql);
    await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [m.version]);
  }
}

describe('migration 5: scenario ids unique per project', () => {
  it('SQLite: keeps every row, its seq and the seq counter (a deleted seq is never reused), then allows one id per project', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'old.db');
    const old = new Database(file);
    old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
    for (const m of sqliteMigrations.filter((x) => x.version < 5)) {
      old.exec(m.sql);
      old.prepare('INSERT INTO schema_migrations VALUES (?, ?)').run(m.version, T);
    }
    const insert = old.prepare('INSERT INTO scenarios (id, input, project_id, revision, created_at, updated_at) VALUES (?, ?, ?, 2, ?, ?)');
    insert.run('kept', input({ projectId: 'pa' }), 'pa', T, T);
    insert.run('plain', input(), null, T, T);
    insert.run('gone', input(), null, T, T);
    old.prepare("DELETE FROM scenarios WHERE id = 'gone'").run();
    old.close();

    const store = openSqliteStore({ file, synchronous: 'NORMAL' });
    try {
      expect((await store.find('kept', ['pa'])).map((r) => [r.seq, r.revision])).toEqual([[1, 2]]);
      expect((await store.find('plain', undefined)).map((r) => [r.seq, r.revision])).toEqual([[2, 2]]);
      const again = await store.create('gone', JSON.parse(input()) as Scenario, T);
      expect(again!.seq).toBe(4);
      expect(await store.create('kept', JSON.parse(input({ projectId: 'pb' })) as Scenario, T)).not.toBeNull();
      expect(await store.create('kept', JSON.parse(input({ projectId: 'pa' })) as Scenario, T)).toBeNull();
      expect(await store.create('plain', JSON.parse(input()) as Scenario, T)).toBeNull();
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!pgAvailable)('PostgreSQL: keeps every row, then allows one id per project', async () => {
    const schema = freshSchema('mig');
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      await migratedBelow(client, schema, 5);
      await client.query(
        'INSERT INTO scenarios (id, input, project_id, revision, created_at, updated_at) VALUES ($1, $2, $3, 3, $4, $4)',
        ['kept', input({ projectId: 'pa' }), 'pa', T],
      );
    } finally {
      await client.end();
    }
    const store = await openPostgresStore({ url: PG_URL, schema });
    try {
      expect((await store.find('kept', ['pa'])).map((r) => r.revision)).toEqual([3]);
      expect(await store.create('kept', JSON.parse(input({ projectId: 'pb' })) as Scenario, T)).not.toBeNull();
      expect(await store.create('kept', JSON.parse(input({ projectId: 'pa' })) as Scenario, T)).toBeNull();
      expect(await store.create('kept', JSON.parse(input()) as Scenario, T)).not.toBeNull();
      expect(await store.create('kept', JSON.parse(input()) as Scenario, T)).toBeNull();
    } finally {
      await store.close();
      await dropSchema(schema);
    }
  });
});

describe('migration 10: the webhook deliveries of purged executions are deleted', () => {
  const kept = crypto.randomUUID();
  const orphan = crypto.randomUUID();
  const executionId = crypto.randomUUID();
  const delivery = (id: string, execution: string) => [id, execution, 'execution.completed', '{"data":{"address":"0x1"}}', 'delivered', 1, T, T, T];

  it('SQLite: deletes the deliveries whose execution is gone, keeps the others', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'old.db');
    const old = new Database(file);
    old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
    for (const m of sqliteMigrations.filter((x) => x.version < 10)) {
      old.exec(m.sql);
      old.prepare('INSERT INTO schema_migrations VALUES (?, ?)').run(m.version, T);
    }
    old.prepare(`INSERT INTO executions (execution_id, scenario_id, scenario_revision, address, state, results, credentials, created_at, updated_at)
      VALUES (?, 's', 1, '0x1', 'completed', '[]', '[]', ?, ?)`).run(executionId, T, T);
    const insert = old.prepare(`INSERT INTO webhook_deliveries (id, execution_id, event, payload, state, attempts, next_attempt_at, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    insert.run(...delivery(kept, executionId));
    insert.run(...delivery(orphan, crypto.randomUUID()));
    old.close();

    const store = openSqliteStore({ file, synchronous: 'NORMAL' });
    await store.close();
    const after = new Database(file);
    try {
      expect(after.prepare('SELECT id FROM webhook_deliveries').all()).toEqual([{ id: kept }]);
    } finally {
      after.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!pgAvailable)('PostgreSQL: deletes the deliveries whose execution is gone, keeps the others', async () => {
    const schema = freshSchema('mig10');
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      await migratedBelow(client, schema, 10);
      await client.query(`INSERT INTO executions (execution_id, scenario_id, scenario_revision, address, state, results, credentials, created_at, updated_at)
        VALUES ($1, 's', 1, '0x1', 'completed', '[]', '[]', $2, $2)`, [executionId, T]);
      for (const values of [delivery(kept, executionId), delivery(orphan, crypto.randomUUID())]) {
        await client.query(`INSERT INTO webhook_deliveries (id, execution_id, event, payload, state, attempts, next_attempt_at, created_at, updated_at)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, values);
      }
      const store = await openPostgresStore({ url: PG_URL, schema });
      await store.close();
      expect((await client.query(`SELECT id FROM ${schema}.webhook_deliveries`)).rows).toEqual([{ id: kept }]);
    } finally {
      await client.end();
      await dropSchema(schema);
    }
  });
});

describe('migration 22: each execution\'s verdict kept in a column, from its results', () => {
  const status = (s: string) => ({ objectId: `q-${s}`, result: { status: s } });
  /** [results, the verdict the migration must give]: verdictOf's order, not-valid first, then error, then pending. */
  const cases: Array<[unknown[], string]> = [
    [[status('valid'), status('valid')], 'passed'],
    [[status('valid'), status('not-valid'), status('error')], 'failed'],
    [[status('pending'), status('error')], 'error'],
    [[status('valid'), status('pending')], 'pending'],
    [[], 'passed'],
  ];
  const ids = cases.map(() => crypto.randomUUID());

  it('SQLite: fills the column of existing records and indexes it', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'v21.db');
    const old = new Database(file);
    old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
    for (const m of sqliteMigrations.filter((x) => x.version < 22)) {
      old.exec(m.sql);
      old.prepare('INSERT INTO schema_migrations VALUES (?, ?)').run(m.version, T);
    }
    const insert = old.prepare(`INSERT INTO executions (execution_id, scenario_id, scenario_revision, address, state, results, credentials, created_at, updated_at)
      VALUES (?, 's', 1, '0x1', 'completed', ?, '[]', ?, ?)`);
    cases.forEach(([results], k) => insert.run(ids[k], JSON.stringify(results), T, T));
    old.close();
    const store = openSqliteStore({ file, synchronous: 'NORMAL' });
    await store.close();
    const after = new Database(file);
    try {
      const rows = after.prepare<[], { execution_id: string; verdict: string }>('SELECT execution_id, verdict FROM executions').all();
      expect(ids.map((id) => rows.find((r) => r.execution_id === id)?.verdict)).toEqual(cases.map(([, v]) => v));
      const indexes = after.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'executions'").all().map((r) => r.name);
      expect(indexes).toEqual(expect.arrayContaining(['executions_scenario_verdict', 'executions_scenario_address', 'executions_scenario_period']));
      // The listing's filters and the summary's period seek by these indexes: no scan of the table, no sort for the order.
      const plan = (where: string, order = 'ORDER BY seq DESC') => after.prepare(`EXPLAIN QUERY PLAN SELECT seq FROM executions WHERE ${where} ${order} LIMIT 10`)
        .all().map((r) => (r as { detail: string }).detail).join('; ');
      expect(plan("scenario_id = 's' AND verdict = 'failed' AND seq < 99")).toMatch(/USING (COVERING )?INDEX executions_scenario_verdict \(scenario_id=\? AND verdict=\? AND seq<\?\)$/);
      expect(plan("scenario_id = 's' AND address = '0x1' AND seq < 99")).toMatch(/USING (COVERING )?INDEX executions_scenario_address \(scenario_id=\? AND address=\? AND seq<\?\)$/);
      expect(plan(`scenario_id = 's' AND created_at >= '${T}' AND created_at < '2027-01-01'`, '')).toMatch(/USING (COVERING )?INDEX executions_scenario_period \(scenario_id=\? AND created_at>\? AND created_at<\?\)$/);
    } finally {
      after.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!pgAvailable)('PostgreSQL: fills the column of existing records and indexes it', async () => {
    const schema = freshSchema('mig22');
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      await migratedBelow(client, schema, 22);
      for (const [k, [results]] of cases.entries()) {
        await client.query(`INSERT INTO executions (execution_id, scenario_id, scenario_revision, address, state, results, credentials, created_at, updated_at)
          VALUES ($1, 's', 1, '0x1', 'completed', $2, '[]', $3, $3)`, [ids[k], JSON.stringify(results), T]);
      }
      const store = await openPostgresStore({ url: PG_URL, schema });
      await store.close();
      const { rows } = await client.query<{ execution_id: string; verdict: string }>(`SELECT execution_id, verdict FROM ${schema}.executions`);
      expect(ids.map((id) => rows.find((r) => r.execution_id === id)?.verdict)).toEqual(cases.map(([, v]) => v));
      const indexes = await client.query<{ indexname: string }>('SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2', [schema, 'executions']);
      expect(indexes.rows.map((r) => r.indexname)).toEqual(expect.arrayContaining(['executions_scenario_verdict', 'executions_scenario_address', 'executions_scenario_period']));
    } finally {
      await client.end();
      await dropSchema(schema);
    }
  });
});
