/**
 * `npm run bench:refusals`: what it costs the server to refuse bodies that fail in thousands of places (issue 25: a
 * 32 KB execute body of 16,000 numbers took 13 s of the event loop), against a small 400 measured in the same run, and
 * whether `/health/live` keeps answering while such bodies are refused.
 *
 * The real server (bench/server.mjs on SQLite in a temp DATA_DIR, CREDENTIAL_VERIFICATION=off: no body here gets as far
 * as a credential), with load shedding off (MAX_EVENT_LOOP_DELAY_MS=0: every body is really parsed, validated and
 * refused, instead of some being answered 503 early) and the bench's rate limit.
 *
 *   1. Per body, one at a time: BENCH_REFUSAL_REPEAT (20) requests after 2 unmeasured ones. Reported: status, answer
 *      size, field errors listed and errorsTruncated, the server's CPU time per request (from /proc: all its threads,
 *      the garbage collector's included) and the client's wall latency (median, max), each also as a multiple of
 *      the baseline's (a small execute body with one wrong credential: the cost of any 400).
 *   2. BENCH_REFUSAL_SECONDS (10): BENCH_REFUSAL_SENDERS (2) loops sending the worst bodies in turn, back to back,
 *      while a prober GETs /health/live every BENCH_REFUSAL_PROBE_MS (50) ms with a timeout of 500 ms.
 *
 * Goals (exit 1 on a miss): each body refused with a 400 listing at most 20 field errors (errorsTruncated when it
 * fails in more places); the server's CPU time per refusal <= 100 ms (the wall latency is reported, not a goal: on a
 * shared machine it is mostly waiting for a core, and it includes the client making and sending 1 MB); every probe
 * answered 200 within 500 ms. All traffic goes to 127.0.0.1. BENCH_JSON: a file to write the figures to.
 */
import fs from 'node:fs';
import { ADDRESS, TOKEN } from './fixtures.mjs';
import { cleanup, createScenario, describeRun, envNumber, fmt, processTreeCpuUs, sleep, startServer, table } from './lib.mjs';

const REPEAT = Math.floor(envNumber('BENCH_REFUSAL_REPEAT', 20));
const SECONDS = envNumber('BENCH_REFUSAL_SECONDS', 10);
const SENDERS = Math.floor(envNumber('BENCH_REFUSAL_SENDERS', 2));
const PROBE_MS = envNumber('BENCH_REFUSAL_PROBE_MS', 50);
const GOALS = { refusalMs: 100, probeMs: 500, maxErrors: 20 };

const list = (item, n) => `[${Array(n).fill(item).join(',')}]`;
const scenario = (rules, more = '') => `{"name":"N","type":"ChallengeQuery","smartContractDeployments":[],"queryConfigurations":${rules}${more}}`;
const rule = (value) => `{"id":"q","query":{"type":"IDInformation","attribute":"reviewAnswer","operator":"$in","value":${value}}}`;
/** n items of `item` that fit in `bytes` with the text around them. */
const fill = (item, bytes) => Math.floor(bytes / (item.length + 1));
const MB = 1000 * 1000; // under BODY_LIMIT (1 MiB) with what surrounds the list

const BODIES = [
  ['baseline: execute, 1 wrong credential', 'POST', '/compliance/scenarios/execute', `{"address":"${ADDRESS}","scenarioId":"s","credentials":[1]}`],
  ['execute, 16,000 numbers as credentials', 'POST', '/compliance/scenarios/execute', `{"address":"${ADDRESS}","scenarioId":"s","credentials":${list('1', 16_000)}}`],
  ['execute, credentials of 1 MB of numbers', 'POST', '/compliance/scenarios/execute', `{"address":"${ADDRESS}","scenarioId":"s","credentials":${list('1', fill('1', MB))}}`],
  ['create, 16,000 numbers as rules', 'POST', '/compliance/scenarios', `{"input":${scenario(list('1', 16_000))}}`],
  ['create, $in list of 16,000 true', 'POST', '/compliance/scenarios', `{"input":${scenario(`[${rule(list('true', 16_000))}]`)}}`],
  ['PATCH, $in list of 16,000 true', 'PATCH', '/compliance/scenarios/s', `{"input":{"queryConfigurations":[${rule(list('true', 16_000))}]}}`],
  ['PATCH, $in list of 1 MB of true', 'PATCH', '/compliance/scenarios/s', `{"input":{"queryConfigurations":[${rule(list('true', fill('true', MB)))}]}}`],
  ['create, 256 rules x 256 true (within maxItems)', 'POST', '/compliance/scenarios', `{"input":${scenario(list(rule(list('true', 256)), 256))}}`],
  ['create, 1 MB of unknown fields', 'POST', '/compliance/scenarios', `{"input":{${Array.from({ length: fill('"k100000":1', MB) }, (_, i) => `"k${i}":1`).join(',')}}}`],
  ['create, 980 KB of 1e-400', 'POST', '/compliance/scenarios', `{"input":${scenario(`[${rule(list('1e-400', 140_000))}]`)}}`],
  ['create, 1 MB of exact exponents, one 1e-400 last', 'POST', '/compliance/scenarios',
    `{"input":${scenario(`[${rule(`[${Array.from({ length: fill('9.5e-90', MB) }, (_, i) => `${(i % 9) + 1}.5e-${(i % 90) + 1}`).join(',')},1e-400]`)}]`)}}`],
  ['create, 1 MB of "\\u0000" strings', 'POST', '/compliance/scenarios', `{"input":${scenario('[]', `,"vcsIncluded":${list('"\\u0000"', fill('"\\u0000"', MB))}`)}}`],
];

const headersFor = (method) => ({
  authorization: `Bearer ${TOKEN}`,
  'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
});

async function send(base, [, method, url, body], timeoutMs = 30_000) {
  const t0 = performance.now();
  try {
    const res = await fetch(base + url, { method, headers: headersFor(method), body, signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    return { status: res.status, text, ms: performance.now() - t0 };
  } catch (e) {
    return { status: `error: ${e?.name ?? e}`, text: '', ms: performance.now() - t0 };
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const pct = (sorted, q) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]);

/** One body, REPEAT times one after the other: the server's CPU time per request, wall latencies, the last answer. */
async function measure(server, body) {
  for (let i = 0; i < 2; i++) await send(server.base, body);
  const walls = [];
  let last;
  const cpu0 = processTreeCpuUs(server.pid);
  for (let i = 0; i < REPEAT; i++) {
    last = await send(server.base, body);
    walls.push(last.ms);
  }
  const cpuMs = (processTreeCpuUs(server.pid) - cpu0) / 1000 / REPEAT;
  let problem = {};
  try {
    problem = JSON.parse(last.text);
  } catch {
    // reported below as an answer that is not a problem
  }
  return { cpuMs, wallMs: median(walls), wallMaxMs: Math.max(...walls), status: last.status, bytes: last.text.length, problem };
}

/** SENDERS loops sending the bodies (baseline excluded) in turn for SECONDS while a prober reads /health/live. */
async function underFire(server) {
  const bodies = BODIES.slice(1);
  const probes = [];
  const statuses = {};
  let sent = 0;
  const end = Date.now() + SECONDS * 1000;
  const senders = Array.from({ length: SENDERS }, async (_, k) => {
    for (let i = k; Date.now() < end; i++) {
      const r = await send(server.base, bodies[i % bodies.length]);
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      sent++;
    }
  });
  const prober = (async () => {
    while (Date.now() < end) {
      const t0 = performance.now();
      const r = await send(server.base, [null, 'GET', '/health/live', undefined], GOALS.probeMs);
      probes.push({ ok: r.status === 200 && r.ms <= GOALS.probeMs, ms: r.ms });
      await sleep(Math.max(0, PROBE_MS - (performance.now() - t0)));
    }
  })();
  await Promise.all([...senders, prober]);
  const ms = probes.map((p) => p.ms).sort((a, b) => a - b);
  return { sent, statuses, probes: probes.length, failed: probes.filter((p) => !p.ok).length, p50: pct(ms, 0.5), p99: pct(ms, 0.99), max: ms.at(-1) };
}

console.log(describeRun());
const server = await startServer({ kind: 'sqlite' }, { env: { CREDENTIAL_VERIFICATION: 'off', MAX_EVENT_LOOP_DELAY_MS: '0' } });
const misses = [];
try {
  await createScenario(server, 's', JSON.parse(scenario(`[${rule('["x"]')}]`)));
  const rows = [];
  const figures = [];
  let base;
  for (const body of BODIES) {
    const m = await measure(server, body);
    base ??= m;
    const errors = m.problem.errors?.length ?? 0;
    figures.push({ body: body[0], bytesSent: body[3].length, ...m, problem: undefined, errors, errorsTruncated: m.problem.errorsTruncated === true });
    rows.push([body[0], fmt(body[3].length / 1000, 1), m.status, fmt(m.bytes), `${errors}${m.problem.errorsTruncated ? '+' : ''}`,
      fmt(m.cpuMs, 1), `${fmt(m.cpuMs / base.cpuMs, 1)}x`, fmt(m.wallMs, 1), `${fmt(m.wallMs / base.wallMs, 1)}x`, fmt(m.wallMaxMs, 1)]);
    if (m.status !== 400) misses.push(`${body[0]}: answered ${m.status}, not 400`);
    if (errors > GOALS.maxErrors) misses.push(`${body[0]}: ${errors} field errors listed (goal <= ${GOALS.maxErrors})`);
    if (m.cpuMs > GOALS.refusalMs) misses.push(`${body[0]}: ${fmt(m.cpuMs, 1)} ms of server CPU per refusal (goal <= ${GOALS.refusalMs})`);
  }
  console.log(`\nRefusals, one at a time (${REPEAT} each; "+" = errorsTruncated):\n`);
  console.log(table(['body', 'KB sent', 'status', 'bytes answered', 'errors', 'CPU ms/req', 'x baseline', 'wall p50 ms', 'x baseline', 'wall max ms'], rows));

  const fire = await underFire(server);
  console.log(`\n/health/live every ${PROBE_MS} ms while ${SENDERS} loops send those bodies for ${SECONDS} s (${fire.sent} sent, statuses ${JSON.stringify(fire.statuses)}):`);
  console.log(`  ${fire.probes} probes, ${fire.failed} failed or over ${GOALS.probeMs} ms; p50 ${fmt(fire.p50, 1)} ms, p99 ${fmt(fire.p99, 1)} ms, max ${fmt(fire.max, 1)} ms`);
  if (fire.failed > 0) misses.push(`/health/live: ${fire.failed} of ${fire.probes} probes failed or took over ${GOALS.probeMs} ms`);
  for (const status of Object.keys(fire.statuses)) if (status !== '400') misses.push(`under fire: ${fire.statuses[status]} answers ${status}, not 400`);
  if (process.env.BENCH_JSON) fs.writeFileSync(process.env.BENCH_JSON, JSON.stringify({ run: describeRun(), figures, underFire: fire }, null, 2));
} finally {
  await server.stop();
  await cleanup(server);
}
console.log(misses.length === 0 ? '\nPASS: every body refused within the goals' : `\nFAIL:\n  ${misses.join('\n  ')}`);
process.exitCode = misses.length === 0 ? 0 : 1;
