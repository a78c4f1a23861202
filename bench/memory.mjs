/**
 * Memory under load: the real server (bench/server.mjs, with --expose-gc) on SQLite in a temp DATA_DIR (and on
 * PostgreSQL in a fresh schema when DATABASE_URL is set), three consecutive runs of execute load (100 connections,
 * the execute body of the HTTP bench: 5 rules, 3 demo-issuer credentials verified strictly, or BENCH_VERIFICATION=off)
 * against the same process. The server's RSS is sampled
 * from /proc every 500 ms; after each run the server collects garbage and reports its heap.
 *
 * Fails (exit 1) when the RSS goes over 200 MB in any sample of any run, or grows across the runs: RSS after GC at the
 * end of the last run more than MEM_GROWTH_MB (10) above the first's, or heap used after GC more than
 * MEM_HEAP_GROWTH_MB (5) above it. (The peak of each run follows its throughput, which other processes on a shared
 * machine change from run to run, so growth is judged after a full GC.)
 *
 * Environment: MEM_SECONDS (60 per run), MEM_RUNS (3), MEM_WARMUP_SECONDS (5), MEM_LIMIT_MB (200), MEM_GROWTH_MB (10),
 * MEM_HEAP_GROWTH_MB (5), BENCH_CONNECTIONS (100), DATABASE_URL, BENCH_STORES (sqlite or postgres only).
 */
import fs from 'node:fs';
import { ADDRESS, httpScenario } from './fixtures.mjs';
import { AUTH, benchCredentials, cleanup, countExecutions, createScenario, describeRun, envNumber, fmt, load, request, sleep, startServer, table, targets } from './lib.mjs';

// The memory goal is one server process's RSS, and /bench/gc reaches one process: a cluster is measured per worker
// by running one.
if (process.env.WORKERS && process.env.WORKERS.trim() !== '1') {
  console.error('bench/memory.mjs measures one server process: unset WORKERS (each worker of a cluster is such a process)');
  process.exit(2);
}

const SECONDS = envNumber('MEM_SECONDS', 60);
const RUNS = envNumber('MEM_RUNS', 3);
const WARMUP = envNumber('MEM_WARMUP_SECONDS', 5);
const LIMIT_MB = envNumber('MEM_LIMIT_MB', 200);
const GROWTH_MB = envNumber('MEM_GROWTH_MB', 10);
const HEAP_GROWTH_MB = envNumber('MEM_HEAP_GROWTH_MB', 5);
const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 100);
const MB = 1024 * 1024;
const ID = 'bench-memory';

function rssBytes(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) * 1024 : NaN;
}

function dbBytes(server) {
  if (server.schema) return NaN;
  let total = 0;
  for (const suffix of ['', '-wal', '-shm']) {
    try {
      total += fs.statSync(server.sqliteFile + suffix).size;
    } catch {
      // not there
    }
  }
  return total;
}

const creds = await benchCredentials();

async function runTarget(target) {
  const server = await startServer(target, { nodeArgs: ['--expose-gc'], env: creds.env });
  const checks = [];
  const rows = [];
  const runs = [];
  let acked = 0;
  let sent = 0;
  let completed = false;
  try {
    await createScenario(server, ID, httpScenario('Bench memory'));
    const body = JSON.stringify({ address: ADDRESS, scenarioId: ID, credentials: creds.credentials });
    const first = await request(server, 'POST', '/compliance/scenarios/execute', body);
    if (first.status !== 200 || first.body.some((r) => r.result.status !== 'valid')) throw new Error(`pre-flight execute: ${first.status} ${JSON.stringify(first.body).slice(0, 1000)}`);
    acked += 1;
    sent += 1;
    const opts = { method: 'POST', url: `${server.base}/compliance/scenarios/execute`, headers: AUTH, body, connections: CONNECTIONS, serverPid: server.pid };
    const start = await request(server, 'POST', '/bench/gc', {});
    console.log(`  after start and GC: RSS ${fmt(start.body.rss / MB, 1)} MB, heap used ${fmt(start.body.heapUsed / MB, 1)} MB`);
    const w = await load({ ...opts, duration: WARMUP });
    acked += w.ok;
    sent += w.sent;

    for (let run = 1; run <= RUNS; run++) {
      const samples = [];
      const timer = setInterval(() => samples.push(rssBytes(server.pid)), 500);
      const m = await load({ ...opts, duration: SECONDS });
      clearInterval(timer);
      acked += m.ok;
      sent += m.sent;
      await sleep(1000);
      const gc = await request(server, 'POST', '/bench/gc', {});
      const peak = Math.max(...samples);
      const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
      const r = { run, rps: m.rps, ok: m.ok, non2xx: m.non2xx, errors: m.errors, peak, mean, afterGc: gc.body, db: dbBytes(server) };
      runs.push(r);
      rows.push([run, fmt(m.rps), m.ok, m.non2xx + m.errors, fmt(peak / MB, 1), fmt(mean / MB, 1), fmt(gc.body.rss / MB, 1), fmt(gc.body.heapUsed / MB, 1), fmt(gc.body.external / MB, 1), Number.isNaN(r.db) ? '-' : fmt(r.db / MB, 0)]);
      console.log(`  run ${run}: ${fmt(m.rps)} req/s, RSS peak ${fmt(peak / MB, 1)} MB, mean ${fmt(mean / MB, 1)} MB; after GC: RSS ${fmt(gc.body.rss / MB, 1)} MB, heap used ${fmt(gc.body.heapUsed / MB, 1)} MB (other processes used ${fmt(m.otherCores, 2)} cores)`);
    }
    completed = true;
  } finally {
    await server.stop();
    if (!completed) await cleanup(server).catch(() => {});
  }
  const recorded = await countExecutions(server, ID);
  await cleanup(server);

  console.log(`\n### ${target.kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'}: ${RUNS} runs of ${SECONDS} s execute load at ${CONNECTIONS} connections, same server process\n`);
  console.log(table(['run', 'req/s', '2xx', 'errors', 'peak RSS MB', 'mean RSS MB', 'RSS after GC MB', 'heap used after GC MB', 'external after GC MB', 'database MB'], rows));
  const worst = Math.max(...runs.map((r) => r.peak));
  checks.push({ name: `RSS <= ${LIMIT_MB} MB in every run`, pass: worst <= LIMIT_MB * MB, detail: `highest sample ${fmt(worst / MB, 1)} MB` });
  const a = runs[0];
  const z = runs[runs.length - 1];
  // Growth is judged after a full GC: the peak follows the throughput of each run (more requests in flight, a larger
  // young generation), which other processes on a shared machine change from run to run.
  checks.push({
    name: `RSS after GC does not grow across runs (last - first <= ${GROWTH_MB} MB)`,
    pass: z.afterGc.rss - a.afterGc.rss <= GROWTH_MB * MB,
    detail: `${runs.map((r) => `${fmt(r.afterGc.rss / MB, 1)}`).join(' -> ')} MB (peaks ${runs.map((r) => `${fmt(r.peak / MB, 1)}`).join(' -> ')} MB)`,
  });
  checks.push({
    name: `heap used after GC does not grow across runs (last - first <= ${HEAP_GROWTH_MB} MB)`,
    pass: z.afterGc.heapUsed - a.afterGc.heapUsed <= HEAP_GROWTH_MB * MB,
    detail: runs.map((r) => `${fmt(r.afterGc.heapUsed / MB, 1)}`).join(' -> ') + ' MB',
  });
  checks.push({ name: 'no failed request', pass: runs.every((r) => r.non2xx === 0 && r.errors === 0), detail: runs.map((r) => `${r.non2xx}+${r.errors}`).join(', ') });
  checks.push({ name: 'every acknowledged execute is in the audit log', pass: recorded >= acked && recorded <= sent, detail: `${recorded} rows, ${acked} 200s, ${sent} sent` });
  console.log('');
  for (const c of checks) console.log(`  ${c.pass ? 'PASS' : 'FAIL'}  ${c.name}: ${c.detail}`);
  return { target: target.kind, runs, checks };
}

console.log(describeRun());
console.log(`MEM_SECONDS=${SECONDS} MEM_RUNS=${RUNS} MEM_WARMUP_SECONDS=${WARMUP} BENCH_CONNECTIONS=${CONNECTIONS}; credential verification ${creds.mode}`);
let failed = false;
for (const target of targets()) {
  console.log(`\n== ${target.kind} ==`);
  try {
    const r = await runTarget(target);
    if (r.checks.some((c) => !c.pass)) failed = true;
  } catch (err) {
    failed = true;
    console.error(`FAIL  ${target.kind}: ${err.stack ?? err}`);
  }
}
if (failed) {
  console.log('\nMemory goals missed (see FAIL above).');
  process.exit(1);
}
console.log('\nAll memory goals met.');
