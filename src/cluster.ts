/**
 * WORKERS > 1: this process is the primary of a node:cluster; it serves nothing itself. It forks the workers (each
 * runs the whole service: buildApp, its own store connections, caches and background jobs, all of which are safe
 * across processes as they are across instances), and the workers share the listening port (the primary hands each
 * new connection to the next worker).
 *
 * - Start: resolves `listening` once every worker listens. A worker that exits before it listened is a start
 *   failure (bad database, port taken): the primary stops the others and exits 1, as a single process would.
 * - A worker that exits after it served (a crash, an out-of-memory kill, an operator's kill) is replaced at once.
 * - SIGTERM, SIGINT or SIGHUP: each worker gets SIGTERM, finishes its requests in flight and exits (close-with-grace,
 *   SHUTDOWN_TIMEOUT_MS); then the primary exits 0, or 1 when a worker did not exit cleanly. A second signal kills
 *   the workers at once. Workers ignore SIGINT and SIGHUP themselves: a terminal sends those to the whole process
 *   group, and a second signal would make a worker drop its requests in flight.
 * - Metrics: a worker asked for /metrics asks the primary, which gathers every worker's registry (prom-client's
 *   AggregatorRegistry: counters and histograms summed) and answers; so a scrape sees the service, not one worker.
 */
import cluster, { type Worker } from 'node:cluster';
import type { AddressInfo } from 'node:net';
import { AggregatorRegistry, type Registry } from 'prom-client';

/** A worker's request for the metrics of every worker, and the primary's answer. */
const METRICS_REQUEST = 'scs:metrics-request';
const METRICS_REPLY = 'scs:metrics-reply';
/** How long a worker waits for the primary's metrics answer. */
const METRICS_TIMEOUT_MS = 5000;
/** Beyond SHUTDOWN_TIMEOUT_MS, how long the primary waits for a worker before it kills it. */
const KILL_MARGIN_MS = 2000;

export interface PrimaryLog {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface PrimaryOptions {
  workers: number;
  /** How long a worker may take to finish its requests on shutdown (the workers' own SHUTDOWN_TIMEOUT_MS). */
  shutdownTimeoutMs: number;
  /** Environment for the workers beyond this process's own (e.g. the token made for this run). */
  env?: Record<string, string>;
  log: PrimaryLog;
}

export interface Primary {
  /** Resolves with the address once every worker of the first start listens; rejects when one of them failed. */
  listening: Promise<AddressInfo>;
  /** Resolves with the exit code once the cluster has stopped (every worker exited). */
  stopped: Promise<number>;
  /** Stops the cluster (as SIGTERM does). */
  stop(): void;
}

export function startPrimary(options: PrimaryOptions): Primary {
  const { log } = options;
  const served = new WeakSet<Worker>();
  let stopping = false;
  let exitCode = 0;
  let startPending = options.workers;
  let killTimer: NodeJS.Timeout | undefined;

  let resolveListening!: (a: AddressInfo) => void;
  let rejectListening!: (e: Error) => void;
  const listening = new Promise<AddressInfo>((resolve, reject) => {
    resolveListening = resolve;
    rejectListening = reject;
  });
  listening.catch(() => {}); // a start failure is reported through `stopped` too
  let resolveStopped!: (code: number) => void;
  const stopped = new Promise<number>((resolve) => { resolveStopped = resolve; });

  const alive = () => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
  const fork = () => cluster.fork(options.env ?? {});

  const stop = (code = 0) => {
    if (code !== 0) exitCode = code;
    if (stopping) return;
    stopping = true;
    for (const w of alive()) w.process.kill('SIGTERM');
    killTimer = setTimeout(() => {
      log.error({ workers: alive().map((w) => w.process.pid) }, 'workers did not stop in time; killing them');
      exitCode = 1;
      for (const w of alive()) w.process.kill('SIGKILL');
    }, options.shutdownTimeoutMs + KILL_MARGIN_MS);
    if (alive().length === 0) finish();
  };
  const finish = () => {
    clearTimeout(killTimer);
    for (const signal of SIGNALS) process.removeListener(signal, onSignal);
    cluster.removeListener('listening', onListening);
    cluster.removeListener('exit', onExit);
    cluster.removeListener('message', onMessage);
    resolveStopped(exitCode);
  };

  const onListening = (worker: Worker, address: AddressInfo) => {
    if (served.has(worker)) return;
    served.add(worker);
    if (startPending > 0 && --startPending === 0) {
      log.info({ workers: options.workers, port: address.port }, 'every worker is listening');
      resolveListening(address);
    }
  };
  const onExit = (worker: Worker, code: number | null, signal: string | null) => {
    const pid = worker.process.pid; // logged as `worker`: the primary's own log lines carry its pid
    if (stopping) {
      if (code !== 0) exitCode = 1;
      if (alive().length === 0) finish();
      return;
    }
    if (!served.has(worker)) {
      log.error({ worker: pid, code, signal }, 'a worker stopped before it listened; stopping the service');
      rejectListening(new Error(`worker ${pid} exited (${code ?? signal}) before it listened`));
      stop(1);
      return;
    }
    log.error({ worker: pid, code, signal }, 'a worker stopped; starting another');
    fork();
  };

  // Metrics of the whole cluster, for the worker that was asked.
  const aggregator = new AggregatorRegistry();
  const onMessage = (worker: Worker, message: unknown) => {
    if (!isMessage(message, METRICS_REQUEST)) return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: METRICS_REPLY, id: message.id, text }),
      (err: Error) => worker.send({ type: METRICS_REPLY, id: message.id, error: err.message }),
    );
  };

  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) {
      log.error({ signal }, 'second signal: killing the workers');
      exitCode = 1;
      for (const w of alive()) w.process.kill('SIGKILL');
      return;
    }
    signalled = true;
    log.info({ signal, workers: alive().length }, 'shutting down');
    stop();
  };

  cluster.on('listening', onListening);
  cluster.on('exit', onExit);
  cluster.on('message', onMessage);
  for (const signal of SIGNALS) process.on(signal, onSignal);
  for (let i = 0; i < options.workers; i++) fork();
  return { listening, stopped, stop: () => stop() };
}

/** The signals that stop the cluster; workers ignore those a terminal sends to the whole group. */
const SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];
export const WORKER_IGNORED_SIGNALS = ['SIGINT', 'SIGHUP'] as const;

/** In a worker: ignore the signals the primary handles for the group (call before close-with-grace is set up). */
export function ignoreGroupSignals(): void {
  for (const signal of WORKER_IGNORED_SIGNALS) process.on(signal, () => {});
}

/** True in a worker of a cluster started by startPrimary. */
export function isClusterWorker(): boolean {
  return cluster.isWorker;
}

/**
 * In a worker: lets the primary gather this registry, and answers the metrics of every worker, in the Prometheus
 * text format.
 */
export function clusterMetrics(registry: Registry): () => Promise<string> {
  AggregatorRegistry.setRegistries([registry]);
  new AggregatorRegistry(); // installs the worker's answer to the primary's requests
  let next = 0;
  const waiting = new Map<number, { resolve: (text: string) => void; reject: (err: Error) => void; timer: NodeJS.Timeout }>();
  process.on('message', (message: unknown) => {
    if (!isMessage(message, METRICS_REPLY)) return;
    const w = waiting.get(message.id);
    if (!w) return;
    waiting.delete(message.id);
    clearTimeout(w.timer);
    if (typeof message.text === 'string') w.resolve(message.text);
    else w.reject(new Error(`metrics of the cluster: ${String(message.error)}`));
  });
  return () => new Promise((resolve, reject) => {
    const id = next++;
    const timer = setTimeout(() => {
      waiting.delete(id);
      reject(new Error('metrics of the cluster: the primary did not answer'));
    }, METRICS_TIMEOUT_MS);
    waiting.set(id, { resolve, reject, timer });
    process.send!({ type: METRICS_REQUEST, id }, undefined, undefined, (err) => {
      if (!err) return;
      waiting.delete(id);
      clearTimeout(timer);
      reject(err);
    });
  });
}

function isMessage(m: unknown, type: string): m is { type: string; id: number; text?: unknown; error?: unknown } {
  return typeof m === 'object' && m !== null && (m as { type?: unknown }).type === type && typeof (m as { id?: unknown }).id === 'number';
}
