/** Opening the SQLite store while another process opens the same new file (WORKERS, or two instances, starting at once). */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openSqliteStore } from '../src/store/sqlite.js';
import { scenario, tempDir } from './helpers.js';

/** Holds the write lock (RESERVED: BEGIN IMMEDIATE) of a new, still rollback-journal database file for 500 ms. */
const HOLD = `
const Database = require('better-sqlite3');
const db = new Database(process.argv[1]);
db.exec('BEGIN IMMEDIATE');
process.stdout.write('held');
setTimeout(() => { db.exec('COMMIT'); db.close(); }, 500);
`;

describe('opening the SQLite store', () => {
  it('waits while another process holds the write lock of a new database file, then opens it in WAL mode', async () => {
    const file = path.join(tempDir(), 'scenarios.db');
    const holder = spawn(process.execPath, ['-e', HOLD, file], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = once(holder, 'exit');
    await once(holder.stdout, 'data');
    // SQLite answers the switch to WAL with SQLITE_BUSY at once here (its busy handler would risk a deadlock).
    const t0 = Date.now();
    const store = openSqliteStore({ file, synchronous: 'NORMAL' });
    try {
      expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
      const created = await store.create('opened', scenario() as never, new Date().toISOString());
      expect(created?.revision).toBe(1);
      expect((await store.find('opened', undefined))[0]?.revision).toBe(1);
    } finally {
      await store.close();
    }
    expect((await exited)[0]).toBe(0);
    const check = new Database(file, { readonly: true });
    expect(check.pragma('journal_mode', { simple: true })).toBe('wal');
    check.close();
  });
});
