/**
 * What one audit row costs the SQLite writer (issue 41): AUDIT_ROWS (30,000) executions inserted into a fresh file with
 * the service's own schema, statement and pragmas, in transactions of AUDIT_BATCH (32) rows as the group commit sends
 * them, after AUDIT_WARMUP (5,000) rows; the CPU of this thread per row (checkpoints included: SQLite's own, every 1,000
 * pages, where the service runs a checkpointer thread). Each variant changes one thing, and is given as a ratio of the
 * service's configuration measured in the same round. AUDIT_ROUNDS (3) rounds, the variants in turn; the median shown.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { migrate } from '../dist/store/sqlite/migrations.js';
import { EXECUTION_INSERT } from '../dist/store/sqlite/database.js';
import { executionValues } from '../dist/store/rows.js';
import { timeOrderedId } from '../dist/domain/ids.js';
import { describeRun, envNumber, fmt, median, table } from './lib.mjs';

const ROWS = envNumber('AUDIT_ROWS', 30_000);
const BATCH = envNumber('AUDIT_BATCH', 32);
const WARMUP = envNumber('AUDIT_WARMUP', 5_000);
const ROUNDS = envNumber('AUDIT_ROUNDS', 3);

const MIGRATION_22 = ['executions_scenario_verdict', 'executions_scenario_address', 'executions_scenario_period', 'executions_verdict_missing'];
const NO_22 = ['DROP TRIGGER executions_verdict_insert', 'DROP TRIGGER executions_verdict_update', ...MIGRATION_22.map((i) => `DROP INDEX ${i}`)];
/** name: [what differs, SQL run after the migrations, random (version 4) execution ids, temp_store]. */
const VARIANTS = {
  service: ['as the service writes (version 7 ids, statement journals in memory)', [], false, 'MEMORY'],
  v4: ['random (version 4) execution ids', [], true, 'MEMORY'],
  tempFile: ['statement journals in a temporary file (SQLite\'s default)', [], false, 'DEFAULT'],
  before: ['both of those: the writer before this change', [], true, 'DEFAULT'],
  noInsertTrigger: ['without the verdict insert trigger', ['DROP TRIGGER executions_verdict_insert'], false, 'MEMORY'],
  noAddress: ['without the (scenario, address, seq) index', ['DROP INDEX executions_scenario_address'], false, 'MEMORY'],
  noVerdict: ['without the (scenario, verdict, seq) index', ['DROP INDEX executions_scenario_verdict'], false, 'MEMORY'],
  noPeriod: ['without the (scenario, created_at, verdict, project) index', ['DROP INDEX executions_scenario_period'], false, 'MEMORY'],
  no22: ['without migration 22\'s indexes and triggers (7548d21\'s schema)', NO_22, false, 'MEMORY'],
  then: ['7548d21\'s writer: its schema, version 4 ids', NO_22, true, 'DEFAULT'],
};

const START = Date.parse('2026-01-01T00:00:00Z');
const scenarios = Array.from({ length: 4 }, (_, i) => `scenario-${i}`);
const result = (id, status) => ({
  objectType: 'ChallengeQuery', objectId: id, name: 'n', address: 'a', scenarioId: 's', executionId: 'x',
  result: { result: { is_valid: status === 'valid', reasons: [] }, executionId: 'x', status, query: { type: 'T', operator: '$noop' } },
});
/** Addresses at random, as wallets come; one in seven failed. */
const record = (i, v4) => {
  const at = new Date(START + i).toISOString();
  return executionValues({
    executionId: v4 ? randomUUID() : timeOrderedId(), scenarioId: scenarios[i % 4], scenarioRevision: 1, projectId: null,
    address: `0x${randomBytes(20).toString('hex')}`, state: 'completed',
    results: [result('age', 'valid'), result('kyc', i % 7 === 0 ? 'not-valid' : 'valid')],
    credentials: [{ id: 'c', sha256: 'a'.repeat(64) }], createdAt: at, updatedAt: at, scenarioDigest: 'a'.repeat(64), holderBound: true,
  });
};

function run(dir, name) {
  const [, sql, v4, tempStore] = VARIANTS[name];
  const file = path.join(dir, `${name}.db`);
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('cache_size = -512');
    if (tempStore !== 'DEFAULT') db.pragma(`temp_store = ${tempStore}`);
    migrate(db);
    for (const statement of sql) db.exec(statement);
    const insert = db.prepare(EXECUTION_INSERT);
    const write = db.transaction((rows) => {
      for (const row of rows) insert.run(row);
    });
    const rows = Array.from({ length: ROWS }, (_, i) => record(i, v4));
    const warm = Math.ceil(WARMUP / BATCH) * BATCH;
    for (let i = 0; i < warm; i += BATCH) write(rows.slice(i, i + BATCH));
    const before = process.cpuUsage();
    for (let i = warm; i < ROWS; i += BATCH) write(rows.slice(i, i + BATCH));
    const used = process.cpuUsage(before);
    return (used.user + used.system) / (ROWS - warm);
  } finally {
    db.close();
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
  }
}

console.log(describeRun());
console.log(`AUDIT_ROWS=${ROWS} AUDIT_BATCH=${BATCH} AUDIT_WARMUP=${WARMUP} AUDIT_ROUNDS=${ROUNDS}`);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scs-audit-insert-'));
const names = Object.keys(VARIANTS);
const cost = Object.fromEntries(names.map((n) => [n, []]));
const ratio = Object.fromEntries(names.map((n) => [n, []]));
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of names) cost[name].push(run(dir, name));
    for (const name of names) ratio[name].push(cost[name][round] / cost.service[round]);
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
console.log(table(
  ['variant', 'CPU us per row (median)', 'range', 'x the service\'s (median of rounds)'],
  names.map((n) => [VARIANTS[n][0], fmt(median(cost[n]), 1), `${fmt(Math.min(...cost[n]), 1)}-${fmt(Math.max(...cost[n]), 1)}`, fmt(median(ratio[n]), 2)]),
));
console.log(`load average at the end: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
