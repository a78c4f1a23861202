/**
 * `npm run bench:engine`: the rule engine alone, from dist/.
 *
 * 1. The bench scenario (5 rules of mixed operators: string $eq, number $gte, string $nin, number $between,
 *    ISO date $lt) on 3 credentials: compilePlan once, then runPlan per evaluation, against json-rules-engine 7 on
 *    the same rules and credentials. Results are cross-checked equal (valid / not valid per rule) on several
 *    credential sets, failing ones included. Prints ns per 5-rule evaluation for both and the ratio.
 *    Goals: <= 300 ns per evaluation and >= 100x faster than json-rules-engine; exits 1 on a miss.
 * 2. Cost growth: runPlan time for 1, 10, 100 rules x 1, 10, 50 credentials, as Markdown tables.
 * 3. For reference, the other per-request costs of execute measured the same way (address checksum, credential
 *    digests for the audit log, serialising the results for the audit row, parsing the body).
 * 4. Cold verification of one credential: the CPU time of one `verify` of a demo credential this process has never
 *    seen (process.cpuUsage around it; median over ENGINE_COLD_CREDENTIALS fresh credentials, after
 *    ENGINE_COLD_WARMUP others), with `createCredentialVerifier({...options, threads: 0}, deps)` (threads: 0 checks on
 *    the calling thread, so that all the work is in this process's CPU time; before the cold verification pool the
 *    option is ignored), side by side with @0xpolygonid/js-sdk's own W3CCredential.verifyProof plus its revocation
 *    check on the same credentials, in a child process (bench/jssdk-verify.mjs says why). Cross-checked: both accept
 *    every measured credential, both refuse a forged one and a revoked one.
 *    Goals: <= 25 ms of CPU per credential and >= 8x faster than js-sdk; exits 1 on a miss.
 *
 * Environment: ENGINE_BENCH_MS (length of a measurement round, default 5), ENGINE_BENCH_ROUNDS (default 200),
 * ENGINE_BENCH_CLOCK (wall, the default, or cpu). Each figure is the fastest round (see measure below).
 * ENGINE_COLD_CREDENTIALS (30), ENGINE_COLD_WARMUP (20: a server verifies many; the JIT settles over the first tens),
 * 5. The same for Iden3SparseMerkleTreeProof-only credentials against js-sdk's verifyProof for that type (bench/cold-mtp.mjs).
 *    Goals: <= 25 ms of CPU per credential and >= 8x faster than js-sdk; exits 1 on a miss.
 * ENGINE_ONLY=cold (sections 4 and 5 only), ENGINE_ONLY=mtp (section 5 only).
 */
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import jre from 'json-rules-engine';
import { challengeQueryEvaluator, compilePlan, runPlan } from '../dist/engine/index.js';
import { ADDRESS, credential, credentials, DEMO_STATUS_URL, demoIdCredentials, executeBody, forged, freshIdCredentials, RULES, scenario } from './fixtures.mjs';
import { describeRun, fmt, table } from './lib.mjs';
import { coldMtp, reportColdMtp } from './cold-mtp.mjs';

const { Engine } = jre;
/** The engine's compile step for ChallengeQuery, as its module declares it (src/execution/registry.ts hands it in). */
const TYPES = { evaluators: { ChallengeQuery: challengeQueryEvaluator } };
const ROUND_MS = Number(process.env.ENGINE_BENCH_MS ?? 5);
const ROUNDS = Number(process.env.ENGINE_BENCH_ROUNDS ?? 200);
const GOAL_NS = 300;
const GOAL_RATIO = 100;
const GOAL_COLD_MS = 25;
const GOAL_COLD_RATIO = 8;
const COLD_CREDENTIALS = Math.max(1, Math.floor(Number(process.env.ENGINE_COLD_CREDENTIALS ?? 30)));
const COLD_WARMUP = Math.max(1, Math.floor(Number(process.env.ENGINE_COLD_WARMUP ?? 20)));
/** ENGINE_ONLY=cold: the cold verification sections alone (they take ~1 min: js-sdk is slow); =mtp: section 5 alone. */
const ONLY_COLD = process.env.ENGINE_ONLY?.trim() === 'cold';
const ONLY_MTP = process.env.ENGINE_ONLY?.trim() === 'mtp';
const NOW = Date.parse('2026-06-01T12:00:00Z');
const EXECUTION_ID = randomUUID();

let sink = 0; // keeps results alive so that nothing is optimised away

const median = (xs) => {
  const a = [...xs].sort((x, y) => x - y);
  return a.length % 2 ? a[(a.length - 1) / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
};

/**
 * How a figure is measured. This machine is shared (other processes take turns on its cores), so each figure is
 * the fastest of many short rounds: a round of ~ROUND_MS (5 ms) that ran without being preempted shows the cost of
 * the code itself, and with ROUNDS (200) rounds some do. The median of the rounds is kept too, to show the noise.
 * ENGINE_BENCH_CLOCK=cpu measures this process's CPU time instead of wall time (it then counts V8's GC threads).
 */
const CPU_CLOCK = process.env.ENGINE_BENCH_CLOCK === 'cpu';
const clockNs = CPU_CLOCK
  ? () => {
      const u = process.cpuUsage();
      return (u.user + u.system) * 1000;
    }
  : () => Number(process.hrtime.bigint());

const summary = (samples) => ({ min: Math.min(...samples), median: median(samples) });

/** ns per call of a synchronous fn: {min, median} over the rounds. */
function measure(fn) {
  let batch = 1;
  for (;;) {
    const t0 = clockNs();
    for (let i = 0; i < batch; i++) fn();
    if ((clockNs() - t0) / 1e6 >= ROUND_MS) break;
    batch *= 2;
  }
  for (let i = 0; i < batch * 20; i++) fn(); // warm-up: let the optimising compiler settle
  const samples = [];
  for (let r = 0; r < ROUNDS; r++) {
    const start = clockNs();
    for (let i = 0; i < batch; i++) fn();
    samples.push((clockNs() - start) / batch);
  }
  return summary(samples);
}

/** The same for an async fn (json-rules-engine), awaited one after the other. */
async function measureAsync(fn) {
  let batch = 1;
  for (;;) {
    const t0 = clockNs();
    for (let i = 0; i < batch; i++) await fn();
    if ((clockNs() - t0) / 1e6 >= ROUND_MS) break;
    batch *= 2;
  }
  for (let i = 0; i < batch * 5; i++) await fn();
  const samples = [];
  for (let r = 0; r < Math.max(20, ROUNDS / 4); r++) {
    const start = clockNs();
    for (let i = 0; i < batch; i++) await fn();
    samples.push((clockNs() - start) / batch);
  }
  return summary(samples);
}

// ---------------------------------------------------------------------------------------------------------------
// 4. Cold verification of one credential, side by side with js-sdk's own verifyProof (defined first so that
//    ENGINE_ONLY=cold can run it alone; it runs last otherwise).
// ---------------------------------------------------------------------------------------------------------------
const benchDir = path.dirname(fileURLToPath(import.meta.url));
const cpuMsNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** bench/jssdk-verify.mjs in a child process: call({op, ...}) answers its reply. */
function startJsSdk() {
  const child = fork(path.join(benchDir, 'jssdk-verify.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let next = 0;
  const waiting = new Map();
  let exited;
  const ready = new Promise((resolve, reject) => {
    child.on('message', (m) => {
      if (m.ready) return resolve();
      const w = waiting.get(m.id);
      if (w) {
        waiting.delete(m.id);
        w(m);
      }
    });
    child.once('exit', (code, signal) => {
      exited = `js-sdk child process exited (${code ?? signal})`;
      reject(new Error(exited));
      for (const w of waiting.values()) w({ ok: false, error: exited });
      waiting.clear();
    });
  });
  return {
    ready,
    call: (msg) => new Promise((resolve) => {
      if (exited) return resolve({ ok: false, error: exited });
      const id = ++next;
      waiting.set(id, resolve);
      child.send({ ...msg, id });
    }),
    close() {
      if (exited) return;
      child.send({ op: 'exit' });
      setTimeout(() => child.kill(), 5000).unref();
    },
  };
}

async function coldVerification() {
  const { createCredentialVerifier } = await import('../dist/trust/index.js');
  const { loadConfig } = await import('../dist/config.js');
  const { createDemoIssuer, demoStatusResolver } = await import('../dist/trust/demo-issuer.js');
  const N = COLD_CREDENTIALS;
  const W = COLD_WARMUP;
  // Warm-up, measured (server settings), measured (revocation cache off), one to revoke: all never seen here.
  const fresh = await freshIdCredentials(W + 2 * N + 1, { log: (m) => console.log(m) });
  const warmups = fresh.credentials.slice(0, W);
  const measured = fresh.credentials.slice(W, W + N);
  const measuredNoRevocationCache = fresh.credentials.slice(W + N, W + 2 * N);
  const toRevoke = fresh.credentials[W + 2 * N];
  const forgedOne = forged(measured[0]);

  // Statuses answered in process, as the server does with DEMO_ISSUER=1; a second instance revokes one nonce.
  const statuses = await createDemoIssuer({ statusUrl: DEMO_STATUS_URL });
  const revoking = await createDemoIssuer({ statusUrl: DEMO_STATUS_URL });
  const revokedNonce = toRevoke.credentialStatus.revocationNonce;
  await revoking.revoke(revokedNonce);
  const base = loadConfig({ CREDENTIAL_VERIFICATION: 'strict', TRUSTED_ISSUERS: fresh.issuer }).trust;
  const deps = (issuer) => ({ statusResolvers: { SparseMerkleTreeProof: demoStatusResolver(issuer) } });
  // threads: 0: every check on this thread, so that process.cpuUsage sees all of it (ignored before the pool existed).
  const verifiers = {
    server: createCredentialVerifier({ ...base, threads: 0 }, deps(statuses)),
    noRevocationCache: createCredentialVerifier({ ...base, threads: 0, revocationCacheMs: 0 }, deps(statuses)),
    revoking: createCredentialVerifier({ ...base, threads: 0 }, deps(revoking)),
  };
  const relevantTypes = new Set(['IDInformation']);
  const ours = async (verifier, c) => {
    const t0 = performance.now();
    const c0 = cpuMsNow();
    let verdict;
    try {
      [verdict] = await verifier.verify([c], { address: ADDRESS, now: Date.now(), relevantTypes, tenant: 'bench-engine' });
    } catch (e) {
      verdict = { ok: false, status: 'rejected', reason: `verify rejected: ${e?.message ?? e}` };
    }
    return { verdict, cpuMs: cpuMsNow() - c0, wallMs: performance.now() - t0 };
  };

  const js = startJsSdk();
  try {
    await js.ready;
    const r = await js.call({ op: 'revoke', nonce: revokedNonce });
    if (!r.ok) throw new Error(`js-sdk child: ${r.error}`);
    // Warm-up (JIT, lazy set-up, per-schema work), on credentials not measured afterwards.
    // The first one is reported apart: the first credential a process verifies pays for loading and compiling (the
    // service's warm() pays it at start, in each verification thread).
    let firstInProcess;
    for (const [i, c] of warmups.entries()) {
      const r = await ours(verifiers.server, c);
      if (i === 0) firstInProcess = r;
      await ours(verifiers.noRevocationCache, c);
      await ours(verifiers.revoking, c);
      if (i < 5) await js.call({ op: 'verify', credential: c });
    }
    // This service on every measured credential (it has never seen them), then js-sdk on the same ones (its process has
    // not seen them either). Not interleaved: js-sdk's ~0.5 s per credential in the other process would run into the
    // next measurement here (caches, the other core) and add its noise to this side's figures.
    const oursServer = [];
    for (const c of measured) oursServer.push(await ours(verifiers.server, c));
    const noCache = [];
    for (const c of measuredNoRevocationCache) noCache.push(await ours(verifiers.noRevocationCache, c));
    const pairs = [];
    for (let i = 0; i < measured.length; i++) pairs.push({ ours: oursServer[i], js: await js.call({ op: 'verify', credential: measured[i] }) });
    // What one in-process status answer of the demo issuer costs, here (this service's Poseidon) and in js-sdk's process.
    const statusOurs = [];
    const statusJs = [];
    for (const c of measured.slice(0, 5)) {
      const c0 = cpuMsNow();
      await statuses.status(c.credentialStatus.revocationNonce);
      statusOurs.push(cpuMsNow() - c0);
      statusJs.push((await js.call({ op: 'status', nonce: c.credentialStatus.revocationNonce })).cpuMs);
    }
    // Cross-checks: a forged credential (content changed after signing, new id) and a revoked one, refused by both.
    const forgedOurs = await ours(verifiers.server, forgedOne);
    const forgedJs = await js.call({ op: 'verify', credential: forgedOne });
    const revokedOurs = await ours(verifiers.revoking, toRevoke);
    const revokedJs = await js.call({ op: 'verify', credential: toRevoke, statuses: 'revoking' });
    // ... and refused for being revoked: with the other statuses both accept it.
    const unrevokedOurs = await ours(verifiers.noRevocationCache, toRevoke);
    const unrevokedJs = await js.call({ op: 'verify', credential: toRevoke });
    // How fast this machine is, in the unit the performance issue used: js-crypto's Poseidon of 2 inputs.
    const { referencePoseidon } = await import('../dist/trust/poseidon.js');
    const inputs = Array.from({ length: 1000 }, (_, i) => [BigInt(i) * 7919n + 1n, BigInt(i) * 104729n + 3n]);
    for (const x of inputs) referencePoseidon.hash(x);
    const t0 = performance.now();
    for (const x of inputs) referencePoseidon.hash(x);
    const poseidonUs = ((performance.now() - t0) * 1000) / inputs.length;
    // The service's own (fastHash: WebAssembly, not remembered) on distinct inputs of 2, 3 and 16 elements.
    const { fastHash } = await import('../dist/trust/poseidon.js');
    const fastUs = {};
    for (const n of [2, 3, 16]) {
      const xs = Array.from({ length: n === 16 ? 200 : 1000 }, (_, i) => Array.from({ length: n }, (_, k) => BigInt(i) * 7919n + BigInt(k) * 104729n + 3n));
      for (const x of xs.slice(0, 50)) fastHash(x);
      const t1 = performance.now();
      for (const x of xs) fastHash(x);
      fastUs[n] = ((performance.now() - t1) * 1000) / xs.length;
    }
    return {
      firstInProcess,
      poseidonUs,
      fastUs,
      issuer: fresh.issuer,
      fresh: { cached: fresh.cached, issued: fresh.issued, issueMs: fresh.issueMs, issueCpuMsPerCredential: fresh.issueCpuMsPerCredential, threads: fresh.threads, file: fresh.file },
      pairs,
      noCache,
      statusOurs,
      statusJs,
      forgedOurs,
      forgedJs,
      revokedOurs,
      revokedJs,
      unrevokedOurs,
      unrevokedJs,
      poseidonReplacedInJsSdk: Math.max(0, ...pairs.map((p) => p.js.poseidonReplaced ?? 0)),
    };
  } finally {
    js.close();
    for (const v of Object.values(verifiers)) await v.close?.();
  }
}

/** Prints section 4; answers its failures (goal misses and disagreements). */
function reportCold(cold) {
  const failures = [];
  console.log(`\nCold verification of one credential (demo issuer IDInformation, ~2.8 KB; each never seen by the process that verifies it; ${COLD_CREDENTIALS} credentials after ${COLD_WARMUP} warm-up ones; CPU time of the verifying process, process.cpuUsage):\n`);
  if (cold.error) {
    console.log(`  not measured: ${cold.error.stack ?? cold.error}`);
    failures.push(`cold verification not measured (${String(cold.error.message ?? cold.error).slice(0, 200)})`);
    console.log(`  FAIL  cold verification of one credential <= ${GOAL_COLD_MS} ms of CPU: not measured`);
    return failures;
  }
  const f = cold.fresh;
  console.log(`  fresh credentials: ${f.cached} from the cache${f.file ? ` (${f.file})` : ''}, ${f.issued} issued now${f.issued ? ` in ${fmt(f.issueMs / 1000, 1)} s with ${f.threads} thread(s), ${fmt(f.issueCpuMsPerCredential)} ms of CPU each` : ''}\n`);
  const stats = (xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });
  const oursCpu = stats(cold.pairs.map((p) => p.ours.cpuMs));
  const oursWall = stats(cold.pairs.map((p) => p.ours.wallMs));
  const jsCpu = stats(cold.pairs.map((p) => p.js.cpuMs));
  const jsWall = stats(cold.pairs.map((p) => p.js.wallMs));
  const ncCpu = stats(cold.noCache.map((p) => p.cpuMs));
  const ncWall = stats(cold.noCache.map((p) => p.wallMs));
  const ratio = jsCpu.median / oursCpu.median;
  const ratioNoCache = jsCpu.median / ncCpu.median;
  const row = (label, cpu, wall) => [label, `${fmt(cpu.median, 2)} (${fmt(cpu.min, 2)}-${fmt(cpu.max, 2)})`, fmt(wall.median, 2)];
  console.log(table(['verification of one credential', 'ms of CPU: median (min-max)', 'wall ms, median'], [
    row('this service: verify(), threads: 0, server settings (issuer key status cached)', oursCpu, oursWall),
    row('this service: verify(), threads: 0, revocation cache off (both statuses resolved)', ncCpu, ncWall),
    row('js-sdk 1.45.0: verifyProof(BJJSignature) + the credential\'s revocation status', jsCpu, jsWall),
    ['this service: the first credential of a new process (loading, compiling; warm() pays it at start)', fmt(cold.firstInProcess.cpuMs, 2), fmt(cold.firstInProcess.wallMs, 2)],
    ['demo issuer status answer, in process (this service\'s process / js-sdk\'s)', `${fmt(median(cold.statusOurs), 2)} / ${fmt(median(cold.statusJs), 2)}`, '-'],
    ['js-sdk / this service (CPU medians, same credentials)', `${fmt(ratio, 1)}x (revocation cache off: ${fmt(ratioNoCache, 1)}x)`, '-'],
  ]));
  console.log(`  machine: @iden3/js-crypto's Poseidon of 2 inputs takes ${fmt(cold.poseidonUs)} us here (the performance issue measured ~159 us on its machine); ` +
    `this service's (src/trust/poseidon-wasm.ts) of 2, 3 and 16 inputs: ${[2, 3, 16].map((n) => `${fmt(cold.fastUs[n], 1)} us`).join(', ')}`);
  console.log('  (this service resolves the credential\'s status, and the issuer key\'s unless cached; js-sdk resolves both every time.');
  console.log('   js-sdk ran in a child process with @iden3/js-crypto\'s own Poseidon; the service\'s verifier may replace it in its own thread.)');
  if (cold.poseidonReplacedInJsSdk > 0) console.log(`  note: something replaced js-crypto's Poseidon in js-sdk's process ${cold.poseidonReplacedInJsSdk} time(s); it was put back before each measurement`);

  const accepted = cold.pairs.filter((p) => p.ours.verdict.ok && p.js.ok).length;
  const disagreements = cold.pairs
    .map((p, i) => (p.ours.verdict.ok && p.js.ok ? undefined : `#${i + 1}: this service ${p.ours.verdict.ok ? 'ok' : `${p.ours.verdict.status}: ${p.ours.verdict.reason}`}; js-sdk ${p.js.ok ? 'ok' : p.js.error}`))
    .filter(Boolean);
  const say = (r) => (r.verdict ? (r.verdict.ok ? 'accepted' : `refused (${r.verdict.status}: ${r.verdict.reason})`) : r.ok ? 'accepted' : `refused (${r.error})`);
  console.log('');
  console.log(table(['cross-check', 'this service', 'js-sdk'], [
    [`${cold.pairs.length} genuine fresh credentials`, `${cold.pairs.filter((p) => p.ours.verdict.ok).length} accepted`, `${cold.pairs.filter((p) => p.js.ok).length} accepted`],
    ['forged (one subject value and the id changed after signing)', say(cold.forgedOurs), say(cold.forgedJs)],
    ['revoked (its nonce in the issuer\'s revocation tree)', say(cold.revokedOurs), say(cold.revokedJs)],
    ['the same credential, not revoked', say(cold.unrevokedOurs), say(cold.unrevokedJs)],
  ].map((r) => r.map((x) => String(x).slice(0, 160)))));
  for (const d of disagreements.slice(0, 5)) console.log(`  not accepted by both: ${d}`);
  const crossOk = accepted === cold.pairs.length &&
    !cold.forgedOurs.verdict.ok && !cold.forgedJs.ok &&
    !cold.revokedOurs.verdict.ok && !cold.revokedJs.ok &&
    cold.unrevokedOurs.verdict.ok && cold.unrevokedJs.ok;
  const cpuOk = oursCpu.median <= GOAL_COLD_MS;
  const ratioOk = ratio >= GOAL_COLD_RATIO;
  console.log('');
  console.log(`  ${crossOk ? 'PASS' : 'FAIL'}  cross-check: both accept the ${cold.pairs.length} genuine credentials (${accepted} did), both refuse the forged and the revoked one, both accept the latter unrevoked`);
  console.log(`  ${cpuOk ? 'PASS' : 'FAIL'}  cold verification of one demo credential <= ${GOAL_COLD_MS} ms of CPU: ${fmt(oursCpu.median, 2)} ms (median of ${cold.pairs.length})`);
  console.log(`  ${ratioOk ? 'PASS' : 'FAIL'}  >= ${GOAL_COLD_RATIO}x faster than js-sdk's verifyProof + revocation check on the same credentials: ${fmt(ratio, 1)}x (${fmt(jsCpu.median, 2)} / ${fmt(oursCpu.median, 2)} ms)`);
  if (!crossOk) failures.push('cold verification: this service and js-sdk disagree (see the cross-check table)');
  if (!cpuOk) failures.push(`cold verification ${fmt(oursCpu.median, 2)} ms of CPU per credential > ${GOAL_COLD_MS} ms`);
  if (!ratioOk) failures.push(`cold verification only ${fmt(ratio, 1)}x faster than js-sdk (< ${GOAL_COLD_RATIO}x)`);
  return failures;
}

async function runCold() {
  try {
    return await coldVerification();
  } catch (error) {
    return { error };
  }
}

if (ONLY_COLD || ONLY_MTP) {
  console.log(describeRun());
  const failures = [...(ONLY_MTP ? [] : reportCold(await runCold())), ...reportColdMtp(await coldMtp(startJsSdk))];
  if (failures.length > 0) {
    console.log(`\nGoals missed:\n${failures.map((f) => `  - ${f}`).join('\n')}`);
    process.exit(1);
  }
  console.log('\nAll goals met.');
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------------------------
// json-rules-engine version of the same rules. A rule holds for a credential set when it holds for at least one
// credential of its type that is issued and not expired; json-rules-engine has no "any element of a list" over
// facts, so the engine runs once per credential with that credential's facts, and a rule is valid when it fired
// on at least one of them. Dates are compared as instants (Date.parse), as our engine does.
// ---------------------------------------------------------------------------------------------------------------
function jreConditions(q) {
  const subject = (path, operator, value) => ({ fact: 'subject', path: `$.${path}`, operator, value });
  switch (q.operator) {
    case '$eq': return [subject(q.attribute, 'equal', q.value)];
    case '$ne': return [subject(q.attribute, 'notEqual', q.value)];
    case '$gt': return [subject(q.attribute, 'greaterThan', q.value)];
    case '$gte': return [subject(q.attribute, 'greaterThanInclusive', q.value)];
    case '$lt': return [subject(q.attribute, typeof q.value === 'string' ? 'dateBefore' : 'lessThan', q.value)];
    case '$lte': return [subject(q.attribute, 'lessThanInclusive', q.value)];
    case '$in': return [subject(q.attribute, 'in', q.value)];
    case '$nin': return [subject(q.attribute, 'notIn', q.value)];
    case '$between': return [subject(q.attribute, 'greaterThanInclusive', q.value[0]), subject(q.attribute, 'lessThanInclusive', q.value[1])];
    default: throw new Error(`no json-rules-engine mapping for ${q.operator}`);
  }
}

function jreEngine(rules) {
  const engine = new Engine([], { allowUndefinedFacts: true });
  engine.addOperator('dateBefore', (a, b) => typeof a === 'string' && Date.parse(a) < Date.parse(b));
  for (const r of rules) {
    engine.addRule({
      name: r.id,
      conditions: {
        all: [
          { fact: 'types', operator: 'contains', value: r.query.type },
          { fact: 'issued', operator: 'lessThanInclusive', value: { fact: 'now' } },
          { fact: 'expires', operator: 'greaterThan', value: { fact: 'now' } },
          ...jreConditions(r.query),
        ],
      },
      event: { type: r.id },
    });
  }
  return engine;
}

/** Set of rule ids valid for the credential set, per json-rules-engine. */
async function jreEvaluate(engine, creds) {
  const valid = new Set();
  for (const c of creds) {
    const { events } = await engine.run({
      types: c.type,
      issued: Date.parse(c.issuanceDate),
      expires: Date.parse(c.expirationDate),
      subject: c.credentialSubject,
      now: NOW,
    });
    for (const e of events) valid.add(e.type);
  }
  return valid;
}

// ---------------------------------------------------------------------------------------------------------------
// 1. Cross-check, then ns per evaluation.
// ---------------------------------------------------------------------------------------------------------------
const plan = compilePlan('bench-exec', 1, scenario(), TYPES);
const engine = jreEngine(RULES);
const ours = (creds) => runPlan(plan, { address: ADDRESS, credentials: creds, now: NOW, executionId: EXECUTION_ID });

const base = credentials();
const [id, aml, por] = base;
const sub = (c, patch) => ({ ...c, credentialSubject: { ...c.credentialSubject, ...patch } });
const dated = (c, dates) => ({ ...c, ...dates });
const sets = {
  'all valid': base,
  'age 16': [sub(id, { personalData: { ...id.credentialSubject.personalData, age: 16 } }), aml, por],
  'sanctioned citizenship': [sub(id, { personalData: { ...id.credentialSubject.personalData, citizenship: 'IRN' } }), aml, por],
  'review RED, risk 41': [sub(id, { reviewAnswer: 'RED' }), sub(aml, { riskScore: 41 }), por],
  'AML check expired': [id, dated(aml, { expirationDate: '2026-01-01T00:00:00Z' }), por],
  'ID not yet issued': [dated(id, { issuanceDate: '2027-01-01T00:00:00Z' }), aml, por],
  'no proof of residence': [id, aml],
  'resident since 2025-06-01': [id, aml, sub(por, { residentSince: '2025-06-01' })],
  'no credentials': [],
  'two IDs: expired one, then a valid one': [
    dated(sub(id, { reviewAnswer: 'GREEN' }), { expirationDate: '2026-01-01T00:00:00Z' }),
    aml,
    credential(4, 'IDInformation', { reviewAnswer: 'GREEN', personalData: { age: 40, citizenship: 'DEU' } }),
    por,
  ],
  'two IDs: each passes some rules': [
    sub(id, { personalData: { age: 10, citizenship: 'FRA' } }),
    credential(5, 'IDInformation', { reviewAnswer: 'RED', personalData: { age: 30, citizenship: 'SYR' } }),
    aml,
    por,
  ],
};
const crossRows = [];
let mismatches = 0;
for (const [name, creds] of Object.entries(sets)) {
  const a = ours(creds);
  const mine = new Set(a.filter((r) => r.result.result.is_valid).map((r) => r.objectId));
  const theirs = await jreEvaluate(engine, creds);
  const same = RULES.every((r) => mine.has(r.id) === theirs.has(r.id));
  if (!same) mismatches++;
  const show = (s) => RULES.map((r) => (s.has(r.id) ? 'V' : '-')).join('');
  crossRows.push([name, creds.length, show(mine), show(theirs), same ? 'equal' : 'DIFFERENT']);
}

const validCreds = base;
const oursNs = measure(() => {
  const r = ours(validCreds);
  sink += r.length;
});
// The rule evaluation alone, without building the 5 result objects (prepareRun + evaluate), when dist exposes it.
let evalNs;
try {
  const { prepareRun } = await import('../dist/engine/credentials.js');
  evalNs = measure(() => {
    const run = prepareRun(plan.credentialSlots, validCreds, NOW, undefined);
    for (let i = 0; i < plan.rules.length; i++) if (plan.rules[i].evaluate(run) === null) sink++;
  });
} catch {
  evalNs = { min: NaN, median: NaN };
}
const compileNs = measure(() => {
  sink += compilePlan('bench-exec', 1, scenario(), TYPES).rules.length;
});
const jreNs = await measureAsync(async () => {
  const v = await jreEvaluate(engine, validCreds);
  sink += v.size;
});
const ratio = jreNs.min / oursNs.min;

// ---------------------------------------------------------------------------------------------------------------
// 2. Cost growth: R rules x C credentials, worst case: every credential has the rules' type and all but the last
//    fail every rule, so each rule looks at every credential (a valid rule stops at its first passing credential).
// ---------------------------------------------------------------------------------------------------------------
const TEMPLATES = [
  (i) => (i % 2
    ? { type: 'KYC', attribute: 'reviewAnswer', value: 'GREEN', operator: '$eq' }
    : { type: 'KYC', attribute: 'reviewAnswer', value: ['GREEN', 'APPROVED'], operator: '$in' }),
  (i) => ({ type: 'KYC', attribute: 'personalData.age', value: 18 + (i % 3), operator: '$gte' }),
  (i) => ({ type: 'KYC', attribute: 'personalData.citizenship', value: ['PRK', 'IRN', 'SYR', `X${i}`], operator: '$nin' }),
  (i) => ({ type: 'KYC', attribute: 'riskScore', value: [0, 40 + (i % 5)], operator: '$between' }),
  (i) => ({ type: 'KYC', attribute: 'residentSince', value: `2025-01-${String(1 + (i % 28)).padStart(2, '0')}`, operator: '$lt' }),
];
const growthRules = (n) => Array.from({ length: n }, (_, i) => ({ id: `r${i}`, query: { requestId: i, ...TEMPLATES[i % TEMPLATES.length](i) } }));
const failing = { reviewAnswer: 'RED', personalData: { age: 10, citizenship: 'IRN' }, riskScore: 90, residentSince: '2026-01-01' };
const passing = { reviewAnswer: 'GREEN', personalData: { age: 30, citizenship: 'FRA' }, riskScore: 12, residentSince: '2019-05-20' };
const growthCreds = (n) => Array.from({ length: n }, (_, k) => credential(k + 1, 'KYC', k === n - 1 ? passing : failing));
const RULE_COUNTS = [1, 10, 100];
const CRED_COUNTS = [1, 10, 50];
const growth = [];
for (const r of RULE_COUNTS) {
  const p = compilePlan('growth', 1, scenario(`growth ${r}`, growthRules(r)), TYPES);
  const row = [];
  for (const c of CRED_COUNTS) {
    const creds = growthCreds(c);
    const check = runPlan(p, { address: ADDRESS, credentials: creds, now: NOW, executionId: EXECUTION_ID });
    if (check.some((x) => !x.result.result.is_valid)) throw new Error(`growth ${r}x${c}: a rule did not pass: ${JSON.stringify(check.find((x) => !x.result.result.is_valid).result)}`);
    row.push(measure(() => {
      sink += runPlan(p, { address: ADDRESS, credentials: creds, now: NOW, executionId: EXECUTION_ID }).length;
    }).min);
  }
  growth.push(row);
}

// ---------------------------------------------------------------------------------------------------------------
// 3. The other per-request costs of execute (informative, no goal).
// ---------------------------------------------------------------------------------------------------------------
const other = [];
try {
  const { parseAddress } = await import('../dist/domain/address.js');
  other.push(['parseAddress (EIP-55 mixed case: keccak-256 checksum)', measure(() => { sink += parseAddress(ADDRESS).ok ? 1 : 0; })]);
  other.push(['parseAddress (lowercase: no checksum)', measure(() => { sink += parseAddress(ADDRESS.toLowerCase()).ok ? 1 : 0; })]);
} catch (err) {
  other.push([`parseAddress: ${err.message}`, NaN]);
}
try {
  const { canonicalJson, sha256Hex } = await import('../dist/domain/canonical-json.js');
  other.push(['audit digests: sha256Hex(canonicalJson(c)) for the 3 credentials', measure(() => { for (const c of validCreds) sink += sha256Hex(canonicalJson(c)).length; })]);
  other.push(['  of which canonicalJson of the 3 credentials', measure(() => { for (const c of validCreds) sink += canonicalJson(c).length; })]);
} catch (err) {
  other.push([`canonical-json: ${err.message}`, NaN]);
}
// Credential trust verification (src/trust) of three demo-issuer IDInformation credentials, as execute runs it before
// the rules: warm (proofs cached per credential content, revocation answers for REVOCATION_CACHE_MS) and cold
// (both caches off). The demo issuer's statuses are answered in process, as with DEMO_ISSUER=1: no network.
try {
  const { createCredentialVerifier } = await import('../dist/trust/index.js');
  const { loadConfig } = await import('../dist/config.js');
  const { createDemoIssuer, demoStatusResolver } = await import('../dist/trust/demo-issuer.js');
  const { canonicalJson, sha256Hex } = await import('../dist/domain/canonical-json.js');
  const { issuer, credentials: demo } = await demoIdCredentials();
  const demoIssuer = await createDemoIssuer({ statusUrl: 'http://127.0.0.1:3000/demo-issuer/status' });
  const base = loadConfig({ CREDENTIAL_VERIFICATION: 'strict', TRUSTED_ISSUERS: issuer }).trust;
  const deps = { statusResolvers: { SparseMerkleTreeProof: demoStatusResolver(demoIssuer) } };
  // With the digests, as execute hands them in (it computes them once for the audit record).
  const ctx = { address: ADDRESS, now: Date.now(), relevantTypes: new Set(['IDInformation']), digests: demo.map((c) => sha256Hex(canonicalJson(c))) };
  // threads: 0 (the cold verification pool's option; ignored before it existed): measured on this thread.
  const warm = createCredentialVerifier({ ...base, threads: 0 }, deps);
  const cold = createCredentialVerifier({ ...base, threads: 0, cacheSize: 0, revocationCacheMs: 0 }, deps);
  const verdicts = await cold.verify(demo, ctx);
  if (!verdicts.every((v) => v.ok)) throw new Error(`demo credentials not verified: ${JSON.stringify(verdicts)}`);
  await warm.verify(demo, ctx);
  other.push(['trust verification of the 3 demo credentials, warm (cached per content digest)', await measureAsync(async () => { sink += (await warm.verify(demo, ctx)).length; })]);
  other.push(['trust verification of the 3 demo credentials, caches off (the same 3 again and again: see the cold section for never-seen ones)', await measureAsync(async () => { sink += (await cold.verify(demo, ctx)).length; })]);
  await warm.close?.();
  await cold.close?.();
} catch (err) {
  other.push([`trust verification: not measured (${String(err.message ?? err).slice(0, 100)})`, NaN]);
}
// 4. and 5. (defined above, and in cold-mtp.mjs)
const coldResult = await runCold();
const coldMtpResult = await coldMtp(startJsSdk);

const results = ours(validCreds);
other.push([`JSON.stringify of the 5 results (${JSON.stringify(results).length} bytes; execute now records its response text instead)`, measure(() => { sink += JSON.stringify(results).length; })]);
const bodyText = JSON.stringify(executeBody('bench-exec'));
other.push([`JSON.parse of the execute body (${bodyText.length} bytes)`, measure(() => { sink += JSON.parse(bodyText).credentials.length; })]);
{
  const { sha256Hex } = await import('../dist/domain/canonical-json.js');
  other.push([`SHA-256 of the execute body text (${bodyText.length} bytes; keys the memo of the credentials' digests)`, measure(() => { sink += sha256Hex(bodyText).length; })]);
}
other.push(['randomUUID', measure(() => { sink += randomUUID().length; })]);

// ---------------------------------------------------------------------------------------------------------------
console.log(describeRun());
console.log(`each figure: the fastest of ${ROUNDS} rounds of ~${ROUND_MS} ms (ENGINE_BENCH_ROUNDS, ENGINE_BENCH_MS), ${CPU_CLOCK ? 'CPU time of this process' : 'wall time'}; the median of the rounds in parentheses\n`);
console.log('Cross-check, valid rules per credential set (V = valid; rules in order q-kyc q-age q-country q-risk q-residence):\n');
console.log(table(['credential set', 'credentials', 'this engine', 'json-rules-engine', 'result'], crossRows));
console.log('\n5 rules x 3 credentials, all valid:\n');
const cell = (m) => `${fmt(m.min)} (${fmt(m.median)})`;
console.log(table(['', 'ns per evaluation'], [
  ['runPlan (compiled plan; prepareRun + 5 rules + 5 result objects)', cell(oursNs)],
  ['  rule evaluation only (prepareRun + 5 x evaluate, no result objects)', cell(evalNs)],
  ['compilePlan (once per scenario revision, cached)', cell(compileNs)],
  ['json-rules-engine 7 (one run per credential, awaited)', cell(jreNs)],
  ['json-rules-engine / runPlan', `${fmt(ratio, 0)}x (${fmt(jreNs.median / oursNs.median, 0)}x)`],
]));
console.log('\nCost growth: runPlan ns per evaluation, rules x credentials (worst case: each rule reads every credential, all rules valid):\n');
console.log(table(['rules \\ credentials', ...CRED_COUNTS.map(String)], growth.map((row, i) => [String(RULE_COUNTS[i]), ...row.map((ns) => fmt(ns))])));
console.log('\nThe same per rule x credential (ns; flat = linear growth in rules x credentials):\n');
console.log(table(['rules \\ credentials', ...CRED_COUNTS.map(String)], growth.map((row, i) => [String(RULE_COUNTS[i]), ...row.map((ns, j) => fmt(ns / (RULE_COUNTS[i] * CRED_COUNTS[j]), 1))])));
console.log('\nOther per-request costs of execute (informative):\n');
console.log(table(['operation', 'ns'], other.map(([k, v]) => [k, typeof v === 'number' ? fmt(v) : cell(v)])));

const coldFailures = reportCold(coldResult);
const coldMtpFailures = reportColdMtp(coldMtpResult);

const failures = [...coldFailures, ...coldMtpFailures];
if (mismatches > 0) failures.push(`${mismatches} credential set(s) where the two engines disagree`);
if (!(oursNs.min <= GOAL_NS)) failures.push(`runPlan ${fmt(oursNs.min)} ns per 5-rule evaluation > ${GOAL_NS} ns`);
if (!(ratio >= GOAL_RATIO)) failures.push(`only ${fmt(ratio, 0)}x faster than json-rules-engine (< ${GOAL_RATIO}x)`);
console.log('');
console.log(`  ${mismatches === 0 ? 'PASS' : 'FAIL'}  results equal to json-rules-engine on ${Object.keys(sets).length} credential sets`);
console.log(`  ${oursNs.min <= GOAL_NS ? 'PASS' : 'FAIL'}  <= ${GOAL_NS} ns per 5-rule evaluation: ${fmt(oursNs.min)} ns`);
console.log(`  ${ratio >= GOAL_RATIO ? 'PASS' : 'FAIL'}  >= ${GOAL_RATIO}x faster than json-rules-engine: ${fmt(ratio, 0)}x`);
if (sink === 42) console.log(''); // use the sink
if (failures.length > 0) {
  console.log(`\nGoals missed:\n${failures.map((f) => `  - ${f}`).join('\n')}`);
  process.exit(1);
}
console.log('\nAll goals met.');
