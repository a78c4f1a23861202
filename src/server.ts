import cluster from 'node:cluster';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import closeWithGrace from 'close-with-grace';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { buildApp } from './app.js';
import { onceOnStopSignals, startPrimary, STOP_SIGNALS, stopOrForce } from './cluster.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { startupSummary } from './config/summary.js';

/** A ConfigError is one line that says what to do; anything else is a bug and keeps its stack trace. */
function stopOnConfigError(err: unknown): never {
  if (err instanceof ConfigError) {
    process.stderr.write(`configuration error: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}

let config: Config;
try {
  config = loadConfig();
} catch (err) {
  stopOnConfigError(err);
}

function logSummary(log: Pick<FastifyBaseLogger, 'info' | 'warn'>, address: AddressInfo): void {
  const { fields, msg, warning } = startupSummary(config, address);
  log.info(fields, msg);
  if (warning) log.warn(warning);
}

/** Printed once to the terminal, never to the log stream. */
function runToken(): string | undefined {
  if (config.apiTokens.length > 0 || config.jwt) return undefined;
  const token = randomBytes(24).toString('base64url');
  process.stderr.write(`\nAPI token for this run (API_TOKENS unset): ${token}\n\n`);
  return token;
}
const TOKEN_WARNING = 'API_TOKENS is unset: made a random token for this run only; set API_TOKENS to keep one';

if (config.workers > 1 && cluster.isPrimary) {
  const log = pino({ level: config.logLevel, base: { pid: process.pid, hostname: os.hostname(), role: 'primary' } });
  const token = runToken();
  if (token) log.warn(TOKEN_WARNING);
  const primary = startPrimary({ workers: config.workers, shutdownTimeoutMs: config.shutdownDelayMs + config.shutdownTimeoutMs, env: token ? { API_TOKENS: token } : {}, log });
  primary.listening.then((address) => logSummary(log, address), () => {}); // a failed start is told by `stopped`
  process.exit(await primary.stopped);
}

const worker = cluster.isWorker;
const generatedToken = worker ? undefined : runToken();
if (generatedToken) config.apiTokens = [{ token: generatedToken, projects: '*' }];

const app = await buildApp(config, { warmVerification: true }).catch(stopOnConfigError);
if (generatedToken) app.log.warn(TOKEN_WARNING);

// Not close-with-grace's signals: it takes any second signal, even npm's copy, as a reason to exit 1 mid-request.
let stopSignal: NodeJS.Signals | undefined;
const closer = closeWithGrace({ delay: config.shutdownDelayMs + config.shutdownTimeoutMs, skip: [...STOP_SIGNALS] }, async ({ signal, err }) => {
  if (err) app.log.error({ err }, 'shutting down after an error');
  else app.log.info({ signal: signal ?? stopSignal }, 'shutting down');
  const t0 = performance.now();
  app.drain();
  if (!err && config.shutdownDelayMs > 0) await sleep(config.shutdownDelayMs);
  await app.close();
  // The last line: a process that ends by a signal after it ended in its own teardown.
  app.log.info({ ms: Math.round(performance.now() - t0) }, 'stopped: every request answered, threads and stores closed');
});
if (worker) {
  onceOnStopSignals(() => {
    stopSignal = 'SIGTERM';
    void closer.close();
  });
} else {
  const onSignal = stopOrForce((signal) => {
    stopSignal = signal;
    void closer.close();
  }, (signal) => {
    app.log.error({ signal }, `second ${signal}, exiting: requests in flight are cut`);
    process.exit(1);
  });
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
}

try {
  await app.listen({ port: config.port, host: config.host });
} catch (err) {
  app.log.error({ err }, 'could not start');
  process.exit(1);
}
const address = app.server.address();
if (!worker && address !== null && typeof address === 'object') logSummary(app.log, address);
