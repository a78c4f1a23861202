/**
 * Bench-only server entry (never used in production): the real service, buildApp(loadConfig(env)) from dist/, plus
 * bench routes registered before listen:
 *
 *   GET  /bench/baseline            {ok:true} with a response schema: the HTTP floor of this app (its global hooks
 *                                   and request-id generation included), no auth, no body.
 *   POST /bench/ceiling             behind the same authentication and scope check as execute, parses and validates the execute body
 *                                   with the registered ExecuteRequest schema and answers a fixed 5-result array with
 *                                   the execute response schema: what execute costs before it does any work.
 *   POST /bench/gc                  (only with --expose-gc) collects garbage and answers process.memoryUsage().
 *   POST /bench/profile/start|stop  (only with BENCH_PROFILE=1) CPU profile of this process through its inspector,
 *                                   written to the file named in the body of stop.
 *
 * With BENCH_NO_AUDIT=1 the store's recordExecution does nothing (a second server for the "execute without the audit
 * insert" figure).
 *
 * Prints one line `BENCH_READY {"port":…,"pid":…}` on stdout once listening. SIGTERM/SIGINT: app.close(), exit 0
 * (so that --cpu-prof profiles are written).
 *
 * With WORKERS above 1, as the service does (src/cluster.ts): this process is the primary of WORKERS workers that each
 * run this file (and its bench routes), and prints BENCH_READY with its own pid once every worker listens; SIGTERM
 * stops the workers, then the primary. The CPU profile routes need one process (no WORKERS).
 */
import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { buildApp } from '../dist/app.js';
import { startPrimary } from '../dist/cluster.js';
import { loadConfig } from '../dist/config.js';
import * as auth from '../dist/http/auth.js';
import { challengeQueryEvaluator, compilePlan, runPlan } from '../dist/engine/index.js';
import { openStore } from '../dist/store/index.js';
import { httpScenario, syntheticIdCredentials } from './fixtures.mjs';

const config = loadConfig(process.env);

if (config.workers > 1 && cluster.isPrimary) {
  if (process.env.BENCH_PROFILE === '1') throw new Error('bench server: CPU profiles need a single process (unset WORKERS)');
  const primary = startPrimary({
    workers: config.workers,
    shutdownTimeoutMs: config.shutdownTimeoutMs,
    log: { info() {}, error: (obj, msg) => console.error(`bench primary: ${msg} ${JSON.stringify(obj)}`) },
  });
  const address = await primary.listening.catch(async (err) => {
    console.error(`bench primary: ${err.message}`);
    process.exit(await primary.stopped);
  });
  process.stdout.write(`BENCH_READY ${JSON.stringify({ port: address.port, pid: process.pid, store: config.database.kind, workers: config.workers })}\n`);
  process.exit(await primary.stopped);
}

/** The same authentication (and scope check) as the service's /compliance routes: its `auth` plugin. */
async function secure(context) {
  await context.register(auth.auth, { authenticate: auth.createAuthenticator(config.apiTokens, config.jwt) });
}
const routeConfig = { scope: 'scenarios:execute' };
const opened = await openStore(config.database, (err) => console.error('database connection error', err.message));
// BENCH_NO_AUDIT=1: the same service with a store whose recordExecution does nothing, so that the real execute route
// (digests included, as the handler computes them) runs without the group commit and the insert.
const store = process.env.BENCH_NO_AUDIT === '1'
  ? new Proxy(opened, {
    get(target, prop) {
      if (prop === 'recordExecution') return async () => {};
      const value = Reflect.get(target, prop);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  })
  : opened;
const app = await buildApp(config, { store });

const okSchema = Type.Object({ ok: Type.Boolean() }, { additionalProperties: false });
app.get('/bench/baseline', { schema: { hide: true, response: { 200: okSchema } } }, async () => ({ ok: true }));

// The fixed answer of the ceiling route: a real 5-rule result array of the bench scenario, computed once.
const fixed = runPlan(compilePlan('bench-exec', 1, httpScenario(), { evaluators: { ChallengeQuery: challengeQueryEvaluator } }), {
  address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  credentials: syntheticIdCredentials(),
  now: Date.now(),
  executionId: randomUUID(),
});
const executeResponse = Type.Array(Type.Ref('ExecutionResult'));

await app.register(async (secured) => {
  await secure(secured);

  secured.post('/bench/ceiling', {
    config: routeConfig,
    schema: { hide: true, body: Type.Ref('ExecuteRequest'), response: { 200: executeResponse } },
  }, async () => fixed);
});

if (typeof globalThis.gc === 'function') {
  app.post('/bench/gc', { schema: { hide: true } }, async () => {
    globalThis.gc();
    globalThis.gc();
    return process.memoryUsage();
  });
}

// BENCH_PROFILE=1: the driver profiles only its measured runs, through the inspector of this process.
if (process.env.BENCH_PROFILE === '1') {
  const { Session } = await import('node:inspector/promises');
  const fs = await import('node:fs');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  app.post('/bench/profile/start', { schema: { hide: true } }, async () => {
    await session.post('Profiler.start');
    return { ok: true };
  });
  app.post('/bench/profile/stop', { schema: { hide: true } }, async (request) => {
    const { profile } = await session.post('Profiler.stop');
    fs.writeFileSync(request.body.file, JSON.stringify(profile));
    return { ok: true };
  });
}

let closing = false;
const shutdown = async () => {
  if (closing) return;
  closing = true;
  try {
    await app.close();
  } finally {
    process.exit(0);
  }
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);

await app.listen({ port: config.port, host: config.host });
const { port } = app.server.address();
// A worker of a cluster stays quiet: its primary says when the service is ready.
if (!cluster.isWorker) process.stdout.write(`BENCH_READY ${JSON.stringify({ port, pid: process.pid, store: store.kind })}\n`);
