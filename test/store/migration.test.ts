/** Migrations 5 (scenario ids unique per project) and 10 (webhook deliveries of purged executions) on databases written before them. */
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
