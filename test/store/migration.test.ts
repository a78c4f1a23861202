/** Migrations 5 (scenario ids unique per project), 10 (webhook deliveries of purged executions) and 22 (the verdict column) on databases written before them. */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it, vi } from 'vitest';
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

describe('migration 22: each execution\'s verdict kept in a column, set by a trigger, backfilled after start', () => {
  const status = (s: string) => ({ objectId: `q-${s}`, result: { status: s } });
  /** [results, the verdict they give]: verdictOf's order, not-valid first, then error, then pending. */
  const cases: Array<[unknown[], string]> = [
    [[status('valid'), status('valid')], 'passed'],
    [[status('valid'), status('not-valid'), status('error')], 'failed'],
    [[status('pending'), status('error')], 'error'],
    [[status('valid'), status('pending')], 'pending'],
    [[], 'passed'],
  ];
  const ids = cases.map(() => crypto.randomUUID());
  /** More than two backfill batches of 1000 beside the cases. */
  const BULK = 2300;
  const failed = JSON.stringify([status('not-valid')]);
  const pending = JSON.stringify([status('pending')]);
  /** How an instance before 22 writes: no verdict column. */
  const OLD_INSERT = `INSERT INTO executions (execution_id, scenario_id, scenario_revision, address, state, results, credentials, created_at, updated_at)
    VALUES ($1, 's', 1, '0x1', $2, $3, '[]', $4, $5)`;
  const OLD_COMPLETE = "UPDATE executions SET state = $1, results = $2, updated_at = $3 WHERE execution_id = $4 AND state = 'pending'";
  const sqlite = (sql: string) => sql.replace(/\$\d/g, '?');
  const late = { old: crypto.randomUUID(), oldPending: crypto.randomUUID(), newPending: crypto.randomUUID() };
  const expected = { [late.old]: 'error', [late.oldPending]: 'failed', [late.newPending]: 'passed' };

  it('SQLite: rows an older instance writes get their verdict, existing rows are filled after start, the column is indexed', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'v21.db');
    const old = new Database(file);
    old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
    for (const m of sqliteMigrations.filter((x) => x.version < 22)) {
      old.exec(m.sql);
      old.prepare('INSERT INTO schema_migrations VALUES (?, ?)').run(m.version, T);
    }
    const insert = old.prepare(sqlite(OLD_INSERT));
    old.transaction(() => {
      cases.forEach(([results], k) => insert.run(ids[k], 'completed', JSON.stringify(results), T, T));
      for (let k = 0; k < BULK; k++) insert.run(crypto.randomUUID(), 'completed', failed, T, T);
    })();
    old.close();
    const store = openSqliteStore({ file, synchronous: 'NORMAL' });
    const after = new Database(file);
    try {
      const missing = () => after.prepare<[], { n: number }>('SELECT count(*) AS n FROM executions WHERE verdict IS NULL').get()!.n;
      await vi.waitFor(() => expect(missing()).toBe(0), { timeout: 20_000, interval: 50 });
      const rows = after.prepare<[], { execution_id: string; verdict: string }>('SELECT execution_id, verdict FROM executions').all();
      expect(ids.map((id) => rows.find((r) => r.execution_id === id)?.verdict)).toEqual(cases.map(([, v]) => v));
      expect(rows.filter((r) => r.verdict === 'failed')).toHaveLength(BULK + 1);

      // A rolling upgrade: an older instance inserts without the column and completes pending executions.
      after.prepare(sqlite(OLD_INSERT)).run(late.old, 'completed', JSON.stringify(cases[2]![0]), T, T);
      after.prepare(sqlite(OLD_INSERT)).run(late.oldPending, 'pending', pending, T, T);
      after.prepare(`INSERT INTO executions (execution_id, scenario_id, scenario_revision, address, state, results, credentials, created_at, updated_at, verdict)
        VALUES (?, 's', 1, '0x1', 'pending', ?, '[]', ?, ?, 'pending')`).run(late.newPending, pending, T, T);
      const verdicts = () => Object.fromEntries(Object.keys(expected).map((id) => [id,
        after.prepare<[string], { verdict: string }>('SELECT verdict FROM executions WHERE execution_id = ?').get(id)!.verdict]));
      expect(verdicts()).toEqual({ ...expected, [late.oldPending]: 'pending', [late.newPending]: 'pending' });
      after.prepare(sqlite(OLD_COMPLETE)).run('completed', failed, T, late.oldPending);
      after.prepare(sqlite(OLD_COMPLETE)).run('completed', JSON.stringify(cases[0]![0]), T, late.newPending);
      expect(verdicts()).toEqual(expected);

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
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!pgAvailable)('PostgreSQL: rows an older instance writes get their verdict, existing rows are filled after start, the column is indexed', async () => {
    const schema = freshSchema('mig22');
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    let store: Awaited<ReturnType<typeof openPostgresStore>> | undefined;
    try {
      await migratedBelow(client, schema, 22);
      for (const [k, [results]] of cases.entries()) await client.query(OLD_INSERT, [ids[k], 'completed', JSON.stringify(results), T, T]);
      await client.query(`INSERT INTO executions (execution_id, scenario_id, scenario_revision, address, state, results, credentials, created_at, updated_at)
        SELECT gen_random_uuid(), 's', 1, '0x1', 'completed', $1, '[]', $2, $2 FROM generate_series(1, ${BULK})`, [failed, T]);
      store = await openPostgresStore({ url: PG_URL, schema });
      const missing = async () => Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM executions WHERE verdict IS NULL')).rows[0]!.n);
      await vi.waitFor(async () => expect(await missing()).toBe(0), { timeout: 20_000, interval: 50 });
      const { rows } = await client.query<{ execution_id: string; verdict: string }>('SELECT execution_id, verdict FROM executions');
      expect(ids.map((id) => rows.find((r) => r.execution_id === id)?.verdict)).toEqual(cases.map(([, v]) => v));
      expect(rows.filter((r) => r.verdict === 'failed')).toHaveLength(BULK + 1);

      await client.query(OLD_INSERT, [late.old, 'completed', JSON.stringify(cases[2]![0]), T, T]);
      await client.query(OLD_INSERT, [late.oldPending, 'pending', pending, T, T]);
      await client.query(`INSERT INTO executions (execution_id, scenario_id, scenario_revision, address, state, results, credentials, created_at, updated_at, verdict)
        VALUES ($1, 's', 1, '0x1', 'pending', $2, '[]', $3, $3, 'pending')`, [late.newPending, pending, T]);
      const verdicts = async () => Object.fromEntries(await Promise.all(Object.keys(expected).map(async (id) => [id,
        (await client.query<{ verdict: string }>('SELECT verdict FROM executions WHERE execution_id = $1', [id])).rows[0]!.verdict])));
      expect(await verdicts()).toEqual({ ...expected, [late.oldPending]: 'pending', [late.newPending]: 'pending' });
      await client.query(OLD_COMPLETE, ['completed', failed, T, late.oldPending]);
      await client.query(OLD_COMPLETE, ['completed', JSON.stringify(cases[0]![0]), T, late.newPending]);
      expect(await verdicts()).toEqual(expected);

      const indexes = await client.query<{ indexname: string }>('SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2', [schema, 'executions']);
      expect(indexes.rows.map((r) => r.indexname)).toEqual(expect.arrayContaining(['executions_scenario_verdict', 'executions_scenario_address', 'executions_scenario_period']));
    } finally {
      await store?.close();
      await client.end();
      await dropSchema(schema);
    }
  });
});
