/**
 * Evidence export: seeds EXPORT_ROWS (1,000,000) executions straight into the store's tables (one transaction of
 * prepared inserts on SQLite; one INSERT ... SELECT generate_series on PostgreSQL when DATABASE_URL is set), then
 * exports them all through the real server (bench/server.mjs), following `Link: rel="next"` from part to part, and
 * samples the server's RSS from /proc every 100 ms and /health/live's latency every 250 ms (the event loop stays free). Prints the RSS growth over the idle server and rows/s, for a fast
 * reader (NDJSON, then CSV) and a slow one (EXPORT_SLOW_SECONDS of one part read in small sips: backpressure must
 * hold the server's memory flat rather than queue the part in it).
 *
 * Then the cost a project's export puts on the others: on a fresh server, EXPORT_TENANT_OTHER_ROWS (200,000) executions
 * of another project and EXPORT_TENANT_ROWS (1,000) of ours over the same period; a project token exports ours
 * EXPORT_TENANT_REQUESTS (20) times, printing the time per request (it should not grow with the other project's rows).
 *
 * Fails (exit 1) when the RSS grows by more than EXPORT_RSS_GROWTH_MB (64) or the rows exported differ from those
 * seeded. Environment: EXPORT_RUNS (rows,tenant: which of the two), EXPORT_ROWS, EXPORT_RSS_GROWTH_MB, EXPORT_SLOW_SECONDS (10; 0 skips it),
 * EXPORT_TENANT_OTHER_ROWS, EXPORT_TENANT_ROWS, EXPORT_TENANT_REQUESTS, DATABASE_URL, BENCH_STORES.
 */
import fs from 'node:fs';
import http from 'node:http';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { ADDRESS } from './fixtures.mjs';
import { AUTH, cleanup, envNumber, fmt, sleep, startServer, table, targets, withPg } from './lib.mjs';

const ROWS = envNumber('EXPORT_ROWS', 1_000_000);
const GROWTH_MB = envNumber('EXPORT_RSS_GROWTH_MB', 64);
const SLOW_SECONDS = envNumber('EXPORT_SLOW_SECONDS', 10);
const TENANT_OTHER_ROWS = envNumber('EXPORT_TENANT_OTHER_ROWS', 200_000);
const TENANT_ROWS = envNumber('EXPORT_TENANT_ROWS', 1_000);
const TENANT_REQUESTS = envNumber('EXPORT_TENANT_REQUESTS', 20);
const PROJECT_TOKEN = 'bench-project-token-0123456789';
const RUNS = (process.env.EXPORT_RUNS ?? 'rows,tenant').split(',').map((run) => run.trim());
const MB = 1024 * 1024;
// Recent, so that the retention purge leaves them.
const FROM = new Date(Date.now() - 2 * 24 * 3600 * 1000).toISOString();
const TO = new Date(Date.now() + 24 * 3600 * 1000).toISOString();

const rule = (id, status, reasons) => ({
  objectType: 'ChallengeQuery', objectId: id, name: 'Bench export', address: ADDRESS, scenarioId: 'bench-export', executionId: 'x',
  result: {
    result: { is_valid: status === 'valid', reasons }, executionId: 'x', status,
    query: { type: 'IDInformation', requestId: 1, attribute: 'personalData.age', value: 18, operator: '$gte' },
  },
});
const RESULTS = JSON.stringify([rule('q-kyc', 'valid', []), rule('q-age', 'not-valid', ['no credential of type IDInformation meets personalData.age $gte 18'])]);
const CREDENTIALS = JSON.stringify([1, 2, 3].map((k) => ({ id: `urn:uuid:${randomUUID()}`, sha256: String(k).repeat(64) })));
const DIGEST = 'd'.repeat(64);
/** `step` ms apart over 17 records, 17 to an instant at step 1: ties are common, as under load. */
const createdAt = (i, step = 1) => new Date(Date.parse(FROM) + Math.floor((i * step) / 17)).toISOString();

async function seed(server, { rows = ROWS, project = 'bench', step = 1 } = {}) {
  const started = performance.now();
  if (server.schema) {
    await withPg(server.target.url, (c) => c.query(
      `INSERT INTO ${server.schema}.executions (execution_id, scenario_id, scenario_revision, project_id, address, state, results, credentials,
         created_at, updated_at, scenario_digest, holder_bound)
       SELECT gen_random_uuid(), 'bench-export', 1, $7, $1, 'completed', $2::jsonb, $3::jsonb, t, t, $4, 1
       FROM (SELECT $5::timestamptz + ((i * $8::int) / 17) * interval '1 millisecond' AS t FROM generate_series(0, $6::int - 1) i) s`,
      [ADDRESS, RESULTS, CREDENTIALS, DIGEST, FROM, rows, project, step],
    ));
  } else {
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(server.sqliteFile);
    db.pragma('busy_timeout = 10000');
    const insert = db.prepare(`INSERT INTO executions (execution_id, scenario_id, scenario_revision, project_id, address, state, results, credentials,
      created_at, updated_at, scenario_digest, holder_bound) VALUES (?, 'bench-export', 1, ?, ?, 'completed', ?, ?, ?, ?, ?, 1)`);
    db.transaction(() => {
      for (let i = 0; i < rows; i++) insert.run(randomUUID(), project, ADDRESS, RESULTS, CREDENTIALS, createdAt(i, step), createdAt(i, step), DIGEST);
    }).immediate();
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
  }
  return (performance.now() - started) / 1000;
}

function rssBytes(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** One part: its records counted by line ends, never kept; `sip` > 0 pauses that many ms after each chunk. */
function readPart(server, url, sip, stopAt, authorization = AUTH.authorization) {
  return new Promise((resolve, reject) => {
    const req = http.get(server.base + url, { headers: { authorization } }, (res) => {
      if (res.statusCode !== 200) {
        res.setEncoding('utf8');
        let body = '';
        res.on('data', (text) => (body += text));
        res.on('end', () => reject(new Error(`${url}: ${res.statusCode} ${body}`)));
        return;
      }
      let lines = 0;
      let bytes = 0;
      res.on('data', (chunk) => {
        bytes += chunk.length;
        for (let k = chunk.indexOf(10); k !== -1; k = chunk.indexOf(10, k + 1)) lines++;
        if (stopAt && performance.now() > stopAt) {
          req.destroy();
          resolve({ lines, bytes, next: undefined });
        } else if (sip > 0) {
          res.pause();
          setTimeout(() => res.resume(), sip);
        }
      });
      res.on('end', () => resolve({ lines, bytes, next: /^<([^>]+)>; rel="next"$/.exec(String(res.headers.link ?? ''))?.[1] }));
      res.on('error', reject);
    });
    req.on('error', (err) => (stopAt ? resolve({ lines: 0, bytes: 0 }) : reject(err)));
  });
}

async function exportAll(server, format, { sip = 0, seconds = 0 } = {}) {
  const idle = rssBytes(server.pid);
  let peak = idle;
  let liveMs = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssBytes(server.pid));
  }, 100);
  // From another process, so that this one's reading does not delay the probes.
  const prober = spawn(process.execPath, ['-e', PROBE, `${server.base}/health/live`], { stdio: ['ignore', 'pipe', 'inherit'] });
  prober.stdout.on('data', (d) => {
    for (const line of String(d).split('\n').filter(Boolean)) liveMs = Math.max(liveMs, Number(line));
  });
  const started = performance.now();
  const stopAt = seconds > 0 ? started + seconds * 1000 : undefined;
  let url = `/compliance/executions/export?from=${FROM}&to=${TO}&format=${format}`;
  let rows = 0;
  let bytes = 0;
  let parts = 0;
  try {
    while (url) {
      const part = await readPart(server, url, sip, stopAt);
      // The CSV header, or the NDJSON end line.
      rows += part.lines - 1;
      bytes += part.bytes;
      parts++;
      url = part.next;
    }
  } finally {
    clearInterval(sampler);
  }
  const elapsed = (performance.now() - started) / 1000;
  await new Promise((resolve) => {
    prober.once('exit', resolve);
    prober.kill();
  });
  return { format: sip > 0 ? `${format}, slow reader` : format, rows, parts, mb: bytes / MB, elapsed, idle, growth: peak - idle, liveMs };
}

const PROBE = `const url = process.argv[1];
setInterval(async () => {
  const sent = performance.now();
  await fetch(url).then((res) => res.arrayBuffer());
  console.log(performance.now() - sent);
}, 250);`;

/** Ours interleaved with the other project's rows over the whole period; each request the whole of ours, timed. */
async function tenantRun(target) {
  const server = await startServer(target, { env: { MAX_EVENT_LOOP_DELAY_MS: '0', API_TOKENS: `${AUTH.authorization.slice(7)},${PROJECT_TOKEN}:ours` } });
  try {
    const seconds = (await seed(server, { rows: TENANT_OTHER_ROWS, project: 'other' })) +
      (await seed(server, { rows: TENANT_ROWS, project: 'ours', step: Math.max(1, Math.floor(TENANT_OTHER_ROWS / TENANT_ROWS)) }));
    console.log(`${target.kind}: seeded ${fmt(TENANT_OTHER_ROWS)} executions of another project and ${fmt(TENANT_ROWS)} of ours in ${fmt(seconds, 1)} s`);
    await sleep(500);
    const url = `/compliance/executions/export?from=${FROM}&to=${TO}`;
    const times = [];
    let rows = 0;
    for (let k = 0; k < TENANT_REQUESTS; k++) {
      const sent = performance.now();
      rows = (await readPart(server, url, 0, undefined, `Bearer ${PROJECT_TOKEN}`)).lines - 1;
      times.push(performance.now() - sent);
    }
    times.sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)];
    console.log(table(['store', 'other rows', 'our rows', 'rows read', 'ms/request median', 'ms/request max'], [
      [target.kind, fmt(TENANT_OTHER_ROWS), fmt(TENANT_ROWS), fmt(rows), fmt(median, 1), fmt(times.at(-1), 1)],
    ]));
    return rows === TENANT_ROWS;
  } finally {
    await server.stop();
    await cleanup(server);
  }
}

let failed = false;
for (const target of targets()) {
  if (RUNS.includes('tenant') && !(await tenantRun(target))) {
    console.error(`FAIL ${target.kind} project export: not ${TENANT_ROWS} rows`);
    failed = true;
  }
  if (!RUNS.includes('rows')) continue;
  // Load shedding off: the seeding's lock waits would shed the first part; /health/live latency shows the loop instead.
  const server = await startServer(target, { env: { MAX_EVENT_LOOP_DELAY_MS: '0' } });
  try {
    const seconds = await seed(server);
    console.log(`${target.kind}: seeded ${fmt(ROWS)} executions in ${fmt(seconds, 1)} s`);
    await sleep(1000);
    const runs = [await exportAll(server, 'ndjson'), await exportAll(server, 'csv')];
    if (SLOW_SECONDS > 0) runs.push(await exportAll(server, 'ndjson', { sip: 20, seconds: SLOW_SECONDS }));
    console.log(table(['store', 'format', 'rows', 'parts', 'MB', 's', 'rows/s', 'RSS idle MB', 'RSS growth MB', 'live max ms'], runs.map((r) => [
      target.kind, r.format, fmt(r.rows), fmt(r.parts), fmt(r.mb, 1), fmt(r.elapsed, 1), fmt(r.rows / r.elapsed), fmt(r.idle / MB, 1), fmt(r.growth / MB, 1), fmt(r.liveMs),
    ])));
    for (const r of runs) {
      if (r.growth > GROWTH_MB * MB) {
        console.error(`FAIL ${target.kind} ${r.format}: RSS grew ${fmt(r.growth / MB, 1)} MB (goal < ${GROWTH_MB})`);
        failed = true;
      }
      if (!r.format.includes('slow') && r.rows !== ROWS) {
        console.error(`FAIL ${target.kind} ${r.format}: ${r.rows} rows exported, ${ROWS} seeded`);
        failed = true;
      }
    }
  } finally {
    await server.stop();
    await cleanup(server);
  }
}
process.exit(failed ? 1 : 0);
