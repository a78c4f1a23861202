/**
 * The decisions reads on each store, through the store's own methods: DECISIONS_ROWS (200,000) executions written
 * straight into a fresh SQLite file (and a fresh PostgreSQL schema when DATABASE_URL is set), three in four of one
 * scenario, 13 s apart (30 days), one in seven failed; then the mean of 5 runs of the summary (30 days by day, one day
 * by hour) and of a page of 50 filtered by verdict, by address and by one day's period.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import { openSqliteStore } from '../dist/store/sqlite.js';
import { openPostgresStore } from '../dist/store/postgres.js';
import { EXECUTION_INSERT_COLUMNS, EXECUTION_INSERT_FIELDS, executionValues } from '../dist/store/rows.js';

const ROWS = Number(process.env.DECISIONS_ROWS ?? 200_000);
const START = Date.parse('2026-01-01T00:00:00Z');
const result = (id, status) => ({
  objectType: 'ChallengeQuery', objectId: id, name: 'n', address: 'a', scenarioId: 'kyc', executionId: 'x',
  result: { result: { is_valid: status === 'valid', reasons: ['r'] }, executionId: 'x', status, query: { type: 'T', operator: '$noop' } },
});
const record = (i) => {
  const at = new Date(START + i * 13_000).toISOString();
  return executionValues({
    executionId: randomUUID(), scenarioId: i % 4 === 0 ? 'other' : 'kyc', scenarioRevision: 1, projectId: 'p', address: `0x${(i % 500).toString(16).padStart(40, '0')}`,
    state: 'completed', results: [result('age', 'valid'), result('green', i % 7 === 0 ? 'not-valid' : 'valid')],
    credentials: [{ id: 'c', sha256: 'a'.repeat(64) }], createdAt: at, updatedAt: at,
  });
};

async function measure(name, store) {
  const time = async (what, fn) => {
    await fn();
    const t0 = performance.now();
    for (let k = 0; k < 5; k++) await fn();
    console.log(`${name}: ${what} ${((performance.now() - t0) / 5).toFixed(1)} ms`);
  };
  await time('summary, 30 days by day', () => store.countExecutions('kyc', { from: '2026-01-01T00:00:00.000Z', to: '2026-01-31T00:00:00.000Z' }, 'day', ['p']));
  await time('summary, 1 day by hour', () => store.countExecutions('kyc', { from: '2026-01-10T00:00:00.000Z', to: '2026-01-11T00:00:00.000Z' }, 'hour', ['p']));
  await time('page of 50, verdict=failed', () => store.listExecutions('kyc', 50, undefined, ['p'], { verdict: 'failed' }));
  await time('page of 50, one address', () => store.listExecutions('kyc', 50, undefined, ['p'], { address: `0x${(7).toString(16).padStart(40, '0')}` }));
  await time('page of 50, one day a week back', () => store.listExecutions('kyc', 50, undefined, ['p'], { from: '2026-01-20T00:00:00.000Z', to: '2026-01-21T00:00:00.000Z' }));
  await store.close();
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scs-bench-decisions-'));
const file = path.join(dir, 'decisions.db');
await openSqliteStore({ file, synchronous: 'NORMAL' }).close();
const db = new Database(file);
const insert = db.prepare(`INSERT INTO executions (${EXECUTION_INSERT_COLUMNS}) VALUES (${Array(EXECUTION_INSERT_FIELDS).fill('?').join(', ')})`);
db.transaction(() => { for (let i = 0; i < ROWS; i++) insert.run(record(i)); })();
db.close();
await measure(`sqlite, ${ROWS} rows`, openSqliteStore({ file, synchronous: 'NORMAL' }));
fs.rmSync(dir, { recursive: true, force: true });

if (process.env.DATABASE_URL) {
  const schema = `bench_decisions_${Date.now()}`;
  await (await openPostgresStore({ url: process.env.DATABASE_URL, schema })).close();
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    await client.query(`SET search_path TO ${schema}`);
    for (let from = 0; from < ROWS; from += 1000) {
      const values = [];
      const tuples = [];
      for (let i = from; i < Math.min(ROWS, from + 1000); i++) {
        const row = record(i);
        tuples.push(`(${row.map((_, k) => `$${values.length + k + 1}`).join(', ')})`);
        values.push(...row);
      }
      await client.query(`INSERT INTO executions (${EXECUTION_INSERT_COLUMNS}) VALUES ${tuples.join(', ')}`, values);
    }
    await client.query('ANALYZE executions');
    await measure(`postgres, ${ROWS} rows`, await openPostgresStore({ url: process.env.DATABASE_URL, schema }));
  } finally {
    await client.query(`DROP SCHEMA ${schema} CASCADE`);
    await client.end();
  }
}
