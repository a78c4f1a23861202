/**
 * `npm run bench:flood`: one token floods the server with credentials it has never seen, while another token executes
 * a credential the server has verified before and a prober reads `/health/live`. Does a flood of cold verifications
 * hold up the rest of the service?
 *
 * The real server (bench/server.mjs on SQLite in a temp DATA_DIR, DEMO_ISSUER=1, strict credential verification) with
 * two operator tokens (API_TOKENS), and one scenario (the HTTP bench's 5 IDInformation rules), then for
 * BENCH_FLOOD_SECONDS (20), all at once:
 *
 *   attacker  BENCH_FLOOD_ATTACKERS (4) loops, each POSTing executes of BENCH_FLOOD_CREDENTIALS (100) forged credentials
 *             one after the other: copies of a genuine demo credential with a new id and one credentialSubject value
 *             changed, so that each is new to the server and its signature no longer matches its content.
 *   victim    BENCH_FLOOD_VICTIM_CONNECTIONS (2) loops executing one genuine credential (verified once before the
 *             flood, so warm), measuring latency.
 *   prober    GET /health/live every BENCH_FLOOD_PROBE_MS (100) ms, each with a timeout of
 *             BENCH_FLOOD_PROBE_TIMEOUT_MS (1000, a Kubernetes probe's default), measuring latency and failures.
 *
 * Before the flood the victim runs alone for BENCH_FLOOD_BASELINE_SECONDS (3): its latency without the attack, for
 * comparison (no goal). When the flood ends no new request starts; attacker requests still in flight get
 * BENCH_FLOOD_DRAIN_SECONDS (10) to be answered, then are aborted (reported as unanswered).
 *
 * Goals (exit 1 on a miss): the victim's p99 <= 100 ms with no non-2xx (an error or a 10 s timeout counts as one),
 * every probe answered 200 in time, and the attacker's requests answered 4xx, 503 or 200 with verdicts: never another
 * 5xx, never a result with is_valid: true.
 *
 * All traffic goes to 127.0.0.1. The server's rate limit is the bench's (RATE_LIMIT_MAX=100000000, so that the
 * victim's loop is never answered 429); BENCH_FLOOD_RATE_LIMIT_MAX sets another (the service's default is 6000 a
 * minute per token). BENCH_JSON: a file to write the figures to.
 */
import fs from 'node:fs';
import os from 'node:os';
import { ADDRESS, demoIdCredentials, forgeTemplate, httpScenario, TOKEN } from './fixtures.mjs';
import { cleanup, cpuSince, cpuSnapshot, createScenario, describeRun, envNumber, fmt, sleep, startServer, table } from './lib.mjs';

const SECONDS = envNumber('BENCH_FLOOD_SECONDS', 20);
const ATTACKERS = Math.floor(envNumber('BENCH_FLOOD_ATTACKERS', 4));
const PER_REQUEST = Math.floor(envNumber('BENCH_FLOOD_CREDENTIALS', 100));
const VICTIM_CONNECTIONS = Math.floor(envNumber('BENCH_FLOOD_VICTIM_CONNECTIONS', 2));
const PROBE_MS = envNumber('BENCH_FLOOD_PROBE_MS', 100);
const PROBE_TIMEOUT_MS = envNumber('BENCH_FLOOD_PROBE_TIMEOUT_MS', 1000);
const BASELINE_SECONDS = envNumber('BENCH_FLOOD_BASELINE_SECONDS', 3);
const DRAIN_SECONDS = envNumber('BENCH_FLOOD_DRAIN_SECONDS', 10);
const VICTIM_TIMEOUT_MS = 10_000;
const RATE_LIMIT_MAX = process.env.BENCH_FLOOD_RATE_LIMIT_MAX?.trim();

const GOALS = { victimP99: 100 };

/** The attacker's own token: at least 16 printable characters, an operator token like the victim's. */
const ATTACKER_TOKEN = 'bench-attacker-0123456789abcdef01';
const SCENARIO_ID = 'bench-flood';
const headers = (token) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });

const pct = (sorted, q) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]);
const latencyStats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { n: s.length, p50: pct(s, 0.5), p99: pct(s, 0.99), max: s.at(-1) ?? NaN };
};
const bump = (o, k) => {
  o[k] = (o[k] ?? 0) + 1;
};

/** A POST/GET with a timeout (and an outside abort): {status, text, ms}; status is 'timeout', 'aborted' or 'error: ...' without an answer. */
async function send(url, init, timeoutMs, abort) {
  const t0 = performance.now();
  const signals = [AbortSignal.timeout(timeoutMs)];
  if (abort) signals.push(abort);
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.any(signals) });
    const text = await res.text();
    return { status: res.status, text, ms: performance.now() - t0 };
  } catch (e) {
    const ms = performance.now() - t0;
    if (abort?.aborted) return { status: 'aborted', text: '', ms };
    if (e?.name === 'TimeoutError' || ms >= timeoutMs) return { status: 'timeout', text: '', ms };
    return { status: `error: ${e?.cause?.code ?? e?.message ?? e}`, text: '', ms };
  }
}

/** Results of an execute answer: how many, how many valid (is_valid: true). */
function verdicts(text) {
  try {
    const results = JSON.parse(text);
    if (!Array.isArray(results)) return { results: 0, valid: 0, parsed: false };
    const valid = results.filter((x) => x?.result?.result?.is_valid === true || x?.result?.status === 'valid').length;
    return { results: results.length, valid, parsed: true };
  } catch {
    return { results: 0, valid: 0, parsed: false };
  }
}

async function victimLoop(url, body, until, out) {
  while (performance.now() < until) {
    const r = await send(url, { method: 'POST', headers: headers(TOKEN), body }, VICTIM_TIMEOUT_MS);
    out.latencies.push(r.ms);
    bump(out.codes, r.status);
    const good = typeof r.status === 'number' && r.status >= 200 && r.status < 300;
    if (!good) {
      out.bad++;
      if (out.examples.length < 3) out.examples.push(`${r.status} ${r.text.slice(0, 300)}`);
    } else {
      const v = verdicts(r.text);
      if (!(v.results === 5 && v.valid === 5)) {
        out.notValid++;
        if (out.examples.length < 3) out.examples.push(`${r.status} with ${v.valid}/${v.results} valid: ${r.text.slice(0, 300)}`);
      }
    }
  }
}

async function attackerLoop(url, forge, counter, until, abort, out) {
  while (performance.now() < until && !abort.aborted) {
    const parts = new Array(PER_REQUEST);
    for (let i = 0; i < PER_REQUEST; i++) parts[i] = forge(counter.next++);
    const body = `{"address":${JSON.stringify(ADDRESS)},"scenarioId":${JSON.stringify(SCENARIO_ID)},"credentials":[${parts.join(',')}]}`;
    out.sent++;
    out.credentialsSent += PER_REQUEST;
    const r = await send(url, { method: 'POST', headers: headers(ATTACKER_TOKEN), body }, 3_600_000, abort);
    bump(out.codes, r.status);
    if (r.status === 'aborted') {
      out.unanswered++;
      continue;
    }
    out.latencies.push(r.ms);
    if (typeof r.status !== 'number') {
      out.transportErrors++;
      if (out.examples.length < 3) out.examples.push(String(r.status));
    } else if (r.status >= 500 && r.status !== 503) {
      out.bad5xx++;
      if (out.examples.length < 3) out.examples.push(`${r.status} ${r.text.slice(0, 300)}`);
    } else if (r.status >= 200 && r.status < 300) {
      const v = verdicts(r.text);
      out.answeredWithVerdicts++;
      out.credentialsJudged += PER_REQUEST;
      out.validResults += v.valid;
      if (!v.parsed && out.examples.length < 3) out.examples.push(`${r.status} not a result array: ${r.text.slice(0, 300)}`);
    } else if (r.status !== 503 && !(r.status >= 400 && r.status < 500)) {
      out.other++;
    }
  }
}

async function proberLoop(url, until, out) {
  while (performance.now() < until) {
    const t0 = performance.now();
    const r = await send(url, { method: 'GET' }, PROBE_TIMEOUT_MS);
    out.latencies.push(r.ms);
    if (r.status !== 200) {
      out.failures++;
      bump(out.codes, r.status);
      if (out.examples.length < 3) out.examples.push(`${r.status} after ${fmt(r.ms)} ms ${r.text.slice(0, 200)}`);
    }
    const wait = t0 + PROBE_MS - performance.now();
    if (wait > 0) await sleep(Math.min(wait, Math.max(0, until - performance.now())));
  }
}

async function run() {
  const { credentials: genuine, issuer } = await demoIdCredentials();
  const target = { kind: 'sqlite' }; // the flood is about CPU, not the store
  const env = {
    CREDENTIAL_VERIFICATION: 'strict',
    DEMO_ISSUER: '1',
    API_TOKENS: `${TOKEN},${ATTACKER_TOKEN}`,
    ...(RATE_LIMIT_MAX ? { RATE_LIMIT_MAX } : {}),
  };
  const server = await startServer(target, { env });
  const checks = [];
  const check = (name, pass, detail) => checks.push({ name, pass, detail });
  const res = { seconds: SECONDS, attackers: ATTACKERS, perRequest: PER_REQUEST, victimConnections: VICTIM_CONNECTIONS, checks };
  try {
    await createScenario(server, SCENARIO_ID, httpScenario('Bench flood'));
    const executeUrl = `${server.base}/compliance/scenarios/execute`;
    const liveUrl = `${server.base}/health/live`;
    const victimBody = JSON.stringify({ address: ADDRESS, scenarioId: SCENARIO_ID, credentials: [genuine[0]] });

    // The victim's credential, verified once (cold), then warm; the attacker's token answers too.
    for (const [who, token] of [['victim', TOKEN], ['attacker', ATTACKER_TOKEN]]) {
      const r = await send(executeUrl, { method: 'POST', headers: headers(token), body: victimBody }, 60_000);
      const v = verdicts(r.text);
      if (r.status !== 200 || v.valid !== 5) throw new Error(`pre-flight (${who} token): ${r.status} ${r.text.slice(0, 1000)}`);
    }
    const forge = forgeTemplate(genuine[1]);
    {
      // One forged credential alone: refused, never valid.
      const r = await send(executeUrl, { method: 'POST', headers: headers(ATTACKER_TOKEN), body: `{"address":"${ADDRESS}","scenarioId":"${SCENARIO_ID}","credentials":[${forge(0)}]}` }, 60_000);
      const v = verdicts(r.text);
      if (r.status !== 200 || v.valid !== 0 || v.results !== 5) throw new Error(`pre-flight forged credential: ${r.status} ${r.text.slice(0, 1000)}`);
    }
    console.log(`  demo issuer ${issuer}; victim body ${Buffer.byteLength(victimBody)} bytes (1 credential); attacker body ~${fmt(PER_REQUEST * forge(1).length / 1024)} KB (${PER_REQUEST} forged credentials)`);

    // The victim alone.
    const alone = { latencies: [], codes: {}, bad: 0, notValid: 0, examples: [] };
    {
      const until = performance.now() + BASELINE_SECONDS * 1000;
      const snap = cpuSnapshot(server.pid);
      await Promise.all(Array.from({ length: VICTIM_CONNECTIONS }, () => victimLoop(executeUrl, victimBody, until, alone)));
      const cpu = cpuSince(snap, server.pid);
      res.alone = { ...latencyStats(alone.latencies), rps: alone.latencies.length / BASELINE_SECONDS, codes: alone.codes, serverCores: cpu.serverCores };
      console.log(`  victim alone, ${BASELINE_SECONDS} s at ${VICTIM_CONNECTIONS} connection(s): ${fmt(res.alone.rps)} req/s, p50 ${fmt(res.alone.p50, 1)} ms, p99 ${fmt(res.alone.p99, 1)} ms, max ${fmt(res.alone.max, 1)} ms; codes ${JSON.stringify(alone.codes)}`);
    }
    await sleep(500);

    // The flood.
    const victim = { latencies: [], codes: {}, bad: 0, notValid: 0, examples: [] };
    const attacker = { sent: 0, credentialsSent: 0, credentialsJudged: 0, answeredWithVerdicts: 0, validResults: 0, bad5xx: 0, transportErrors: 0, other: 0, unanswered: 0, latencies: [], codes: {}, examples: [] };
    const prober = { latencies: [], failures: 0, codes: {}, examples: [] };
    const abort = new AbortController();
    const counter = { next: 1 };
    const snap = cpuSnapshot(server.pid);
    const start = performance.now();
    const until = start + SECONDS * 1000;
    const attackers = Array.from({ length: ATTACKERS }, () => attackerLoop(executeUrl, forge, counter, until, abort.signal, attacker));
    const others = [
      ...Array.from({ length: VICTIM_CONNECTIONS }, () => victimLoop(executeUrl, victimBody, until, victim)),
      proberLoop(liveUrl, until, prober),
    ];
    await Promise.all(others);
    const windowCpu = cpuSince(snap, server.pid);
    const windowSeconds = (performance.now() - start) / 1000;
    // The attacker's requests in flight: a while to be answered, then aborted.
    const drained = await Promise.race([Promise.all(attackers).then(() => true), sleep(DRAIN_SECONDS * 1000).then(() => false)]);
    if (!drained) abort.abort();
    await Promise.all(attackers);
    const totalCpu = cpuSince(snap, server.pid);

    res.victim = { ...latencyStats(victim.latencies), rps: victim.latencies.length / windowSeconds, codes: victim.codes, bad: victim.bad, notValid: victim.notValid, examples: victim.examples };
    res.prober = { ...latencyStats(prober.latencies), failures: prober.failures, codes: prober.codes, examples: prober.examples };
    res.attacker = { ...attacker, latencies: undefined, ...latencyStats(attacker.latencies) };
    res.server = {
      windowSeconds,
      cores: windowCpu.serverCores,
      cpuSeconds: windowCpu.serverUs / 1e6,
      cpuSecondsWithDrain: totalCpu.serverUs / 1e6,
      loadgenCores: windowCpu.loadgenCores,
      otherCores: windowCpu.otherCores,
    };

    console.log(`\n### Flood: ${fmt(windowSeconds, 1)} s, ${ATTACKERS} attacker loop(s) x ${PER_REQUEST} forged credentials per execute, victim at ${VICTIM_CONNECTIONS} connection(s), /health/live every ${PROBE_MS} ms\n`);
    console.log(table(['who', 'requests', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'status codes'], [
      ['victim alone (before the flood)', res.alone.n, fmt(res.alone.rps), fmt(res.alone.p50, 1), fmt(res.alone.p99, 1), fmt(res.alone.max, 1), JSON.stringify(res.alone.codes)],
      ['victim (warm execute, 1 credential)', res.victim.n, fmt(res.victim.rps), fmt(res.victim.p50, 1), fmt(res.victim.p99, 1), fmt(res.victim.max, 1), JSON.stringify(victim.codes)],
      ['prober (GET /health/live)', res.prober.n, fmt(res.prober.n / windowSeconds, 1), fmt(res.prober.p50, 1), fmt(res.prober.p99, 1), fmt(res.prober.max, 1), prober.failures ? JSON.stringify(prober.codes) : 'all 200'],
      [`attacker (${PER_REQUEST} forged credentials each)`, `${attacker.sent} sent`, fmt(attacker.latencies.length / windowSeconds, 2), fmt(res.attacker.p50, 1), fmt(res.attacker.p99, 1), fmt(res.attacker.max, 1), JSON.stringify(attacker.codes)],
    ]));
    console.log(`\n  attacker: ${attacker.sent} executes sent (${fmt(attacker.credentialsSent)} forged credentials), ${attacker.answeredWithVerdicts} answered with verdicts (${fmt(attacker.credentialsJudged)} credentials judged), ${attacker.unanswered} unanswered ${DRAIN_SECONDS} s after the end (aborted), ${attacker.validResults} results with is_valid: true`);
    console.log(`  server: ${fmt(res.server.cores, 2)} cores over the flood (${fmt(res.server.cpuSeconds, 1)} s of CPU; ${fmt(res.server.cpuSecondsWithDrain, 1)} s with the drain), load generator ${fmt(res.server.loadgenCores, 2)} cores, other processes ${fmt(res.server.otherCores, 2)}`);
    for (const e of victim.examples) console.log(`  victim e.g.: ${e}`);
    for (const e of prober.examples) console.log(`  prober e.g.: ${e}`);
    for (const e of attacker.examples) console.log(`  attacker e.g.: ${e}`);

    check(`victim (another token, warm execute) p99 <= ${GOALS.victimP99} ms during the flood`, res.victim.n > 0 && res.victim.p99 <= GOALS.victimP99,
      `${fmt(res.victim.p99, 1)} ms over ${res.victim.n} requests (p50 ${fmt(res.victim.p50, 1)}, max ${fmt(res.victim.max, 1)}; alone: p99 ${fmt(res.alone.p99, 1)} ms)`);
    check('victim: no non-2xx (nor error or timeout), every answer 5 valid results', victim.bad === 0 && victim.notValid === 0 && res.victim.n > 0,
      `${victim.bad} non-2xx, ${victim.notValid} 2xx not all valid, of ${res.victim.n}: ${JSON.stringify(victim.codes)}`);
    check(`/health/live never fails (200 within ${PROBE_TIMEOUT_MS} ms)`, prober.failures === 0 && res.prober.n > 0,
      `${prober.failures} failures of ${res.prober.n} probes${prober.failures ? ` ${JSON.stringify(prober.codes)}` : ''}; max latency ${fmt(res.prober.max, 1)} ms`);
    check('attacker: answered 4xx, 503 or verdicts, never another 5xx or a transport error', attacker.bad5xx === 0 && attacker.transportErrors === 0 && attacker.other === 0,
      `${JSON.stringify(attacker.codes)} (${attacker.unanswered} unanswered at the end, aborted by the bench)`);
    check('attacker: never a result with is_valid: true', attacker.validResults === 0, `${attacker.validResults} valid results in ${attacker.answeredWithVerdicts} answers with verdicts`);
  } finally {
    await server.stop();
    await cleanup(server).catch(() => {});
  }
  return res;
}

console.log(describeRun());
console.log(`BENCH_FLOOD_SECONDS=${SECONDS} BENCH_FLOOD_ATTACKERS=${ATTACKERS} BENCH_FLOOD_CREDENTIALS=${PER_REQUEST} BENCH_FLOOD_VICTIM_CONNECTIONS=${VICTIM_CONNECTIONS} BENCH_FLOOD_PROBE_MS=${PROBE_MS} BENCH_FLOOD_PROBE_TIMEOUT_MS=${PROBE_TIMEOUT_MS}${RATE_LIMIT_MAX ? ` RATE_LIMIT_MAX=${RATE_LIMIT_MAX}` : ''}`);
console.log('load generator (fetch) in this process, the server in a child process (WORKERS=' + (process.env.WORKERS?.trim() || '1') + '); both share the machine');
let res;
try {
  res = await run();
} catch (err) {
  console.error(`FAIL  flood: ${err.stack ?? err}`);
  process.exit(1);
}
console.log('');
for (const c of res.checks) console.log(`  ${c.pass ? 'PASS' : 'FAIL'}  ${c.name}: ${c.detail}`);
console.log(`\nload average at the end: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
if (process.env.BENCH_JSON) fs.writeFileSync(process.env.BENCH_JSON, JSON.stringify(res, null, 2));
const missed = res.checks.filter((c) => !c.pass);
if (missed.length > 0) {
  console.log(`\nGoals missed:\n${missed.map((c) => `  - ${c.name} (${c.detail})`).join('\n')}`);
  process.exit(1);
}
console.log('\nAll goals met.');
