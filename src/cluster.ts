/**
 * WORKERS > 1: the primary serves nothing. A worker of the first start that exits before it listens fails the start;
 * a later exit is replaced, with a growing pause while workers keep dying, so a crash loop does not take the cores.
 */
import cluster, { type Worker } from 'node:cluster';
import type { AddressInfo } from 'node:net';
import { AggregatorRegistry, type Registry } from 'prom-client';

const CLUSTER_METRICS_REQUEST = 'scs:cluster-metrics-request';
const CLUSTER_METRICS_REPLY = 'scs:cluster-metrics-reply';
const WORKER_METRICS_REQUEST = 'scs:worker-metrics-request';
const WORKER_METRICS_REPLY = 'scs:worker-metrics-reply';
const GATHER_TIMEOUT_MS = 3000;
const ASK_TIMEOUT_MS = GATHER_TIMEOUT_MS + 1000;
const KILL_MARGIN_MS = 2000;
const RESTART_WINDOW_MS = 60_000;
const RESTARTS_AT_ONCE = 3;
const RESTART_PAUSE_MAX_MS = 30_000;

interface PrimaryLog {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface PrimaryOptions {
  workers: number;
  shutdownTimeoutMs: number;
  env?: Record<string, string>;
  log: PrimaryLog;
}

export interface Primary {
  listening: Promise<AddressInfo>;
  stopped: Promise<number>;
}

type Message = { type: string; id: number; text?: unknown; metrics?: unknown; error?: unknown };

export function startPrimary(options: PrimaryOptions): Primary {
  const { log } = options;
  /** cluster.workers may still hold one at its exit event. */
  const live = new Set<Worker>();
  const serving = new Set<Worker>();
  const firstStart = new WeakSet<Worker>();
  const restarts: number[] = [];
  const restartTimers = new Set<NodeJS.Timeout>();
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
  listening.catch(() => {});
  let resolveStopped!: (code: number) => void;
  const stopped = new Promise<number>((resolve) => { resolveStopped = resolve; });

  const fork = () => {
    const worker = cluster.fork(options.env ?? {});
    live.add(worker);
    return worker;
  };
  const send = (worker: Worker, message: object) => {
    // A worker may have died since it asked: the answer is dropped, never thrown.
    if (worker.isConnected()) worker.send(message, undefined, () => {});
  };

  const stop = (code = 0) => {
    if (code !== 0) exitCode = code;
    if (stopping) return;
    stopping = true;
    for (const t of restartTimers) clearTimeout(t);
    restartTimers.clear();
    for (const w of live) w.process.kill('SIGTERM');
    killTimer = setTimeout(() => {
      log.error({ workers: [...live].map((w) => w.process.pid) }, 'workers did not stop in time; killing them');
      exitCode = 1;
      for (const w of live) w.process.kill('SIGKILL');
    }, options.shutdownTimeoutMs + KILL_MARGIN_MS);
    if (live.size === 0) finish();
  };
  const finish = () => {
    clearTimeout(killTimer);
    for (const signal of STOP_SIGNALS) process.removeListener(signal, onSignal);
    cluster.removeListener('listening', onListening);
    cluster.removeListener('exit', onExit);
    cluster.removeListener('message', onMessage);
    rejectListening(new Error('the cluster stopped before every worker listened'));
    resolveStopped(exitCode);
  };

  const onListening = (worker: Worker, address: AddressInfo) => {
    if (serving.has(worker) || !live.has(worker)) return;
    serving.add(worker);
    if (startPending > 0 && --startPending === 0) {
      log.info({ workers: options.workers, port: address.port }, 'every worker is listening');
      resolveListening(address);
    }
  };
  const onExit = (worker: Worker, code: number | null, signal: string | null) => {
    live.delete(worker);
    const served = serving.delete(worker);
    const pid = worker.process.pid; // logged as `worker`: the primary's own log lines carry its pid
    if (stopping) {
      if (code !== 0) exitCode = 1;
      if (live.size === 0) finish();
      return;
    }
    if (!served && firstStart.has(worker)) {
      log.error({ worker: pid, code, signal }, 'a worker stopped before it listened; stopping the service');
      rejectListening(new Error(`worker ${pid} exited (${code ?? signal}) before it listened`));
      stop(1);
      return;
    }
    const now = Date.now();
    const firstRecent = restarts.findIndex((t) => t >= now - RESTART_WINDOW_MS);
    restarts.splice(0, firstRecent < 0 ? restarts.length : firstRecent);
    restarts.push(now);
    const pause = restarts.length <= RESTARTS_AT_ONCE ? 0 : Math.min(RESTART_PAUSE_MAX_MS, 1000 * 2 ** (restarts.length - RESTARTS_AT_ONCE - 1));
    log.error({ worker: pid, code, signal, listened: served, restartInMs: pause }, 'a worker stopped; starting another');
    const timer = setTimeout(() => {
      restartTimers.delete(timer);
      if (!stopping) fork();
    }, pause);
    restartTimers.add(timer);
  };

  let nextGather = 0;
  const gathering = new Map<number, { pending: Set<Worker>; parts: object[]; done: (err: Error | null, text?: string) => void }>();
  const gather = (done: (err: Error | null, text?: string) => void) => {
    const id = nextGather++;
    const pending = new Set(serving);
    if (pending.size === 0) return done(new Error('no worker is serving'));
    const timer = setTimeout(() => finishGather(new Error(`${pending.size} worker(s) did not answer within ${GATHER_TIMEOUT_MS} ms`)), GATHER_TIMEOUT_MS);
    const finishGather = (err: Error | null, text?: string) => {
      clearTimeout(timer);
      gathering.delete(id);
      done(err, text);
    };
    gathering.set(id, { pending, parts: [], done: finishGather });
    for (const w of pending) send(w, { type: WORKER_METRICS_REQUEST, id });
  };
  const onMessage = (worker: Worker, message: unknown) => {
    if (isMessage(message, CLUSTER_METRICS_REQUEST)) {
      gather((err, text) => send(worker, { type: CLUSTER_METRICS_REPLY, id: message.id, ...(err ? { error: err.message } : { text }) }));
      return;
    }
    if (!isMessage(message, WORKER_METRICS_REPLY)) return;
    const g = gathering.get(message.id);
    if (!g || !g.pending.delete(worker)) return;
    if (!Array.isArray(message.metrics)) {
      g.done(new Error(`worker ${worker.process.pid}: ${String(message.error)}`));
      return;
    }
    g.parts.push(message.metrics);
    if (g.pending.size > 0) return;
    Promise.resolve(AggregatorRegistry.aggregate(g.parts).metrics()).then(
      (text) => g.done(null, text),
      (err: Error) => g.done(err),
    );
  };

  const onSignal = stopOrForce((signal) => {
    log.info({ signal, workers: live.size }, 'shutting down');
    stop();
  }, (signal) => {
    log.error({ signal }, 'second signal: killing the workers');
    exitCode = 1;
    for (const w of live) w.process.kill('SIGKILL');
  });

  cluster.on('listening', onListening);
  cluster.on('exit', onExit);
  cluster.on('message', onMessage);
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  for (let i = 0; i < options.workers; i++) firstStart.add(fork());
  return { listening, stopped };
}

/** A worker handles them itself (onceOnStopSignals), so close-with-grace must skip them there. */
export const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/**
 * A signal to the process group of `npm start` (Ctrl-C, systemd's KillMode=control-group) reaches node twice: from
 * the group, and forwarded by npm a few milliseconds later.
 */
export const DUPLICATE_SIGNAL_MS = 1000;

export function stopOrForce(
  stop: (signal: NodeJS.Signals) => void,
  force: (signal: NodeJS.Signals) => void,
  now: () => number = () => performance.now(),
): (signal: NodeJS.Signals) => void {
  let first: { signal: NodeJS.Signals; at: number } | undefined;
  return (signal) => {
    if (first === undefined) {
      first = { signal, at: now() };
      stop(signal);
    } else if (signal !== first.signal || now() - first.at >= DUPLICATE_SIGNAL_MS) {
      force(signal);
    }
  };
}

/** SIGINT and SIGHUP, which a terminal sends to the whole group, are the primary's to act on. */
export function onceOnStopSignals(stop: () => void): void {
  let called = false;
  for (const signal of STOP_SIGNALS) {
    process.on(signal, () => {
      if (signal !== 'SIGTERM' || called) return;
      called = true;
      stop();
    });
  }
}

/** Every serving worker's metrics, summed, so a scrape sees the service. */
export function clusterMetrics(registry: Registry): () => Promise<string> {
  let next = 0;
  const waiting = new Map<number, { resolve: (text: string) => void; reject: (err: Error) => void; timer: NodeJS.Timeout }>();
  process.on('message', (message: unknown) => {
    if (isMessage(message, WORKER_METRICS_REQUEST)) {
      const id = message.id;
      registry.getMetricsAsJSON().then(
        (metrics) => process.send?.({ type: WORKER_METRICS_REPLY, id, metrics }, undefined, undefined, () => {}),
        (err: Error) => process.send?.({ type: WORKER_METRICS_REPLY, id, error: err.message }, undefined, undefined, () => {}),
      );
      return;
    }
    if (!isMessage(message, CLUSTER_METRICS_REPLY)) return;
    const w = waiting.get(message.id);
    if (!w) return;
    waiting.delete(message.id);
    clearTimeout(w.timer);
    if (typeof message.text === 'string') w.resolve(message.text);
    else w.reject(new Error(String(message.error)));
  });
  return () => new Promise((resolve, reject) => {
    const id = next++;
    const timer = setTimeout(() => {
      waiting.delete(id);
      reject(new Error('the primary did not answer'));
    }, ASK_TIMEOUT_MS);
    waiting.set(id, { resolve, reject, timer });
    const fail = (err: Error) => {
      waiting.delete(id);
      clearTimeout(timer);
      reject(err);
    };
    // A cluster worker always has its IPC channel to the primary.
    if (process.send === undefined) return fail(new Error('no IPC channel to the primary'));
    process.send({ type: CLUSTER_METRICS_REQUEST, id }, undefined, undefined, (err) => {
      if (err) fail(err);
    });
  });
}

function isMessage(m: unknown, type: string): m is Message {
  return typeof m === 'object' && m !== null && 'type' in m && m.type === type && 'id' in m && typeof m.id === 'number';
}
