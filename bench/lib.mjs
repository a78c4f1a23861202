/** Helpers shared by the HTTP and memory benchmarks: the server child process, the stores, autocannon. */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { Webhook } from 'standardwebhooks';
import { demoIdCredentials, syntheticIdCredentials, TOKEN } from './fixtures.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, '..');

/**
 * The credentials of the HTTP and memory benchmarks and the server settings that go with them.
 * BENCH_VERIFICATION=strict (default): credential trust verification as in production, on three IDInformation
 * credentials of the demo issuer (DEMO_ISSUER=1 makes the server trust it and answer its revocation statuses in
 * process). BENCH_VERIFICATION=off: CREDENTIAL_VERIFICATION=off and made-up proofs.
 */
export async function benchCredentials() {
  const mode = (process.env.BENCH_VERIFICATION ?? 'strict').trim().toLowerCase();
  if (mode === 'off') return { mode, credentials: syntheticIdCredentials(), env: { CREDENTIAL_VERIFICATION: 'off' } };
  if (mode !== 'strict') throw new Error('BENCH_VERIFICATION must be strict or off');
  const { issuer, credentials } = await demoIdCredentials();
  return { mode, issuer, credentials, env: { CREDENTIAL_VERIFICATION: 'strict', DEMO_ISSUER: '1' } };
}

export const AUTH = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

export function envNumber(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number (got ${raw})`);
  return n;
}

/** The stores to run on: SQLite in a temp DATA_DIR always, PostgreSQL in a fresh schema when DATABASE_URL is set. */
export function targets() {
  const list = [{ kind: 'sqlite' }];
  const url = process.env.DATABASE_URL?.trim();
  if (url && /^postgres(ql)?:\/\//i.test(url)) list.push({ kind: 'postgres', url });
  else if (url) console.warn(`DATABASE_URL=${url} is not postgres://: running on SQLite only`);
  // BENCH_STORES=postgres (or sqlite) runs on one of them only.
  const only = process.env.BENCH_STORES?.split(',').map((s) => s.trim()).filter(Boolean);
  return only ? list.filter((t) => only.includes(t.kind)) : list;
}

/**
 * The node options and the environment the service runs with (`npm start`, the Dockerfile): the bench server runs with
 * them too (an environment variable already set wins).
 */
export const SERVICE_NODE_ARGS = ['--max-semi-space-size=16'];
export const SERVICE_ENV = { MALLOC_ARENA_MAX: '2' };

/**
 * Starts bench/server.mjs on a store of its own. Answers {port, pid, child, target, stop()}. Node runs with
 * SERVICE_NODE_ARGS, then `nodeArgs` (e.g. --cpu-prof), then BENCH_SERVER_NODE_ARGS (a later flag wins). With
 * `inproc`, the server preloads bench/inproc.mjs and the answer has inproc.start() / inproc.stop() (its figures).
 */
export async function startServer(target, { nodeArgs = [], env = {}, inproc = false } = {}) {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'scs-bench-'));
  const serverEnv = {
    ...SERVICE_ENV,
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    API_TOKENS: TOKEN,
    LOG_LEVEL: 'warn',
    DATA_DIR: scratch,
    // The per-token rate limit stays on (its cost is part of every request) but must not answer the bench 429.
    RATE_LIMIT_MAX: '100000000',
    ...env,
  };
  delete serverEnv.DATABASE_URL;
  delete serverEnv.DATABASE_SCHEMA;
  let schema;
  if (target.kind === 'postgres') {
    schema = `bench_${process.pid}_${Date.now().toString(36)}`;
    serverEnv.DATABASE_URL = target.url;
    serverEnv.DATABASE_SCHEMA = schema;
  }
  const extra = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const preload = inproc ? ['--import', pathToFileURL(path.join(here, 'inproc.mjs')).href] : [];
  const child = spawn(process.execPath, [...SERVICE_NODE_ARGS, ...preload, ...nodeArgs, ...extra, path.join(here, 'server.mjs')], {
    cwd: root,
    env: serverEnv,
    stdio: ['ignore', 'pipe', 'pipe', ...(inproc ? ['ipc'] : [])],
  });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
    if (stderr.length > 20_000) stderr = stderr.slice(-10_000);
    process.stderr.write(`[server] ${d}`);
  });
  const ready = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`server did not start within 30 s\n${stderr}`)), 30_000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /BENCH_READY (\{.*\})/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(JSON.parse(m[1]));
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code ?? signal}) before it was ready\n${stderr}`));
    });
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return {
    ...ready,
    child,
    target,
    schema,
    dataDir: scratch,
    sqliteFile: path.join(scratch, 'scenarios.db'),
    base: `http://127.0.0.1:${ready.port}`,
    inproc: inproc ? inprocControl(child) : undefined,
    /** SIGTERM, wait for a graceful exit (so that in-flight requests finish and profiles are written). */
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      const r = await exited;
      clearTimeout(timer);
      return r;
    },
  };
}

/** start() and stop() of bench/inproc.mjs in a server child, over its IPC channel; stop() answers the figures. */
function inprocControl(child) {
  const ask = (cmd, reply) => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`inproc ${cmd}: no answer from the server within 30 s`)), 30_000);
    const on = (m) => {
      if (m?.inproc !== reply) return;
      clearTimeout(timer);
      child.off('message', on);
      resolve(m);
    };
    child.on('message', on);
    child.send({ inproc: cmd });
  });
  return { start: () => ask('start', 'started'), stop: () => ask('stop', 'stats'), memory: () => ask('memory', 'memory') };
}

/** Removes what a server left behind: its temp DATA_DIR, and its PostgreSQL schema. */
export async function cleanup(server) {
  fs.rmSync(server.dataDir, { recursive: true, force: true });
  if (server.schema) {
    await withPg(server.target.url, (c) => c.query(`DROP SCHEMA IF EXISTS ${server.schema} CASCADE`));
  }
}

export async function withPg(url, fn) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Audit rows of one scenario, counted in the database itself (call after the server stopped). */
export async function countExecutions(server, scenarioId) {
  if (server.schema) {
    return withPg(server.target.url, async (c) => {
      const { rows } = await c.query(`SELECT count(*)::int AS n FROM ${server.schema}.executions WHERE scenario_id = $1`, [scenarioId]);
      return rows[0].n;
    });
  }
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(server.sqliteFile, { readonly: true });
  try {
    return db.prepare('SELECT count(*) AS n FROM executions WHERE scenario_id = ?').get(scenarioId).n;
  } finally {
    db.close();
  }
}

/** One request with fetch. A 503 (load shedding while the server warms up on a busy machine) is retried. */
export async function request(server, method, url, body, headers = {}) {
  let res;
  for (let attempt = 1; ; attempt++) {
    res = await fetch(server.base + url, {
      method,
      headers: { ...AUTH, ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    if (res.status !== 503 || attempt >= 20) break;
    await res.arrayBuffer();
    await sleep(1000);
  }
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = text;
  }
  return { status: res.status, headers: res.headers, body: json };
}

export async function createScenario(server, id, input) {
  const r = await request(server, 'POST', '/compliance/scenarios', { id, input });
  if (r.status !== 201) throw new Error(`creating scenario ${id}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

const TICK_US = 1e6 / 100; // USER_HZ: /proc times are in 1/100 s on Linux

/** CPU time (utime + stime, all threads) of a process from /proc/<pid>/stat, in microseconds; NaN off Linux. */
export function processCpuUs(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_US;
  } catch {
    return NaN;
  }
}

/**
 * CPU time of a process and all its descendants (with WORKERS, the cluster's primary and its workers), in
 * microseconds; NaN off Linux. A descendant that exited meanwhile takes its CPU time with it.
 */
export function processTreeCpuUs(pid) {
  const children = new Map(); // ppid -> pids
  try {
    for (const p of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(p)) continue;
      try {
        const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
        const ppid = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
        (children.get(ppid) ?? children.set(ppid, []).get(ppid)).push(p);
      } catch {
        // gone meanwhile
      }
    }
  } catch {
    return NaN;
  }
  let total = 0;
  const todo = [String(pid)];
  while (todo.length > 0) {
    const p = todo.pop();
    const t = processCpuUs(p);
    if (!Number.isNaN(t)) total += t;
    todo.push(...(children.get(p) ?? []));
  }
  return total;
}

/** Busy CPU time of the whole machine (all cores) from /proc/stat, in microseconds; NaN off Linux. */
export function machineBusyUs() {
  try {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, , , irq, softirq, steal] = line; // idle and iowait are not busy
    return (user + nice + system + irq + softirq + (steal ?? 0)) * TICK_US;
  } catch {
    return NaN;
  }
}

/** CPU time of every PostgreSQL server process on this machine (the database's share of the work), in microseconds. */
export function postgresCpuUs() {
  let total = 0;
  try {
    for (const pid of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        if (fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
      } catch {
        continue;
      }
      const t = processCpuUs(pid);
      if (!Number.isNaN(t)) total += t;
    }
  } catch {
    return NaN;
  }
  return total;
}

/** Snapshot for cpuSince: the server's, this process's, PostgreSQL's and the whole machine's CPU time. */
export function cpuSnapshot(serverPid) {
  return { at: process.hrtime.bigint(), server: processTreeCpuUs(serverPid), self: processCpuUs(process.pid), pg: postgresCpuUs(), busy: machineBusyUs() };
}

/** Cores used since the snapshot by the server, by this process (the load generator) and by everything else. */
export function cpuSince(snap, serverPid) {
  const now = cpuSnapshot(serverPid);
  const wallUs = Number(now.at - snap.at) / 1000;
  const server = now.server - snap.server;
  const self = now.self - snap.self;
  const busy = now.busy - snap.busy;
  // A PostgreSQL process that ended meanwhile takes its CPU time with it: never below zero.
  const pg = Math.max(0, now.pg - snap.pg);
  return {
    serverUs: server,
    serverCores: server / wallUs,
    loadgenCores: self / wallUs,
    postgresCores: pg / wallUs,
    postgresUs: pg,
    otherCores: Math.max(0, busy - server - self - pg) / wallUs,
  };
}

/**
 * One autocannon run; answers the figures the benchmarks print. With `serverPid`, also the server's CPU time per
 * completed request (a cost figure that other processes on the machine disturb much less than req/s), PostgreSQL's
 * (all its processes on this machine), and how many cores the server, the load generator, PostgreSQL and everything
 * else used meanwhile.
 */
export async function load({ serverPid, ...opts }) {
  const snap = serverPid ? cpuSnapshot(serverPid) : undefined;
  const result = await autocannon({ pipelining: 1, timeout: 10, ...opts });
  const cpu = snap ? cpuSince(snap, serverPid) : undefined;
  const codes = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([k, v]) => [k, v.count]));
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    sent: result.requests.sent,
    completed: result.requests.total,
    duration: result.duration,
    codes,
    cpuUsPerReq: cpu ? cpu.serverUs / Math.max(1, result.requests.total) : NaN,
    postgresUsPerReq: cpu ? cpu.postgresUs / Math.max(1, result.requests.total) : NaN,
    postgresCores: cpu?.postgresCores ?? NaN,
    serverCores: cpu?.serverCores ?? NaN,
    loadgenCores: cpu?.loadgenCores ?? NaN,
    otherCores: cpu?.otherCores ?? NaN,
  };
}

/**
 * An open loop: `rate` requests a second for `seconds`, request i sent at start + i / rate whatever the answers take
 * (node:http over up to `maxSockets` keep-alive connections; a request finding every connection busy waits for one, and
 * that wait counts). Latency is measured from the time a request was due, not from when it could be sent, so a server
 * that falls behind shows it (no coordinated omission). Answers {rps, p50, p99, max, ok, non2xx, errors, codes, sent,
 * completed, lateMs (how far behind schedule the sender ever was), server CPU like load()}.
 */
export async function openLoop({ url, method = 'GET', headers = {}, body, rate, seconds, maxSockets = 100, serverPid, timeoutMs = 10_000 }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const u = new URL(url);
  const payload = body === undefined ? undefined : Buffer.from(body);
  const hdrs = { ...headers, ...(payload ? { 'content-length': String(payload.length) } : {}) };
  const total = Math.max(1, Math.round(rate * seconds));
  const latencies = [];
  const serviceTimes = [];
  const codes = {};
  let errors = 0;
  let lateMs = 0;
  const one = (due) => new Promise((resolve) => {
    const sent = performance.now();
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers: hdrs, agent, timeout: timeoutMs }, (res) => {
      res.on('data', () => {});
      res.on('end', () => {
        const end = performance.now();
        latencies.push(end - due);
        serviceTimes.push(end - sent);
        codes[res.statusCode] = (codes[res.statusCode] ?? 0) + 1;
        resolve();
      });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => {
      errors++;
      resolve();
    });
    req.end(payload);
  });
  const snap = serverPid ? cpuSnapshot(serverPid) : undefined;
  const start = performance.now();
  const pending = [];
  let i = 0;
  await new Promise((done) => {
    const tick = () => {
      const now = performance.now();
      while (i < total && start + (i * 1000) / rate <= now) {
        const due = start + (i * 1000) / rate;
        lateMs = Math.max(lateMs, now - due);
        pending.push(one(due));
        i++;
      }
      if (i >= total) return done();
      setTimeout(tick, Math.max(0, start + (i * 1000) / rate - performance.now()));
    };
    tick();
  });
  await Promise.all(pending);
  const elapsed = (performance.now() - start) / 1000;
  const cpu = snap ? cpuSince(snap, serverPid) : undefined;
  agent.destroy();
  const sorted = latencies.sort((a, b) => a - b);
  const q = (x) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(x * sorted.length) - 1)]);
  const ok = Object.entries(codes).reduce((a, [k, v]) => a + (k.startsWith('2') ? v : 0), 0);
  const service = serviceTimes.sort((a, b) => a - b);
  return {
    serviceP50: service[Math.floor(service.length * 0.5)] ?? NaN,
    serviceP99: service[Math.min(service.length - 1, Math.ceil(service.length * 0.99) - 1)] ?? NaN,
    rps: sorted.length / elapsed,
    p50: q(0.5),
    p99: q(0.99),
    max: sorted.at(-1) ?? NaN,
    ok,
    non2xx: sorted.length - ok,
    errors,
    timeouts: 0,
    codes,
    sent: total,
    completed: sorted.length,
    duration: elapsed,
    lateMs,
    cpuUsPerReq: cpu ? cpu.serverUs / Math.max(1, sorted.length) : NaN,
    serverCores: cpu?.serverCores ?? NaN,
    loadgenCores: cpu?.loadgenCores ?? NaN,
    otherCores: cpu?.otherCores ?? NaN,
  };
}

export const fmt = (n, digits = 0) => (n === undefined || Number.isNaN(n) ? '-' : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));

/** A Markdown table. */
export function table(header, rows) {
  const widths = header.map((h, i) => Math.max(String(h).length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The middle value (the upper one of an even count). */
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** One line saying what was measured and where: node, CPUs, load average, the commit of the working tree. */
export function describeRun() {
  const cpus = os.cpus();
  let commit = 'unknown commit';
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    commit = `commit ${head}${dirty ? ' + uncommitted changes in src/' : ''}`;
  } catch {
    // not a git checkout
  }
  return `node ${process.version}, ${cpus.length} x ${cpus[0]?.model ?? 'cpu'}, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}, ${commit} (dist/ built from it)`;
}

/**
 * A webhook receiver on 127.0.0.1 that verifies each delivery's signature with `secret` and answers 204 at once (400
 * to a bad signature). stats: received (every verified delivery), arrived (each distinct webhook-id's first arrival,
 * performance.now()), duplicates, badSignatures, connections, first and last (of the distinct arrivals).
 */
export async function webhookReceiver(secret) {
  const verifier = new Webhook(secret);
  const stats = { received: 0, arrived: new Map(), duplicates: 0, badSignatures: 0, connections: 0, first: NaN, last: NaN };
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d) => { text += d; });
    req.on('end', () => {
      try {
        verifier.verify(text, req.headers);
        stats.received++;
        const id = req.headers['webhook-id'];
        const at = performance.now();
        if (stats.arrived.has(id)) stats.duplicates++;
        else {
          stats.arrived.set(id, at);
          if (Number.isNaN(stats.first)) stats.first = at;
          stats.last = at;
        }
        res.statusCode = 204;
      } catch {
        stats.badSignatures++;
        res.statusCode = 400;
      }
      res.end();
    });
  });
  server.on('connection', () => { stats.connections++; });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    stats, url: `http://127.0.0.1:${server.address().port}/hook`,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  };
}
