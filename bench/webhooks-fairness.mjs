/**
 * Webhook deliveries bounded and fair (issue 36), against the built service (bench/server.mjs) with receivers on
 * 127.0.0.1, WEBHOOK_TIMEOUT_MS at its default (5 s) and WEBHOOK_POLL_MS at 1 s:
 * 1. Tenant A alone: `A_EXECUTIONS` (40) executes to a receiver that answers at once; each delivery's latency (from the
 *    execute's answer to the receiver's request).
 * 2. The same while tenant B has sent `B_EXECUTIONS` (385) executes to a receiver that takes every request and never
 *    answers: A's latencies again, and how many of A's arrived before any of B's was given up.
 * 2b. The same while tenants D and E each have sent `PATHS_EXECUTIONS` (192) executes spread over `PATHS` (16)
 *    scenarios whose `webhookUrl`s are paths of one host that never answers (one receiver each): targets are origins,
 *    so each host is one target, and projects take turns.
 * 3. `STALLED` (100) deliveries to a receiver that sends its headers and then never ends its body: the sockets still
 *    open on its side `WEBHOOK_TIMEOUT_MS` + 2 s after the last one arrived.
 * Prints a table and `WEBHOOKS_FAIRNESS {...}`; exits 1 when an A delivery takes more than 10 s with B (or D and E)
 * hanging, or more
 * than 5 stalled sockets are left open.
 *
 *   npm run build && node bench/webhooks-fairness.mjs
 */
import http from 'node:http';
import { cleanup, createScenario, envNumber, fmt, request, sleep, startServer, table } from './lib.mjs';

const A_EXECUTIONS = envNumber('A_EXECUTIONS', 40);
const B_EXECUTIONS = envNumber('B_EXECUTIONS', 385);
const STALLED = envNumber('STALLED', 100);
const PATHS = envNumber('PATHS', 16);
const PATHS_EXECUTIONS = envNumber('PATHS_EXECUTIONS', 192);
const TIMEOUT_MS = 5000;
const SECRET = `whsec_${Buffer.alloc(32, 5).toString('base64')}`;

/** A receiver: `answer(req, res)` decides; it notes when each request arrived (by executionId) and its open sockets. */
async function receiver(answer) {
  const arrived = new Map();
  const open = new Set();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      arrived.set(JSON.parse(body).data.executionId, performance.now());
      answer(req, res);
    });
  });
  server.on('connection', (s) => {
    open.add(s);
    s.on('close', () => open.delete(s));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    arrived, open, url: `http://127.0.0.1:${server.address().port}/hook`,
    close: () => new Promise((r) => { for (const s of open) s.destroy(); server.close(r); }),
  };
}

const scenario = (projectId, webhookUrl) => ({
  name: 'KYC', type: 'ChallengeQuery', smartContractDeployments: [], projectId, webhookUrl,
  queryConfigurations: [{ id: 'q', query: { type: 'IDInformation', requestId: 1, attribute: 'reviewAnswer', value: 'GREEN', operator: '$eq' } }],
});

/** Executes `n` times, 8 at a time; answers each executionId with when its answer came. */
async function execute(server, scenarioId, n) {
  const answered = new Map();
  let next = 0;
  const worker = async () => {
    while (next < n) {
      next += 1;
      const r = await request(server, 'POST', '/compliance/scenarios/execute', { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', credentials: [], scenarioId });
      if (r.status !== 200) throw new Error(`execute ${scenarioId}: ${r.status} ${JSON.stringify(r.body)}`);
      answered.set(r.body[0].executionId, performance.now());
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return answered;
}

/** Waits until every execution of `answered` reached `hook` (or `waitMs` passed); answers the latencies in ms. */
async function latencies(answered, hook, waitMs) {
  const deadline = Date.now() + waitMs;
  while ([...answered.keys()].some((id) => !hook.arrived.has(id)) && Date.now() < deadline) await sleep(50);
  return [...answered].map(([id, at]) => (hook.arrived.has(id) ? hook.arrived.get(id) - at : Infinity)).sort((x, y) => x - y);
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

async function run() {
  const answering = await receiver((_req, res) => res.end());
  const hanging = await receiver(() => {});
  const stalling = await receiver((_req, res) => { res.writeHead(200); res.write('ok'); });
  const hangingD = await receiver(() => {});
  const hangingE = await receiver(() => {});
  const server = await startServer({ kind: 'sqlite' }, {
    env: { CREDENTIAL_VERIFICATION: 'off', WEBHOOK_SECRET: SECRET, WEBHOOK_ALLOW_PRIVATE_TARGETS: '1', WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) },
  });
  try {
    await createScenario(server, 'a', scenario('tenant-a', answering.url));
    await createScenario(server, 'b', scenario('tenant-b', hanging.url));
    await createScenario(server, 'c', scenario('tenant-c', stalling.url));

    const alone = await latencies(await execute(server, 'a', A_EXECUTIONS), answering, 60_000);
    await execute(server, 'b', B_EXECUTIONS);
    const withB = await latencies(await execute(server, 'a', A_EXECUTIONS), answering, 120_000);
    const bSent = hanging.arrived.size;

    // D and E: one host each, under a path per scenario; their executes interleave, then A's come.
    for (let i = 0; i < PATHS; i++) {
      await createScenario(server, `d${i}`, scenario('tenant-d', `${hangingD.url}/${i}`));
      await createScenario(server, `e${i}`, scenario('tenant-e', `${hangingE.url}/${i}`));
    }
    for (let i = 0; i < PATHS; i++) {
      await Promise.all([execute(server, `d${i}`, PATHS_EXECUTIONS / PATHS), execute(server, `e${i}`, PATHS_EXECUTIONS / PATHS)]);
    }
    const withDE = await latencies(await execute(server, 'a', A_EXECUTIONS), answering, 120_000);
    const deSent = [hangingD.arrived.size, hangingE.arrived.size];

    await execute(server, 'c', STALLED);
    const deadline = Date.now() + 60_000;
    while (stalling.arrived.size === 0 && Date.now() < deadline) await sleep(50);
    await sleep(TIMEOUT_MS + 2000);
    const stalledOpen = stalling.open.size;

    const row = (name, l) => [name, fmt(pct(l, 50)), fmt(pct(l, 99)), fmt(l.at(-1)), `${l.filter(Number.isFinite).length}/${l.length}`];
    console.log(table(['tenant A deliveries', 'p50 ms', 'p99 ms', 'max ms', 'arrived'], [
      row('alone', alone), row(`B hanging (${B_EXECUTIONS} queued)`, withB),
      row(`D and E hanging (${PATHS_EXECUTIONS} each on ${PATHS} paths of one host)`, withDE),
    ]));
    const result = {
      aloneP50Ms: Math.round(pct(alone, 50)), hangingP50Ms: Math.round(pct(withB, 50)), hangingMaxMs: Math.round(withB.at(-1)),
      ratioP50: Number((pct(withB, 50) / pct(alone, 50)).toFixed(2)), bRequestsSent: bSent,
      pathsHangingP50Ms: Math.round(pct(withDE, 50)), pathsHangingMaxMs: Math.round(withDE.at(-1)), dRequestsSent: deSent[0], eRequestsSent: deSent[1],
      stalledDeliveriesSent: stalling.arrived.size, stalledSocketsOpenAfterTimeout: stalledOpen,
    };
    console.log(`WEBHOOKS_FAIRNESS ${JSON.stringify(result)}`);
    return result.hangingMaxMs <= 10_000 && result.pathsHangingMaxMs <= 10_000 && stalledOpen <= 5;
  } finally {
    await server.stop();
    await cleanup(server);
    await Promise.all([answering.close(), hanging.close(), stalling.close(), hangingD.close(), hangingE.close()]);
  }
}

process.exitCode = (await run()) ? 0 : 1;
