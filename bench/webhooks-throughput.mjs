/**
 * Webhook throughput to one fast target: `BENCH_WEBHOOKS_EXECUTIONS` (3000) executes sent as fast as the server takes
 * them (`BENCH_WEBHOOKS_CONCURRENCY` (16) at a time over keep-alive connections), each enqueuing one delivery to ONE
 * receiver on 127.0.0.1 (`WEBHOOK_URL`) that answers 204 at once. Measured per store (SQLite, and PostgreSQL with
 * DATABASE_URL; BENCH_STORES to pick):
 *
 *   executes/s     while the deliveries run beside them (N / the time from the first execute sent to the last answered)
 *   deliveries/s   N / the time from the first execute sent until every delivery arrived (distinct webhook-ids)
 *   steady         deliveries/s from the first arrival to the last
 *   after enqueue  how long the last deliveries took once every execute was answered
 *   connections    TCP connections the receiver accepted (one per POST without keep-alive)
 *   duplicates     arrivals of a webhook-id already received (at-least-once allows them; a healthy run has none)
 *   server CPU     the server process's CPU time per delivery (all its threads; from /proc)
 *
 * twice per store: 'live' (the outbox polled every second: deliveries beside the executes, which bound them) and
 * 'backlog' (the first poll a minute after the server is ready, once every execute was answered: the backlog sent with
 * nothing else running, `steady` is what one fast target gets).
 * Exits 1 when the backlog is sent at fewer than `BENCH_WEBHOOKS_GOAL` (300) deliveries/s, a delivery is missing after
 * `BENCH_WEBHOOKS_DRAIN_S` (120) s, a signature does not verify, or an execute is not answered 200.
 * The credentials follow BENCH_VERIFICATION (lib.mjs; default strict, as in the soak).
 *
 *   npm run build && node bench/webhooks-throughput.mjs
 *   BENCH_STORES=postgres DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/webhooks-throughput.mjs
 */
import http from 'node:http';
import os from 'node:os';
import { ADDRESS, httpScenario } from './fixtures.mjs';
import { AUTH, benchCredentials, cleanup, cpuSnapshot, cpuSince, createScenario, describeRun, envNumber, fmt, request, sleep, startServer, table, targets, webhookReceiver } from './lib.mjs';

const EXECUTIONS = envNumber('BENCH_WEBHOOKS_EXECUTIONS', 3000);
const CONCURRENCY = envNumber('BENCH_WEBHOOKS_CONCURRENCY', 16);
const GOAL = envNumber('BENCH_WEBHOOKS_GOAL', 300);
const DRAIN_S = envNumber('BENCH_WEBHOOKS_DRAIN_S', 120);
const BACKLOG_POLL_MS = 60_000;
const SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;

const creds = await benchCredentials();
const body = JSON.stringify({ address: ADDRESS, scenarioId: 'hooks', credentials: creds.credentials });

/**
 * `mode` 'live': the outbox is polled every second, so deliveries run beside the executes (and can go no faster than
 * they come). 'backlog': the first poll comes BACKLOG_POLL_MS after the server is ready, once every execute was answered
 * (said when not), so the whole backlog is sent with nothing else running: what one fast target can get.
 */
async function runTarget(target, mode) {
  const receiver = await webhookReceiver(SECRET);
  const pollMs = mode === 'backlog' ? BACKLOG_POLL_MS : 1000;
  const server = await startServer(target, { env: { ...creds.env, WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: SECRET, WEBHOOK_POLL_MS: String(pollMs) } });
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const u = new URL(server.base);
  const execute = () => new Promise((resolve) => {
    const payload = Buffer.from(body);
    const req = http.request({
      host: u.hostname, port: u.port, path: '/compliance/scenarios/execute', method: 'POST', agent, timeout: 60_000,
      headers: { ...AUTH, 'content-length': String(payload.length) },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve('error'));
    req.end(payload);
  });
  try {
    await createScenario(server, 'hooks', httpScenario('Webhook throughput'));
    // One execute before the clock starts (it warms the credentials' verification); its delivery is not counted.
    const first = await request(server, 'POST', '/compliance/scenarios/execute', body);
    if (first.status !== 200) throw new Error(`pre-flight execute: ${first.status} ${JSON.stringify(first.body).slice(0, 500)}`);
    // Live, its delivery is waited for; in a backlog run it is sent with the others (and not counted).
    const deadline0 = performance.now() + 30_000;
    if (mode === 'live') while (receiver.stats.arrived.size < 1 && performance.now() < deadline0) await sleep(20);
    const warm = mode === 'live' ? receiver.stats.arrived.size : 1;
    const warmConnections = receiver.stats.connections;
    receiver.stats.first = NaN;

    const snap = cpuSnapshot(server.pid);
    const load = os.loadavg()[0];
    const t0 = performance.now();
    const failures = {};
    let sent = 0;
    const loop = async () => {
      while (sent < EXECUTIONS) {
        sent++;
        const status = await execute();
        if (status !== 200) failures[status] = (failures[status] ?? 0) + 1;
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, loop));
    const enqueued = performance.now();
    const deliveredDuringEnqueue = Math.max(0, receiver.stats.arrived.size - warm);
    const want = warm + EXECUTIONS;
    const drainUntil = enqueued + DRAIN_S * 1000;
    while (receiver.stats.arrived.size < want && performance.now() < drainUntil) await sleep(10);
    const cpu = cpuSince(snap, server.pid);
    const delivered = Math.max(0, receiver.stats.arrived.size - warm);
    const end = delivered >= EXECUTIONS ? receiver.stats.last : performance.now();
    return {
      target: target.kind, mode, load, loadEnd: os.loadavg()[0],
      executesPerS: EXECUTIONS / ((enqueued - t0) / 1000),
      deliveriesPerS: delivered / ((end - t0) / 1000),
      steadyPerS: delivered / ((receiver.stats.last - receiver.stats.first) / 1000),
      duringEnqueue: deliveredDuringEnqueue,
      afterEnqueueS: (end - enqueued) / 1000,
      totalS: (end - t0) / 1000,
      delivered,
      connections: receiver.stats.connections - warmConnections,
      duplicates: receiver.stats.duplicates,
      badSignatures: receiver.stats.badSignatures,
      serverCpuUsPerDelivery: cpu.serverUs / Math.max(1, delivered),
      serverCores: cpu.serverCores, postgresCores: cpu.postgresCores,
      failures,
    };
  } finally {
    agent.destroy();
    await server.stop();
    await cleanup(server);
    await receiver.close();
  }
}

console.log(describeRun());
console.log(`webhook throughput: ${EXECUTIONS} executes, ${CONCURRENCY} at a time, one receiver answering 204 at once; goal ${GOAL} deliveries/s; verification ${creds.mode}`);
const results = [];
for (const target of targets()) for (const mode of ['live', 'backlog']) results.push(await runTarget(target, mode));
console.log(`\n${table(
  ['store', 'run', 'load (1 min)', 'executes/s', 'deliveries/s', 'steady /s', 'delivered during enqueue', 'after enqueue s', 'connections', 'duplicates', 'server CPU us/delivery', 'server cores', 'PG cores'],
  results.map((r) => [
    r.target, r.mode, `${fmt(r.load, 2)}-${fmt(r.loadEnd, 2)}`, fmt(r.executesPerS), fmt(r.deliveriesPerS), fmt(r.steadyPerS), `${r.delivered === 0 ? 0 : r.duringEnqueue}/${EXECUTIONS}`,
    fmt(r.afterEnqueueS, 1), r.connections, r.duplicates, fmt(r.serverCpuUsPerDelivery), fmt(r.serverCores, 2), r.target === 'postgres' ? fmt(r.postgresCores, 2) : '-',
  ]),
)}\n`);
let failed = false;
for (const r of results) {
  const checks = [
    r.mode === 'live'
      // Live, deliveries cannot outrun the executes: said, not checked.
      ? ['deliveries beside the executes (no goal)', true, `${fmt(r.deliveriesPerS)} deliveries/s for ${fmt(r.executesPerS)} executes/s, the last ${fmt(r.afterEnqueueS, 1)} s after the last execute`]
      : [`a backlog sent at >= ${GOAL} deliveries/s`, r.steadyPerS >= GOAL && r.duringEnqueue === 0,
        `${fmt(r.steadyPerS)}/s from the first arrival to the last (x${fmt(r.steadyPerS / GOAL, 2)} of the goal)${r.duringEnqueue > 0 ? `; ${r.duringEnqueue} arrived before the last execute: not a backlog, run again` : ''}`],
    [`every delivery arrived within ${DRAIN_S} s of the last execute`, r.delivered >= EXECUTIONS, `${r.delivered}/${EXECUTIONS}`],
    ['every signature verified', r.badSignatures === 0, `${r.badSignatures} bad`],
    ['every execute answered 200', Object.keys(r.failures).length === 0, JSON.stringify(r.failures)],
  ];
  for (const [name, pass, detail] of checks) {
    console.log(`  ${pass ? 'PASS' : 'FAIL'}  ${r.target} ${r.mode}: ${name}: ${detail}`);
    if (!pass) failed = true;
  }
}
console.log(`WEBHOOKS_THROUGHPUT ${JSON.stringify(results.map(({ failures, ...r }) => ({ ...r, failures })))}`);
process.exit(failed ? 1 : 0);
