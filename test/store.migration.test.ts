/** Migration 5 (scenario ids unique per project) on a database written by the schema before it. */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresMigrations, sqliteMigrations } from '../src/store/migrations.js';
import { openSqliteStore } from '../src/store/sqlite.js';
import { openPostgresStore } from '../src/store/postgres.js';
import type { Scenario } from '../src/schemas/scenario.js';
import { scenario, tempDir } from './helpers.js';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from './pg.js';

const input = (over: Record<string, unknown> = {}) => JSON.stringify(scenario(over));
const T = '2026-01-01T00:00:00.000Z';

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
      await client.query(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`);
      await client.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())');
      for (const m of postgresMigrations.filter((x) => x.version < 5)) {
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [m.version]);
      }
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
