/**
 * `npm run bench`: the real server (bench/server.mjs, a child process) on SQLite in a temp DATA_DIR, and on
 * PostgreSQL in a fresh schema when DATABASE_URL is set, measured with autocannon from this process:
 *
 *   baseline    GET  /bench/baseline                     (bare route, response schema)
 *   ceiling     POST /bench/ceiling                      (auth + parse + validate the execute body, fixed answer)
 *   execute     POST /compliance/scenarios/execute       (5 rules, 3 credentials, audit record written; credential
 *               verification strict on demo-issuer credentials, or off with BENCH_VERIFICATION=off)
 *   shadow      POST /compliance/scenarios/execute on a scenario with a proposed revision in shadow (its q-age rule asks 40
 *               and over, so every execute flips): the same body as execute but for its scenarioId, on the same server,
 *               in the same rounds. Reported: its server CPU per request over execute's (goal <= 1.15: "shadow adds at
 *               most 15% to warm execute CPU"), and the shadow run's compared / skipped counts after the rounds.
 *   unrecorded  POST /compliance/scenarios/execute on a second server whose store's recordExecution does nothing
 *               (the group commit and insert of the audit record: what recording costs, beyond the digests)
 *   patch       PATCH /compliance/scenarios/{id}         (each a real change; no lost update)
 *   get         GET  /compliance/scenarios/{id}
 *   open        POST /compliance/scenarios/execute offered at half the measured maximum (the median req/s of the execute
 *               rounds) for BENCH_SECONDS, requests evenly spaced over up to BENCH_CONNECTIONS connections (openLoop in
 *               lib.mjs; latency from when each was due): the latency a request meets on a server with headroom. Goal:
 *               p99 <= 10 ms (the closed-loop p99 at 100 connections is reported). Then, reported: the baseline route
 *               at the same rate (the floor: what the HTTP stack and this machine give a request that does nothing),
 *               and execute at the same rate through autocannon's overallRate (bursty: see the phase). Both
 *               open-loop runs are also measured inside the server (bench/inproc.mjs: each request's window from
 *               its arrival to its response's end, with the GC pauses and event-loop blocks in it); goal: execute's
 *               p99 there <= 1.5 x the baseline route's. With the unrecorded phase, execute at the same rate on the
 *               no-op-audit server too (what the audit commit adds). BENCH_INPROC=0 turns that off.
 *   cold        POST /compliance/scenarios/execute where every request carries 3 credentials never sent before (fresh
 *               genuine demo-issuer credentials, bench/fixtures.mjs freshIdCredentials): the cold verification path.
 *               Runs once, after the rounds of the other routes, at BENCH_COLD_CONNECTIONS (1) for BENCH_COLD_SECONDS
 *               (10), after BENCH_COLD_WARMUP_REQUESTS (3) unmeasured ones; a plain loop of fetch per connection, each
 *               answer checked (200, 5 valid results). Reports req/s, p50/p99 and the server's CPU per credential.
 *               Goal: p50 <= 50 ms at 1 connection. The credentials are issued before the server starts (or read from
 *               their cache), enough for BENCH_COLD_MAX_RPS (40) req/s; the phase ends early if they run out (none is
 *               ever sent twice).
 *
 * Prints req/s, p50/p99 latency and the ratios, checks the goals of the performance issue and exits 1 when one is
 * missed (it says which). Every execute acknowledged during the run is checked to be in the audit log afterwards.
 *
 * The routes run in rounds (BENCH_ROUNDS, default 3: baseline, ceiling, execute, ..., then again), and the figures
 * are medians over the rounds; ratios are taken per round and then the median, so that a change of the outside load
 * on this shared machine during the run disturbs them less. Also reported per route: the server's CPU time per
 * request and how many cores other processes used meanwhile.
 *
 * Environment: BENCH_SECONDS (10), BENCH_ROUNDS (3), BENCH_WARMUP_SECONDS (3), BENCH_CONNECTIONS (100), BENCH_PATCH_CONNECTIONS (20),
 * BENCH_ONLY (comma-separated phases: baseline,ceiling,execute,shadow,unrecorded,patch,get,open,cold; open needs execute), BENCH_CPU_PROF (a directory:
 * every measured run is CPU-profiled in the server, one .cpuprofile per route and round, to be read with
 * bench/profile-summary.mjs), BENCH_JSON (a file to write the figures to), DATABASE_URL, BENCH_STORES (sqlite or
 * postgres: run on one store only). The cold phase: BENCH_COLD_SECONDS (10), BENCH_COLD_CONNECTIONS (1),
 * BENCH_COLD_WARMUP_REQUESTS (3), BENCH_COLD_MAX_RPS (40), BENCH_COLD_CREDENTIALS (default: 3 x (warm-up + seconds x
 * max rps)).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ADDRESS, freshIdCredentials, HTTP_RULES, httpScenario } from './fixtures.mjs';
import { AUTH, benchCredentials, cleanup, countExecutions, cpuSince, cpuSnapshot, createScenario, describeRun, envNumber, fmt, load, openLoop, request, sleep, startServer, table, targets } from './lib.mjs';

const SECONDS = envNumber('BENCH_SECONDS', 10);
const WARMUP = envNumber('BENCH_WARMUP_SECONDS', 3);
const ROUNDS = envNumber('BENCH_ROUNDS', 3);
const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 100);
const PATCH_CONNECTIONS = envNumber('BENCH_PATCH_CONNECTIONS', 20);
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').map((s) => s.trim())) : undefined;
const CPU_PROF = process.env.BENCH_CPU_PROF;

const COLD_SECONDS = envNumber('BENCH_COLD_SECONDS', 10);
const COLD_CONNECTIONS = Math.floor(envNumber('BENCH_COLD_CONNECTIONS', 1));
const COLD_WARMUP_REQUESTS = Math.floor(envNumber('BENCH_COLD_WARMUP_REQUESTS', 3));
const COLD_MAX_RPS = envNumber('BENCH_COLD_MAX_RPS', 40);
const COLD_PER_REQUEST = 3;
const COLD_CREDENTIALS = Math.floor(envNumber('BENCH_COLD_CREDENTIALS', COLD_PER_REQUEST * (COLD_WARMUP_REQUESTS + Math.ceil(COLD_SECONDS * COLD_MAX_RPS))));

/**
 * The counts of recordExecution's duration buckets (the store's audit insert: its wait in the group commit, the
 * writer and the commit) from the server's /metrics, by upper bound in ms; undefined when the histogram is missing.
 */
async function auditCommits(server) {
  const text = await (await fetch(`${server.base}/metrics`)).text();
  const counts = {};
  for (const line of text.split('\n')) {
    const hit = /^store_operation_duration_seconds_bucket\{(?=[^}]*operation="recordExecution")(?=[^}]*outcome="ok")[^}]*le="([^"]+)"[^}]*\} (\d+)/.exec(line);
    if (hit) counts[hit[1] === '+Inf' ? Infinity : Number(hit[1]) * 1000] = Number(hit[2]);
  }
  return Object.keys(counts).length > 0 ? counts : undefined;
}

/** The share of the commits between two scrapes that took longer than 1, 5, 10 and 25 ms. */
function commitShares(before, after) {
  if (!before || !after) return undefined;
  const n = after[Infinity] - before[Infinity];
  if (!(n > 0)) return undefined;
  const over = {};
  for (const ms of [1, 5, 10, 25]) if (after[ms] !== undefined) over[ms] = (n - (after[ms] - (before[ms] ?? 0))) / n;
  return { n, over };
}

const GOALS = {
  executeVsCeiling: 0.8,
  executeVsBaseline: 0.2,
  executeP99: 10,
  patchP99: 20,
  coldP50: 50,
  shadowCpu: 1.15,
  insideP99VsFloor: 1.5,
};

const EXEC_ID = 'bench-exec';
const PATCH_ID = 'bench-patch';
const GET_ID = 'bench-get';
const COLD_ID = 'bench-cold';
const SHADOW_ID = 'bench-shadow';
/** The shadow phase's scenario is alone in a project that requires approval: a PATCH there is a proposal. */
const SHADOW_PROJECT = 'bench-shadow';
const creds = await benchCredentials();
const body = JSON.stringify({ address: ADDRESS, scenarioId: EXEC_ID, credentials: creds.credentials });
const shadowBody = JSON.stringify({ address: ADDRESS, scenarioId: SHADOW_ID, credentials: creds.credentials });

const want = (phase) => ONLY === undefined || ONLY.has(phase);

// The cold phase's credentials, issued (or read from their cache) before any server starts: each request carries 3 of
// them, and no credential is sent twice to one server (each store's run has a server of its own, so the same
// credentials serve each store).
let coldBodies;
if (want('cold') && creds.mode === 'strict') {
  const fresh = await freshIdCredentials(COLD_CREDENTIALS, { log: (m) => console.log(m) });
  coldBodies = [];
  for (let i = 0; i + COLD_PER_REQUEST <= fresh.credentials.length; i += COLD_PER_REQUEST) {
    coldBodies.push(JSON.stringify({ address: ADDRESS, scenarioId: COLD_ID, credentials: fresh.credentials.slice(i, i + COLD_PER_REQUEST) }));
  }
  console.log(`  cold phase: ${fresh.credentials.length} fresh credentials (${fresh.cached} from the cache, ${fresh.issued} issued now${fresh.issued ? ` in ${fmt(fresh.issueMs / 1000, 1)} s, ${fmt(fresh.issueCpuMsPerCredential)} ms of CPU each` : ''}), ${coldBodies.length} execute bodies of ${COLD_PER_REQUEST}`);
} else if (want('cold') && ONLY?.has('cold')) {
  console.log('  cold phase skipped: BENCH_VERIFICATION=off verifies no credential');
}

const pct = (sorted, q) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]);

/**
 * The cold phase on one server: BENCH_COLD_CONNECTIONS loops of fetch, each taking the next body never sent, for
 * BENCH_COLD_SECONDS (after BENCH_COLD_WARMUP_REQUESTS unmeasured ones), or until the bodies run out.
 */
async function coldPhase(server) {
  const url = `${server.base}/compliance/scenarios/execute`;
  let next = 0;
  const take = () => (next < coldBodies.length ? coldBodies[next++] : undefined);
  const bad = { count: 0, codes: {}, examples: [] };
  let ok = 0;
  let sent = 0;
  const one = async (b) => {
    sent++;
    const t0 = performance.now();
    let status = 'error';
    let text = '';
    try {
      const res = await fetch(url, { method: 'POST', headers: AUTH, body: b, signal: AbortSignal.timeout(60_000) });
      status = res.status;
      text = await res.text();
    } catch (e) {
      text = String(e?.message ?? e);
    }
    const ms = performance.now() - t0;
    let valid = false;
    if (status === 200) {
      try {
        const results = JSON.parse(text);
        valid = Array.isArray(results) && results.length === 5 && results.every((x) => x.result?.status === 'valid');
      } catch {
        valid = false;
      }
    }
    if (valid) ok++;
    else {
      bad.count++;
      bad.codes[status] = (bad.codes[status] ?? 0) + 1;
      if (bad.examples.length < 3) bad.examples.push(`${status} ${text.slice(0, 400)}`);
    }
    return ms;
  };
  for (let i = 0; i < COLD_WARMUP_REQUESTS; i++) {
    const b = take();
    if (b === undefined) break;
    await one(b);
  }
  const warmupRequests = sent;
  const latencies = [];
  let exhausted = false;
  const snap = cpuSnapshot(server.pid);
  const start = performance.now();
  const deadline = start + COLD_SECONDS * 1000;
  await Promise.all(Array.from({ length: COLD_CONNECTIONS }, async () => {
    while (performance.now() < deadline) {
      const b = take();
      if (b === undefined) {
        exhausted = true;
        break;
      }
      latencies.push(await one(b));
    }
  }));
  const elapsed = (performance.now() - start) / 1000;
  const cpu = cpuSince(snap, server.pid);
  const sorted = [...latencies].sort((a, b) => a - b);
  const n = latencies.length;
  return {
    connections: COLD_CONNECTIONS,
    seconds: elapsed,
    requests: n,
    credentials: n * COLD_PER_REQUEST,
    warmupRequests,
    rps: n / elapsed,
    p50: pct(sorted, 0.5),
    p99: pct(sorted, 0.99),
    max: sorted.at(-1) ?? NaN,
    cpuUsPerCredential: cpu.serverUs / Math.max(1, n * COLD_PER_REQUEST),
    cpuUsPerRequest: cpu.serverUs / Math.max(1, n),
    serverCores: cpu.serverCores,
    loadgenCores: cpu.loadgenCores,
    otherCores: cpu.otherCores,
    exhausted,
    ok,
    sent,
    bad,
  };
}

/** A real change per request: a new description and a new age threshold, with the other 4 rules unchanged. */
function patchBody(n) {
  const rules = HTTP_RULES.map((r) => (r.id === 'q-age' ? { ...r, query: { ...r.query, value: 18 + (n % 50) } } : r));
  return JSON.stringify({ input: { description: `bench patch #${n}`, queryConfigurations: rules } });
}

const median = (xs) => {
  const a = xs.filter((x) => !Number.isNaN(x)).sort((x, y) => x - y);
  if (a.length === 0) return NaN;
  return a.length % 2 ? a[(a.length - 1) / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
};

async function runTarget(target) {
  if (CPU_PROF) fs.mkdirSync(CPU_PROF, { recursive: true });
  const env = { ...creds.env, ...(CPU_PROF ? { BENCH_PROFILE: '1' } : {}), ...(want('shadow') ? { SCENARIO_APPROVAL_PROJECTS: SHADOW_PROJECT } : {}) };
  // The open-loop phase measures each request inside the server too (bench/inproc.mjs); one process only.
  const inproc = want('open') && process.env.BENCH_INPROC !== '0' && Number(process.env.WORKERS?.trim() || '1') <= 1;
  const server = await startServer(target, { env, inproc });
  // A second server, the same but with a no-op audit insert, for the "execute without the audit insert" figure.
  let noAudit;
  const res = { target: target.kind, rounds: ROUNDS, seconds: SECONDS, phases: {}, served: {}, checks: [] };
  const check = (name, pass, detail, goal = true) => res.checks.push({ name, pass, detail, goal });
  let executeOk = 0;
  let executeSent = 0;
  let patchOk = 0;
  let patchSent = 0;
  const patchOther = {};
  const runs = {}; // phase -> measurements, one per round
  const anyBad = {}; // phase -> non-2xx / errors seen (warm-up included)
  let completed = false;
  try {
    await createScenario(server, EXEC_ID, httpScenario('Bench execute'));
    await createScenario(server, PATCH_ID, httpScenario('Bench patch'));
    await createScenario(server, GET_ID, httpScenario('Bench get'));
    if (coldBodies) await createScenario(server, COLD_ID, httpScenario('Bench cold execute'));
    if (want('shadow')) {
      await createScenario(server, SHADOW_ID, { ...httpScenario('Bench shadow'), projectId: SHADOW_PROJECT });
      const stricter = HTTP_RULES.map((r) => (r.id === 'q-age' ? { ...r, query: { ...r.query, value: 40 } } : r));
      const proposed = await request(server, 'PATCH', `/compliance/scenarios/${SHADOW_ID}`, { input: { queryConfigurations: stricter } });
      if (proposed.status !== 202) throw new Error(`proposing the shadow revision: ${proposed.status} ${JSON.stringify(proposed.body)}`);
      const started = await request(server, 'POST', `/compliance/scenarios/${SHADOW_ID}/revisions/2/shadow`, {});
      if (started.status !== 200) throw new Error(`starting the shadow: ${started.status} ${JSON.stringify(started.body)}`);
    }

    // Pre-flight: the execute answers 5 valid results and is in the audit log; the bench routes answer.
    const preflight = async (s) => {
      const r = await request(s, 'POST', '/compliance/scenarios/execute', body);
      const statuses = Array.isArray(r.body) ? r.body.map((x) => x.result?.status) : [];
      if (r.status !== 200 || statuses.length !== 5 || statuses.some((x) => x !== 'valid')) {
        throw new Error(`pre-flight execute did not answer 5 valid results: ${r.status} ${JSON.stringify(r.body).slice(0, 3000)}`);
      }
      return r;
    };
    const first = await preflight(server);
    executeOk += 1;
    executeSent += 1;
    const audit = await request(server, 'GET', `/compliance/executions/${first.body[0].executionId}`);
    if (audit.status !== 200 || audit.body.credentials?.length !== 3) throw new Error(`pre-flight: execution not in the audit log: ${audit.status}`);
    const ceil = await request(server, 'POST', '/bench/ceiling', body);
    if (ceil.status !== 200 || ceil.body.length !== 5) throw new Error(`pre-flight ceiling: ${ceil.status} ${JSON.stringify(ceil.body).slice(0, 500)}`);
    if (want('unrecorded')) {
      noAudit = await startServer(target, { env: { ...env, BENCH_NO_AUDIT: '1' }, inproc });
      await createScenario(noAudit, EXEC_ID, httpScenario('Bench execute'));
      await preflight(noAudit);
    }
    console.log(`  credential verification ${creds.mode}${creds.issuer ? ` (demo issuer ${creds.issuer})` : ''}; ${creds.credentials.length} credentials`);
    console.log(`  execute body ${Buffer.byteLength(body)} bytes, response ${JSON.stringify(first.body).length} bytes (ceiling response ${JSON.stringify(ceil.body).length} bytes)`);

    let n = 0;
    const patchOpts = {
      url: `${server.base}/compliance/scenarios/${PATCH_ID}`,
      connections: PATCH_CONNECTIONS,
      requests: [{ method: 'PATCH', headers: AUTH, setupRequest: (req) => ({ ...req, body: patchBody(++n) }) }],
    };
    let patchAmount = PATCH_CONNECTIONS * 50;
    const phases = [
      { name: 'baseline', label: 'baseline GET /bench/baseline', opts: { method: 'GET', url: `${server.base}/bench/baseline` } },
      { name: 'ceiling', label: 'ceiling POST /bench/ceiling', opts: { method: 'POST', url: `${server.base}/bench/ceiling`, headers: AUTH, body } },
      { name: 'execute', label: 'execute POST /compliance/scenarios/execute', opts: { method: 'POST', url: `${server.base}/compliance/scenarios/execute`, headers: AUTH, body } },
      { name: 'shadow', label: 'execute with a revision in shadow', opts: { method: 'POST', url: `${server.base}/compliance/scenarios/execute`, headers: AUTH, body: shadowBody } },
      { name: 'unrecorded', label: 'execute, no-op audit insert (2nd server)', server: noAudit, opts: { method: 'POST', url: `${noAudit?.base}/compliance/scenarios/execute`, headers: AUTH, body } },
      { name: 'patch', label: `PATCH /compliance/scenarios/${PATCH_ID}`, patch: true },
      { name: 'get', label: `GET /compliance/scenarios/${GET_ID}`, opts: { method: 'GET', url: `${server.base}/compliance/scenarios/${GET_ID}`, headers: AUTH } },
    ].filter((p) => want(p.name));

    const account = (phase, r) => {
      res.served[phase.name] = (res.served[phase.name] ?? 0) + r.completed; // warm-up included (for profiles)
      if (r.non2xx > 0 || r.errors > 0) {
        const bad = (anyBad[phase.name] ??= { non2xx: 0, errors: 0, codes: {} });
        bad.non2xx += r.non2xx;
        bad.errors += r.errors;
        for (const [k, v] of Object.entries(r.codes)) if (!k.startsWith('2')) bad.codes[k] = (bad.codes[k] ?? 0) + v;
      }
      if (phase.name === 'execute') {
        executeOk += r.ok;
        executeSent += r.sent;
      }
      if (phase.patch) {
        patchOk += r.codes['200'] ?? 0;
        for (const [k, v] of Object.entries(r.codes)) if (k !== '200') patchOther[k] = (patchOther[k] ?? 0) + v;
      }
    };
    // PATCH runs a fixed number of requests (from the rate of the warm-up), so that none is in flight when a run
    // ends and the revision check is exact.
    const measure = async (phase, seconds) => {
      if (!phase.patch) return load({ ...phase.opts, connections: CONNECTIONS, duration: seconds, serverPid: (phase.server ?? server).pid });
      const r = await load({ ...patchOpts, amount: Math.max(PATCH_CONNECTIONS * 10, patchAmount), serverPid: server.pid });
      patchAmount = Math.max(PATCH_CONNECTIONS * 10, Math.round((r.ok / Math.max(r.duration, 0.001)) * SECONDS));
      return r;
    };
    // With BENCH_CPU_PROF, each measured run (not the warm-up) is profiled, one .cpuprofile per route and round.
    const profiled = async (phase, round, run) => {
      if (!CPU_PROF) return run();
      const file = path.resolve(CPU_PROF, `${target.kind}-${phase.name}-round${round}.cpuprofile`);
      const profiledServer = phase.server ?? server;
      await request(profiledServer, 'POST', '/bench/profile/start', {});
      const m = await run();
      await request(profiledServer, 'POST', '/bench/profile/stop', { file });
      const shown = path.relative(process.cwd(), file).startsWith('..') ? file : path.relative(process.cwd(), file);
      console.log(`  profile: node bench/profile-summary.mjs ${shown} --requests ${m.completed}`);
      return m;
    };

    for (const phase of phases) {
      const w = await measure(phase, WARMUP);
      account(phase, w);
      await sleep(200);
    }
    for (let round = 1; round <= ROUNDS; round++) {
      for (const phase of phases) {
        const m = await profiled(phase, round, () => measure(phase, SECONDS));
        account(phase, m);
        (runs[phase.name] ??= []).push(m);
        console.log(`  round ${round} ${phase.label}: ${fmt(m.rps)} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms, server ${fmt(m.cpuUsPerReq, 1)} us CPU/req${target.kind === 'postgres' ? `, PostgreSQL ${fmt(m.postgresUsPerReq, 1)} us CPU/req` : ''}; cores used: server ${fmt(m.serverCores, 2)}, load generator ${fmt(m.loadgenCores, 2)}${target.kind === 'postgres' ? `, PostgreSQL ${fmt(m.postgresCores, 2)}` : ''}, other processes ${fmt(m.otherCores, 2)}`);
        await sleep(300);
      }
    }
    // Open loop: execute offered at half the measured maximum (the median of the execute rounds), the requests evenly
    // spaced whatever the answers take (openLoop in lib.mjs): the latency a request meets on a server with headroom.
    // Then the same rate through autocannon's overallRate, reported: autocannon gives each connection its share of a
    // second and sends it back to back from the start of each second, so for the first part of every second it is the
    // closed loop at 100 connections again (bursts, not an even rate).
    if (want('open') && runs.execute) {
      const rate = Math.max(1, Math.round(median(runs.execute.map((m) => m.rps)) / 2));
      const opts = { method: 'POST', url: `${server.base}/compliance/scenarios/execute`, headers: AUTH, body, serverPid: server.pid };
      // With BENCH_CPU_PROF, the open-loop runs are profiled too (open-execute, open-baseline).
      const inside = async (route, run, on = server, name = route.startsWith('GET') ? 'baseline' : 'execute') => {
        const profiledRun = () => profiled({ name: `open-${name}`, server: on }, 1, run);
        if (!on.inproc) return profiledRun();
        await on.inproc.start();
        const r = await profiledRun();
        const stats = await on.inproc.stop();
        r.inproc = { ...stats.routes[route], loop: stats.loop, gc: stats.gc, seconds: stats.seconds, thread: stats.thread };
        r.loadavg = os.loadavg()[0];
        return r;
      };
      const commitsBefore = await auditCommits(server);
      const m = await inside('POST /compliance/scenarios/execute', () => openLoop({ ...opts, rate, seconds: SECONDS, maxSockets: CONNECTIONS }));
      m.commits = commitShares(commitsBefore, await auditCommits(server));
      account({ name: 'execute' }, m);
      await sleep(300);
      // The floor: the baseline route (no work, the app's global hooks) at the same rate, same load generator.
      const floor = await inside('GET /bench/baseline', () => openLoop({ method: 'GET', url: `${server.base}/bench/baseline`, rate, seconds: SECONDS, maxSockets: CONNECTIONS, serverPid: server.pid }));
      await sleep(300);
      // With the unrecorded phase: execute on the server whose audit insert does nothing, at the same rate (what the
      // group commit adds to execute's time inside the process).
      const unrecorded = noAudit?.inproc
        ? await inside('POST /compliance/scenarios/execute', () => openLoop({ ...opts, url: `${noAudit.base}/compliance/scenarios/execute`, serverPid: noAudit.pid, rate, seconds: SECONDS, maxSockets: CONNECTIONS }), noAudit, 'unrecorded')
        : undefined;
      if (unrecorded) await sleep(300);
      const a = await load({ ...opts, connections: CONNECTIONS, overallRate: rate, duration: SECONDS });
      account({ name: 'execute' }, a);
      res.open = { rate, ...m, autocannon: a, floor, unrecorded };
      console.log(`  open loop: execute offered at ${fmt(rate)} req/s (half of ${fmt(rate * 2)}), evenly spaced, up to ${CONNECTIONS} connections: ${fmt(m.rps)} req/s served, p50 ${fmt(m.p50, 1)} ms, p99 ${fmt(m.p99, 1)} ms, max ${fmt(m.max, 1)} ms, ${m.ok} 2xx, ${m.non2xx} non-2xx, ${m.errors} errors (sender at most ${fmt(m.lateMs, 1)} ms behind schedule); server ${fmt(m.cpuUsPerReq, 1)} us CPU/req, ${fmt(m.serverCores, 2)} cores`);
      if (m.commits) {
        console.log(`  the audit commit in that run (recordExecution in /metrics: its wait for the group commit and the writer): ${fmt(m.commits.n)} commits; ` +
          `over ${Object.entries(m.commits.over).map(([ms, share]) => `${ms} ms ${fmt(share * 100, 2)}%`).join(', over ')}` +
          ' (a share over 1% puts execute\'s p99 above that time, whatever the rest of the request costs)');
      }
      console.log(`  the baseline route at the same rate, evenly spaced: p50 ${fmt(floor.p50, 1)} ms, p99 ${fmt(floor.p99, 1)} ms, max ${fmt(floor.max, 1)} ms (sender at most ${fmt(floor.lateMs, 1)} ms behind); server ${fmt(floor.cpuUsPerReq, 1)} us CPU/req`);
      for (const [label, r] of [['execute', m], ['baseline route', floor], ['execute, no-op audit insert (2nd server)', unrecorded]]) {
        if (!r) continue;
        console.log(`  open loop, ${label}, from the client: p50 ${fmt(r.p50, 1)} ms, p99 ${fmt(r.p99, 1)} ms, max ${fmt(r.max, 1)} ms`);
        const i = r.inproc;
        if (!i) continue;
        console.log(`  inside the server, ${label}: ${i.n} requests, p50 ${fmt(i.p50, 2)} ms, p99 ${fmt(i.p99, 2)} ms, p99.9 ${fmt(i.p999, 2)} ms, max ${fmt(i.max, 1)} ms; ` +
          `less the main thread's wait for a CPU: p50 ${fmt(i.net.p50, 2)}, p99 ${fmt(i.net.p99, 2)}, p99.9 ${fmt(i.net.p999, 2)} ms; ` +
          `the slowest 1%: mean ${fmt(i.slowest.meanMs, 2)} ms, GC in ${fmt(i.slowest.withGc * 100)}% of them (mean ${fmt(i.slowest.gcMs, 2)} ms), loop blocked ${fmt(i.slowest.blockedMs, 2)} ms (of it waiting for a CPU ${fmt(i.slowest.offCpuMs, 2)} ms), ${fmt(i.slowest.inflight, 1)} others in the process at arrival ` +
          `(all: GC ${fmt(i.all.gcMs, 2)} ms, blocked ${fmt(i.all.blockedMs, 2)} ms, waiting for a CPU ${fmt(i.all.offCpuMs, 2)} ms, ${fmt(i.all.inflight, 1)} others); ` +
          `${i.thread ? `the main thread on a CPU ${fmt(i.thread.cpuMs)} ms, runnable but waiting for one ${fmt(i.thread.waitMs)} ms; ` : ''}event-loop delay p99 ${fmt(i.loop.p99, 1)} ms, max ${fmt(i.loop.max, 1)} ms; ` +
          `GC ${i.gc.n} pauses, ${fmt(i.gc.ms, 0)} ms in ${fmt(i.seconds, 1)} s, max ${fmt(i.gc.max, 1)} ms ${JSON.stringify(Object.fromEntries(Object.entries(i.gc.byKind).map(([k, v]) => [k, `${v.n}, ${v.ms.toFixed(0)} ms, max ${v.max.toFixed(1)}`])))}; load average ${fmt(r.loadavg, 2)}`);
      }
      console.log(`  the same rate with autocannon's overallRate (${CONNECTIONS} connections, bursts at each second): p50 ${a.p50} ms, p99 ${a.p99} ms, max ${a.max} ms, ${fmt(a.rps)} req/s`);
      await sleep(300);
    }
    if (coldBodies) {
      const c = await coldPhase(server);
      res.cold = c;
      console.log(`  cold execute (${COLD_PER_REQUEST} fresh credentials per request), ${c.connections} connection(s): ${c.requests} requests in ${fmt(c.seconds, 1)} s${c.exhausted ? ' (the fresh credentials ran out: raise BENCH_COLD_CREDENTIALS or BENCH_COLD_MAX_RPS)' : ''}, ${fmt(c.rps, 1)} req/s, p50 ${fmt(c.p50, 1)} ms, p99 ${fmt(c.p99, 1)} ms, max ${fmt(c.max, 1)} ms, server ${fmt(c.cpuUsPerCredential / 1000, 2)} ms CPU per credential; cores used: server ${fmt(c.serverCores, 2)}, load generator ${fmt(c.loadgenCores, 2)}, other processes ${fmt(c.otherCores, 2)}`);
    }
    if (want('shadow')) {
      await sleep(500); // the last batch of comparisons written
      const run = (await request(server, 'GET', `/compliance/scenarios/${SHADOW_ID}/revisions/2/shadow?limit=1`)).body;
      res.shadowRun = { compared: run.compared, flipped: run.flipped, skipped: run.skipped, served: res.served.shadow };
      console.log(`  shadow run: ${run.compared} compared (${run.flipped} flipped), ${run.skipped} skipped, of ${res.served.shadow} executes with the shadow (warm-up included)`);
    }
    if (want('patch')) {
      const final = await request(server, 'GET', `/compliance/scenarios/${PATCH_ID}`);
      patchSent = n;
      res.patch = { finalRevision: final.body.revision, ok: patchOk, sent: patchSent, other: patchOther };
      check('PATCH: no lost update (final revision = 1 + number of 200s)', final.body.revision === 1 + patchOk,
        `final revision ${final.body.revision}, 200s ${patchOk}, PATCHes sent ${patchSent}, other statuses ${JSON.stringify(patchOther)}`);
    }
    completed = true;
  } finally {
    const exit = await server.stop();
    if (exit.code !== 0) check('server exits 0 on SIGTERM', false, JSON.stringify(exit));
    if (noAudit) await noAudit.stop();
    if (!completed) {
      // A failed run leaves no temp directory or PostgreSQL schema behind.
      await cleanup(server).catch(() => {});
      if (noAudit) await cleanup(noAudit).catch(() => {});
    }
  }

  if (want('execute')) {
    const recorded = await countExecutions(server, EXEC_ID);
    res.audit = { acknowledged: executeOk, sent: executeSent, recorded };
    check('every acknowledged execute is in the audit log', recorded >= executeOk && recorded <= executeSent,
      `${recorded} audit rows for ${executeOk} execute 200s (${executeSent} sent; rows beyond the 200s were in flight when a run ended)`);
  }
  if (res.cold) {
    const recorded = await countExecutions(server, COLD_ID);
    res.cold.recorded = recorded;
    check('cold: every acknowledged execute is in the audit log', recorded >= res.cold.ok && recorded <= res.cold.sent,
      `${recorded} audit rows for ${res.cold.ok} cold execute 200s (${res.cold.sent} sent, warm-up included)`);
  }
  await cleanup(server);
  if (noAudit) await cleanup(noAudit);

  const rows = [];
  for (const [name, list] of Object.entries(runs)) {
    const p = {
      connections: name === 'patch' ? PATCH_CONNECTIONS : CONNECTIONS,
      rps: median(list.map((m) => m.rps)),
      rpsMin: Math.min(...list.map((m) => m.rps)),
      rpsMax: Math.max(...list.map((m) => m.rps)),
      p50: median(list.map((m) => m.p50)),
      p99: median(list.map((m) => m.p99)),
      p99Max: Math.max(...list.map((m) => m.p99)),
      cpuUsPerReq: median(list.map((m) => m.cpuUsPerReq)),
      postgresUsPerReq: median(list.map((m) => m.postgresUsPerReq)),
      otherCores: median(list.map((m) => m.otherCores)),
      ok: list.reduce((a, m) => a + m.ok, 0),
      runs: list,
    };
    res.phases[name] = p;
    const label = { baseline: 'baseline', ceiling: 'ceiling', execute: 'execute', shadow: 'execute, revision in shadow', unrecorded: 'execute, no-op audit insert', patch: 'PATCH', get: 'GET scenario' }[name];
    const pgCol = target.kind === 'postgres' ? [fmt(p.postgresUsPerReq, 1)] : [];
    rows.push([label, p.connections, fmt(p.rps), `${fmt(p.rpsMin)}-${fmt(p.rpsMax)}`, fmt(p.p50), fmt(p.p99), fmt(p.p99Max), fmt(p.cpuUsPerReq, 1), ...pgCol, fmt(p.otherCores, 2), p.ok]);
    const bad = anyBad[name];
    check(`${name}: every response 2xx, no error`, bad === undefined, bad ? JSON.stringify(bad) : `${p.ok} 2xx in the measured runs`);
  }

  // Ratios: per round (the routes of one round ran back to back, under the same outside load), then the median.
  const p = res.phases;
  const ratio = (a, b, key = 'rps') => (runs[a] && runs[b] ? median(runs[a].map((m, i) => m[key] / runs[b][i][key])) : NaN);
  const cost = (a, b) => (runs[a] && runs[b] ? median(runs[a].map((m, i) => runs[b][i].cpuUsPerReq / m.cpuUsPerReq)) : NaN);
  res.ratios = {
    executeVsCeiling: ratio('execute', 'ceiling'),
    executeVsBaseline: ratio('execute', 'baseline'),
    patchVsBaseline: ratio('patch', 'baseline'),
    ceilingVsBaseline: ratio('ceiling', 'baseline'),
    executeVsUnrecorded: ratio('execute', 'unrecorded'),
    cpuExecuteVsCeiling: cost('execute', 'ceiling'),
    cpuExecuteVsBaseline: cost('execute', 'baseline'),
    cpuExecuteVsUnrecorded: cost('execute', 'unrecorded'),
    executeVsShadow: ratio('execute', 'shadow'),
    cpuShadowVsExecute: cost('execute', 'shadow'),
  };
  const r = res.ratios;
  if (p.execute && p.ceiling) check(`execute >= ${GOALS.executeVsCeiling} x ceiling`, r.executeVsCeiling >= GOALS.executeVsCeiling, `${fmt(r.executeVsCeiling, 3)} (median of ${ROUNDS} paired rounds)`);
  if (p.execute && p.baseline) check(`execute >= ${GOALS.executeVsBaseline} x baseline`, r.executeVsBaseline >= GOALS.executeVsBaseline, `${fmt(r.executeVsBaseline, 3)} (median of ${ROUNDS} paired rounds)`);
  // Little's law: with N connections always busy, mean latency = N / throughput; p99 <= 10 ms at 100 connections
  // needs well over 10,000 req/s. The ceiling route's p99 (in the table) is the best execute could do here.
  // The latency goal is the open-loop one (below); at 100 connections always busy it is reported, not enforced.
  if (p.execute) check(`execute p99 <= ${GOALS.executeP99} ms at ${CONNECTIONS} connections, closed loop`, p.execute.p99 <= GOALS.executeP99, `${p.execute.p99} ms (median of ${ROUNDS} rounds; worst ${p.execute.p99Max} ms; mean latency by Little's law ${fmt((CONNECTIONS / p.execute.rps) * 1000, 1)} ms; the ceiling route's p99 ${p.ceiling ? `${p.ceiling.p99} ms` : 'not measured'})`, false);
  if (p.execute && p.shadow) {
    const sr = res.shadowRun;
    check(`execute with a revision in shadow <= ${GOALS.shadowCpu} x execute's server CPU`, r.cpuShadowVsExecute <= GOALS.shadowCpu,
      `${fmt(r.cpuShadowVsExecute, 3)} (median of ${ROUNDS} paired rounds; ${sr ? `${sr.compared} compared, ${sr.skipped} skipped` : 'no shadow run read'})`);
    check('shadow: every execute with the shadow compared, none skipped', sr !== undefined && sr.skipped === 0,
      sr ? `${sr.compared} compared, ${sr.skipped} skipped: a skipped comparison costs nothing, so skips would flatter the ratio` : 'not read');
  }
  const o = res.open;
  if (o) {
    check(`execute p99 <= ${GOALS.executeP99} ms offered at half the measured maximum (open loop, ${fmt(o.rate)} req/s evenly spaced)`, o.p99 <= GOALS.executeP99,
      `${fmt(o.p99, 1)} ms (p50 ${fmt(o.p50, 1)} ms, max ${fmt(o.max, 1)} ms; ${fmt(o.rps)} req/s served over ${SECONDS} s; from the moment each was sent: p99 ${fmt(o.serviceP99, 1)} ms). ` +
        `The floor, the baseline route at the same rate: p99 ${fmt(o.floor.p99, 1)} ms; execute / floor p99 ${fmt(o.p99 / o.floor.p99, 2)}`);
    if (o.inproc && o.floor.inproc) {
      const ratio = (k) => o.inproc[k] / o.floor.inproc[k];
      check(`execute p99 inside the server <= ${GOALS.insideP99VsFloor} x the baseline route's (open loop, ${fmt(o.rate)} req/s)`, ratio('p99') <= GOALS.insideP99VsFloor,
        `execute p50 / p99 / p99.9 ${fmt(o.inproc.p50, 2)} / ${fmt(o.inproc.p99, 2)} / ${fmt(o.inproc.p999, 2)} ms, floor ${fmt(o.floor.inproc.p50, 2)} / ${fmt(o.floor.inproc.p99, 2)} / ${fmt(o.floor.inproc.p999, 2)} ms; ` +
          `ratios ${fmt(ratio('p50'), 2)} / ${fmt(ratio('p99'), 2)} / ${fmt(ratio('p999'), 2)}; ` +
          `less the main thread's wait for a CPU: p99 ${fmt(o.inproc.net.p99, 2)} vs ${fmt(o.floor.inproc.net.p99, 2)} ms, ratio ${fmt(o.inproc.net.p99 / o.floor.inproc.net.p99, 2)}; ` +
          `tail beyond the median, (p99 - p50) / (p99 - p50): ${fmt((o.inproc.p99 - o.inproc.p50) / (o.floor.inproc.p99 - o.floor.inproc.p50), 2)}${o.unrecorded?.inproc ? `; execute with a no-op audit insert ${fmt(o.unrecorded.inproc.p50, 2)} / ${fmt(o.unrecorded.inproc.p99, 2)} / ${fmt(o.unrecorded.inproc.p999, 2)} ms, p99 ratio to the floor ${fmt(o.unrecorded.inproc.p99 / o.floor.inproc.p99, 2)}` : ''}; from the client: p99 ${fmt(o.p99, 1)} vs ${fmt(o.floor.p99, 1)} ms, ratio ${fmt(o.p99 / o.floor.p99, 2)}; load average ${fmt(o.loadavg, 2)} / ${fmt(o.floor.loadavg, 2)}`);
    }
    if (o.unrecorded?.inproc && o.floor.inproc) {
      // Reported: without the audit commit's hand-off to another thread (SQLite's writer) or process (PostgreSQL),
      // what the service's own work adds to the tail; see bench/RESULTS.md (issue 41, the tail).
      check(`execute with a no-op audit insert: p99 inside the server <= ${GOALS.insideP99VsFloor} x the baseline route's`, o.unrecorded.inproc.p99 / o.floor.inproc.p99 <= GOALS.insideP99VsFloor,
        `${fmt(o.unrecorded.inproc.p99, 2)} vs ${fmt(o.floor.inproc.p99, 2)} ms, ratio ${fmt(o.unrecorded.inproc.p99 / o.floor.inproc.p99, 2)}; less the main thread's wait for a CPU ${fmt(o.unrecorded.inproc.net.p99, 2)} vs ${fmt(o.floor.inproc.net.p99, 2)} ms; load average ${fmt(o.unrecorded.loadavg, 2)}`, false);
    }
    check(`execute p99 <= ${GOALS.executeP99} ms at the same rate through autocannon's overallRate (${CONNECTIONS} connections: bursts at the start of each second)`, o.autocannon.p99 <= GOALS.executeP99,
      `${o.autocannon.p99} ms (p50 ${o.autocannon.p50} ms, max ${o.autocannon.max} ms)`, false);
    check('open loop: every response 2xx, no error', o.non2xx === 0 && o.errors === 0 && o.autocannon.non2xx === 0 && o.autocannon.errors === 0,
      `${o.ok} 2xx, ${o.non2xx} non-2xx ${JSON.stringify(o.codes)}, ${o.errors} errors; autocannon: ${o.autocannon.ok} 2xx, ${o.autocannon.non2xx} non-2xx, ${o.autocannon.errors} errors`);
  }
  if (p.patch) {
    // The issue sets the PATCH latency goal on SQLite; on PostgreSQL it is reported, not enforced.
    check(`PATCH p99 <= ${GOALS.patchP99} ms at ${PATCH_CONNECTIONS} connections`, p.patch.p99 <= GOALS.patchP99, `${p.patch.p99} ms (median of ${ROUNDS} rounds; worst ${p.patch.p99Max} ms)`, target.kind === 'sqlite');
  }

  const c = res.cold;
  if (c) {
    check('cold: every response 200 with 5 valid results', c.bad.count === 0,
      c.bad.count === 0 ? `${c.ok} of ${c.sent} (warm-up included)` : `${c.bad.count} of ${c.sent} not: ${JSON.stringify(c.bad.codes)}; e.g. ${c.bad.examples.join(' | ')}`);
    check(`cold execute (${COLD_PER_REQUEST} fresh credentials) p50 <= ${GOALS.coldP50} ms at 1 connection`, c.requests > 0 && c.p50 <= GOALS.coldP50,
      `${fmt(c.p50, 1)} ms at ${c.connections} connection(s) over ${c.requests} requests (p99 ${fmt(c.p99, 1)} ms)${c.connections === 1 ? '' : '; the goal is set at 1 connection: reported, not enforced'}`,
      c.connections === 1);
  }

  console.log(`\n### ${target.kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'}${rows.length > 0 ? `: median of ${ROUNDS} rounds of ${SECONDS} s per route (after ${WARMUP} s warm-up)` : ''}\n`);
  const pgHead = target.kind === 'postgres' ? ['PostgreSQL CPU us/req'] : [];
  if (rows.length > 0) {
    console.log(table(['route', 'conns', 'req/s', 'req/s range', 'p50 ms', 'p99 ms', 'worst p99', 'server CPU us/req', ...pgHead, 'other procs (cores)', '2xx'], rows));
    console.log('');
    console.log(table(['ratio (median of paired rounds)', 'throughput', 'server CPU cost'], [
      ['execute / ceiling', fmt(r.executeVsCeiling, 3), fmt(r.cpuExecuteVsCeiling, 3)],
      ['execute / baseline', fmt(r.executeVsBaseline, 3), fmt(r.cpuExecuteVsBaseline, 3)],
      ['PATCH / baseline', fmt(r.patchVsBaseline, 3), '-'],
      ['ceiling / baseline', fmt(r.ceilingVsBaseline, 3), '-'],
      ['execute / execute with a no-op audit insert', fmt(r.executeVsUnrecorded, 3), fmt(r.cpuExecuteVsUnrecorded, 3)],
      ['execute / execute with a revision in shadow', fmt(r.executeVsShadow, 3), fmt(r.cpuShadowVsExecute, 3)],
    ]));
    console.log('  (server CPU cost ratio = CPU us per request of the other route / of execute: the same ratio measured in');
    console.log('   CPU time instead of wall time, so less sensitive to other processes on the machine)');
    console.log('');
  }
  if (c) {
    console.log(`Cold execute: every request carries ${COLD_PER_REQUEST} credentials never sent before (one run of ${COLD_SECONDS} s after ${c.warmupRequests} warm-up requests)\n`);
    console.log(table(['route', 'conns', 'requests', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'server CPU ms/credential', 'server CPU ms/req', 'server cores', 'other procs (cores)', '200 all valid'], [[
      `cold execute${c.exhausted ? ' (credentials ran out)' : ''}`, c.connections, c.requests, fmt(c.rps, 1), fmt(c.p50, 1), fmt(c.p99, 1), fmt(c.max, 1),
      fmt(c.cpuUsPerCredential / 1000, 2), fmt(c.cpuUsPerRequest / 1000, 2), fmt(c.serverCores, 2), fmt(c.otherCores, 2), `${c.ok}/${c.sent}`,
    ]]));
    console.log('  (server CPU: the server process and all its threads, verification threads included, over the measured run;');
    console.log('   per credential = that / (requests x 3): HTTP, the rules and the audit record are in it too)');
    console.log('');
  }
  for (const c of res.checks) console.log(`  ${c.pass ? 'PASS' : c.goal ? 'FAIL' : 'MISS (reported, not a goal on this store or at these settings)'}  ${c.name}: ${c.detail}`);
  return res;
}

console.log(describeRun());
console.log(`load generator (autocannon) in this process, the server in a child process (WORKERS=${process.env.WORKERS?.trim() || '1'}); both share the machine`);
console.log(`BENCH_SECONDS=${SECONDS} BENCH_ROUNDS=${ROUNDS} BENCH_WARMUP_SECONDS=${WARMUP} BENCH_CONNECTIONS=${CONNECTIONS} BENCH_PATCH_CONNECTIONS=${PATCH_CONNECTIONS}${ONLY ? ` BENCH_ONLY=${[...ONLY]}` : ''}`);
const results = [];
let failed = false;
for (const target of targets()) {
  console.log(`\n== ${target.kind} ==`);
  try {
    const r = await runTarget(target);
    results.push(r);
    if (r.checks.some((c) => c.goal && !c.pass)) failed = true;
  } catch (err) {
    failed = true;
    console.error(`FAIL  ${target.kind}: ${err.stack ?? err}`);
  }
}
console.log(`\nload average at the end: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
if (process.env.BENCH_JSON) fs.writeFileSync(process.env.BENCH_JSON, JSON.stringify(results, null, 2));
const missed = results.flatMap((r) => r.checks.filter((c) => c.goal && !c.pass).map((c) => `${r.target}: ${c.name} (${c.detail})`));
if (failed) {
  console.log(`\nGoals missed:\n${missed.map((m) => `  - ${m}`).join('\n') || '  (a run failed, see above)'}`);
  process.exit(1);
}
console.log('\nAll goals met.');
