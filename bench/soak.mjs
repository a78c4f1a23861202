/**
 * The soak (issue 41): BENCH_SOAK_MINUTES (10) of mixed load on one server per store (SQLite, and PostgreSQL with
 * DATABASE_URL; BENCH_STORES to pick), webhooks on for every execution (WEBHOOK_URL) to a receiver in this process
 * that verifies each signature:
 *
 *   warm execute   POST /compliance/scenarios/execute, the same 3 demo-issuer credentials (BENCH_SOAK_EXECUTE_RPS, 100)
 *   cold execute   the same with 3 credentials never sent before, one every BENCH_SOAK_COLD_EVERY_S (20) s
 *   PATCH          a real change of one scenario (BENCH_SOAK_PATCH_RPS, 5)
 *   reads          GET the scenario (BENCH_SOAK_GET_RPS, 20) and its last 20 executions (BENCH_SOAK_LIST_RPS, 5)
 *   floor          GET /health/live (BENCH_SOAK_FLOOR_RPS, 20), not counted in "all"
 *
 * each paced evenly (latency from when a request was due). Every 10 s: the server's RSS, heap used, the heap used and
 * the last mark-compact (through bench/inproc.mjs), and the p99 of warm execute and of all requests.
 * Prints whether RSS and the heap after a mark-compact stay within 10% of their value at the end of the first minute
 * (RSS as sampled beside it), and warm execute's p99 of the last minute against the second's (goal <= 1.2), raw and
 * over the floor route's p99 of the same minute; exits 1 when a goal is missed, a request fails, or a webhook's
 * signature does not verify. Needs at least 3 minutes for the p99 comparison.
 */
import http from 'node:http';
import os from 'node:os';
import { ADDRESS, freshIdCredentials, HTTP_RULES, httpScenario } from './fixtures.mjs';
import { AUTH, benchCredentials, cleanup, createScenario, describeRun, envNumber, fmt, request, sleep, startServer, table, targets, webhookReceiver } from './lib.mjs';

const MINUTES = envNumber('BENCH_SOAK_MINUTES', 10);
const RATES = {
  execute: envNumber('BENCH_SOAK_EXECUTE_RPS', 100),
  patch: envNumber('BENCH_SOAK_PATCH_RPS', 5),
  get: envNumber('BENCH_SOAK_GET_RPS', 20),
  list: envNumber('BENCH_SOAK_LIST_RPS', 5),
  cold: 1 / envNumber('BENCH_SOAK_COLD_EVERY_S', 20),
  // The do-nothing route in the same minutes: its p99 moves with the machine, not with the service's state.
  floor: envNumber('BENCH_SOAK_FLOOR_RPS', 20),
};
const SAMPLE_S = 10;
const DRAIN_S = envNumber('BENCH_SOAK_DRAIN_S', 120);
const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const GOALS = { memory: 0.1, p99: 1.2 };

const creds = await benchCredentials();
const warmBody = JSON.stringify({ address: ADDRESS, scenarioId: 'soak-exec', credentials: creds.credentials });
const coldCount = creds.mode === 'strict' ? Math.ceil(MINUTES * 60 * RATES.cold) + 1 : 0;
const fresh = coldCount > 0 ? await freshIdCredentials(coldCount * 3, { log: (m) => console.log(m) }) : { credentials: [] };
const coldBodies = [];
for (let i = 0; i + 3 <= fresh.credentials.length; i += 3) {
  coldBodies.push(JSON.stringify({ address: ADDRESS, scenarioId: 'soak-cold', credentials: fresh.credentials.slice(i, i + 3) }));
}

const q = (xs, p) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
};

async function runTarget(target) {
  const receiver = await webhookReceiver(SECRET);
  const server = await startServer(target, { env: { ...creds.env, WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: SECRET }, inproc: true });
  const failures = { count: 0, codes: {} };
  const buckets = []; // per 10 s: {execute: [ms], floor: [ms], all: [ms]}
  let bucket = { execute: [], floor: [], all: [] };
  let executions = 0;
  let stopping = false;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const u = new URL(server.base);
  const send = (method, path, body) => new Promise((resolve) => {
    const payload = body === undefined ? undefined : Buffer.from(body);
    const req = http.request({
      host: u.hostname, port: u.port, path, method, agent, timeout: 30_000,
      headers: { ...AUTH, ...(payload ? { 'content-length': String(payload.length) } : {}) },
    }, (res) => {
      res.on('data', () => {});
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve('error'));
    req.end(payload);
  });
  let patchN = 0;
  const kinds = {
    execute: () => ['POST', '/compliance/scenarios/execute', warmBody],
    cold: () => (coldBodies.length > 0 ? ['POST', '/compliance/scenarios/execute', coldBodies.shift()] : undefined),
    patch: () => ['PATCH', '/compliance/scenarios/soak-patch', JSON.stringify({
      input: {
        description: `soak #${++patchN}`, queryConfigurations: HTTP_RULES.map((r) => (r.id === 'q-age' ? { ...r, query: { ...r.query, value: 18 + (patchN % 50) } } : r)),
      },
    })],
    get: () => ['GET', '/compliance/scenarios/soak-exec'],
    list: () => ['GET', '/compliance/scenarios/soak-exec/executions?limit=20'],
    floor: () => ['GET', '/health/live'],
  };
  const pending = new Set();
  // One evenly paced sender per kind, latency from when each request was due.
  const pace = (kind, rate) => new Promise((done) => {
    const start = performance.now();
    let i = 0;
    const tick = () => {
      if (stopping) return done();
      const now = performance.now();
      while (start + (i * 1000) / rate <= now) {
        const due = start + (i * 1000) / rate;
        i++;
        const call = kinds[kind]();
        if (!call) continue;
        const p = send(...call).then((status) => {
          const ms = performance.now() - due;
          if (typeof status !== 'number' || status >= 300) {
            failures.count++;
            failures.codes[`${kind} ${status}`] = (failures.codes[`${kind} ${status}`] ?? 0) + 1;
          } else if (kind === 'execute' || kind === 'cold') executions++;
          if (kind === 'execute' || kind === 'floor') bucket[kind].push(ms);
          if (kind !== 'floor') bucket.all.push(ms);
        });
        pending.add(p);
        void p.finally(() => pending.delete(p));
      }
      setTimeout(tick, Math.max(0, start + (i * 1000) / rate - performance.now()));
    };
    tick();
  });
  const samples = [];
  try {
    await createScenario(server, 'soak-exec', httpScenario('Soak execute'));
    await createScenario(server, 'soak-patch', httpScenario('Soak patch'));
    await createScenario(server, 'soak-cold', httpScenario('Soak cold'));
    const first = await request(server, 'POST', '/compliance/scenarios/execute', warmBody);
    if (first.status !== 200) throw new Error(`pre-flight execute: ${first.status} ${JSON.stringify(first.body).slice(0, 500)}`);
    await server.inproc.memory(); // starts watching mark-compacts
    const t0 = performance.now();
    const senders = Object.entries(RATES).map(([kind, rate]) => pace(kind, rate));
    const total = MINUTES * 60;
    for (let s = SAMPLE_S; s <= total + 0.001; s += SAMPLE_S) {
      await sleep(Math.max(0, t0 + s * 1000 - performance.now()));
      const done = bucket;
      bucket = { execute: [], floor: [], all: [] };
      buckets.push(done);
      const mem = await server.inproc.memory();
      samples.push({
        // No mark-compact yet: NaN (null through the IPC channel's JSON).
        s, rssMb: mem.rss / 2 ** 20, heapMb: mem.heapUsed / 2 ** 20, afterMajorMb: (mem.heapAfterMajor ?? NaN) / 2 ** 20,
        executeP99: q(done.execute, 0.99), allP99: q(done.all, 0.99), requests: done.all.length, load: os.loadavg()[0],
      });
      const x = samples.at(-1);
      console.log(`  ${target.kind} ${x.s} s: RSS ${fmt(x.rssMb, 1)} MB, heap ${fmt(x.heapMb, 1)} MB (after the last mark-compact ${fmt(x.afterMajorMb, 1)}), warm execute p99 ${fmt(x.executeP99, 1)} ms, all p99 ${fmt(x.allP99, 1)} ms over ${x.requests} requests, load ${fmt(x.load, 2)}`);
    }
    stopping = true;
    await Promise.all(senders);
    await Promise.all([...pending]);
    // The last webhooks: until every execution's arrived, none came for 5 s, or BENCH_SOAK_DRAIN_S passed (a backlog: said below).
    const drainUntil = performance.now() + DRAIN_S * 1000;
    for (let seen = -1; receiver.stats.received < executions && receiver.stats.received !== seen && performance.now() < drainUntil;) {
      seen = receiver.stats.received;
      await sleep(5000);
    }
  } finally {
    stopping = true;
    agent.destroy();
    await server.stop();
    await cleanup(server);
    await receiver.close();
  }
  // Samples before any mark-compact have no heap-after figure: the reference is the first one at or after 60 s that has.
  const spread = (key) => {
    const from = samples.find((x) => x.s >= 60 && !Number.isNaN(x[key]));
    const rest = samples.filter((x) => from && x.s > from.s && !Number.isNaN(x[key]));
    return rest.length > 0 ? Math.max(...rest.map((x) => Math.abs(x[key] - from[key]) / from[key])) : NaN;
  };
  const rssFloors = Array.from({ length: Math.floor(samples.length / 6) }, (_, m) => Math.min(...samples.slice(m * 6, m * 6 + 6).map((x) => x.rssMb)));
  const minute = (m, key = 'execute') => buckets.slice(m * 6, m * 6 + 6).flatMap((b) => b[key]);
  const minutes = Math.floor(buckets.length / 6);
  const second = q(minute(1), 0.99);
  const last = q(minute(minutes - 1), 0.99);
  const secondFloor = q(minute(1, 'floor'), 0.99);
  const lastFloor = q(minute(minutes - 1, 'floor'), 0.99);
  return { target: target.kind, samples, rssSpread: spread('rssMb'), rssFloors, heapSpread: spread('afterMajorMb'), rawHeapSpread: spread('heapMb'), second, last, secondFloor, lastFloor, minutes, failures, executions, webhooks: receiver.stats };
}

console.log(describeRun());
console.log(`soak: ${MINUTES} min per store; rates per second ${JSON.stringify(RATES)}; ${coldBodies.length} cold execute bodies of 3 fresh credentials`);
let failed = false;
for (const target of targets()) {
  console.log(`\n== ${target.kind} ==`);
  const r = await runTarget(target);
  console.log(`\n${table(['s', 'RSS MB', 'heap MB', 'heap after mark-compact MB', 'warm execute p99 ms', 'all p99 ms', 'requests', 'load'],
    r.samples.map((x) => [x.s, fmt(x.rssMb, 1), fmt(x.heapMb, 1), fmt(x.afterMajorMb, 1), fmt(x.executeP99, 1), fmt(x.allP99, 1), x.requests, fmt(x.load, 2)]))}\n`);
  const checks = [
    [`RSS within ${GOALS.memory * 100}% of its value at 60 s`, r.rssSpread <= GOALS.memory, `largest difference ${fmt(r.rssSpread * 100, 1)}%`],
    // Between mark-compacts the old generation's garbage moves RSS by a quarter; each minute's lowest sample is its floor.
    [`RSS floor (lowest sample) of the last minute within ${GOALS.memory * 100}% of the second minute's`,
      Math.abs(r.rssFloors.at(-1) / r.rssFloors[1] - 1) <= GOALS.memory,
      `per minute: ${r.rssFloors.map((x) => fmt(x, 1)).join(', ')} MB`],
    [`heap after a mark-compact within ${GOALS.memory * 100}% of its value at 60 s`, r.heapSpread <= GOALS.memory, `largest difference ${fmt(r.heapSpread * 100, 1)}% (heap used as sampled, young generation included: ${fmt(r.rawHeapSpread * 100, 1)}%)`],
    [`warm execute p99 of the last minute <= ${GOALS.p99} x the second minute's`, r.last / r.second <= GOALS.p99, `${fmt(r.last, 1)} vs ${fmt(r.second, 1)} ms: x${fmt(r.last / r.second, 2)} (minute ${r.minutes} against minute 2)`],
    // The same against the floor route's p99 of the same minute: what the service adds, less what the machine's load adds.
    [`warm execute p99 over the floor route's, last minute <= ${GOALS.p99} x the second minute's`,
      (r.last / r.lastFloor) / (r.second / r.secondFloor) <= GOALS.p99,
      `x${fmt(r.last / r.lastFloor, 2)} (${fmt(r.last, 1)} / ${fmt(r.lastFloor, 1)} ms) vs x${fmt(r.second / r.secondFloor, 2)} (${fmt(r.second, 1)} / ${fmt(r.secondFloor, 1)} ms)`],
    ['every request 2xx', r.failures.count === 0, `${r.failures.count} not: ${JSON.stringify(r.failures.codes)}`],
    ['every webhook signature verified', r.webhooks.badSignatures === 0, `${r.webhooks.received} deliveries received for ${r.executions} executions, ${r.webhooks.badSignatures} bad signatures`],
    [`every execution's webhook delivered within ${DRAIN_S} s of the end`, r.webhooks.received >= r.executions,
      `${Math.max(0, r.executions - r.webhooks.received)} not yet (the outbox keeps them: a delivery backlog, not a loss)`],
  ];
  for (const [name, pass, detail] of checks) {
    console.log(`  ${pass ? 'PASS' : 'FAIL'}  ${r.target}: ${name}: ${detail}`);
    if (!pass) failed = true;
  }
}
console.log(`\nload average at the end: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
process.exit(failed ? 1 : 0);
