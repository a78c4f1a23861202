import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { BACKSTOP_CHECKPOINT_PAGES, threadWriter, type BatchWriter } from '../src/store/sqlite-writer.js';
import { tempDir } from './helpers.js';

let writer: BatchWriter | undefined;
afterEach(async () => {
  await writer?.close();
  writer = undefined;
});

function database() {
  const file = path.join(tempDir(), 'w.db');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER NOT NULL)');
  return { file, db, rows: () => db.prepare('SELECT id, n FROM t ORDER BY id').all() };
}

describe('the SQLite writer thread', () => {
  it('commits each batch in one transaction before it resolves, visible to the other connection at once', async () => {
    const { file, rows } = database();
    writer = threadWriter(file, 'NORMAL', 'INSERT INTO t (id, n) VALUES (?, ?)');
    await writer.write([['a', 1], ['b', 2]]);
    expect(rows()).toEqual([{ id: 'a', n: 1 }, { id: 'b', n: 2 }]);
    await Promise.all([writer.write([['c', 3]]), writer.write([['d', 4]])]);
    expect(rows()).toHaveLength(4);
  });

  it('rejects a failing batch with SQLite\'s error code, writes none of it, and goes on with the next', async () => {
    const { file, rows } = database();
    writer = threadWriter(file, 'NORMAL', 'INSERT INTO t (id, n) VALUES (?, ?)');
    await writer.write([['a', 1]]);
    await expect(writer.write([['b', 2], ['a', 3]])).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
    expect(rows()).toEqual([{ id: 'a', n: 1 }]);
    await writer.write([['b', 2]]);
    expect(rows()).toEqual([{ id: 'a', n: 1 }, { id: 'b', n: 2 }]);
  });

  it('copies the WAL into the database file from a checkpointer thread, without the writer checkpointing', async () => {
    const { file, db, rows } = database();
    db.pragma('wal_autocheckpoint = 0'); // this test connection never checkpoints
    writer = threadWriter(file, 'NORMAL', 'INSERT INTO t (id, n) VALUES (?, ?)');
    const before = fs.statSync(file).size;
    const pad = 'x'.repeat(2000);
    await writer.write(Array.from({ length: 300 }, (_, i) => [`${pad}${i}`, i]));
    // 300 rows of 2 KB: ~600 KB of WAL, far below the writer's backstop (~40 MB), so only the checkpointer moves it.
    expect((300 * 2000) / 4096).toBeLessThan(BACKSTOP_CHECKPOINT_PAGES / 10);
    const deadline = Date.now() + 5000;
    while (fs.statSync(file).size < before + 500_000 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(fs.statSync(file).size).toBeGreaterThan(before + 500_000);
    expect(rows()).toHaveLength(300);
  });

  it('close() waits for the writes in flight, then ends the thread', async () => {
    const { file, rows } = database();
    const w = threadWriter(file, 'FULL', 'INSERT INTO t (id, n) VALUES (?, ?)');
    const pending = w.write(Array.from({ length: 500 }, (_, i) => [`k${String(i).padStart(3, '0')}`, i]));
    await w.close();
    await pending;
    expect(rows()).toHaveLength(500);
  });

  it('answers a database it cannot open with an error marked unavailable (503), not a hang', async () => {
    writer = threadWriter(path.join(tempDir(), 'missing-dir', 'nope', 'x.db'), 'NORMAL', 'INSERT INTO t (id, n) VALUES (?, ?)');
    await expect(writer.write([['a', 1]])).rejects.toMatchObject({ code: 'SCS_WRITER_GONE' });
  });
});
