/**
 * Preload of the bench server (`node --import ./bench/inproc.mjs bench/server.mjs`, startServer({ inproc: true }) in
 * lib.mjs): each request's time inside the server process, from Node's `http.server.request.start` (the request's
 * headers parsed, before Fastify's onRequest) to `http.server.response.finish` (the last byte handed to the socket),
 * with the event-loop blocks and GC pauses that fell in the same window. Nothing in src/ knows of it.
 *
 * Driven over the IPC channel of the child process: {inproc: 'start'} clears and starts recording, {inproc: 'stop'}
 * stops and answers {inproc: 'stats', routes, loop, gc}; {inproc: 'memory'} answers the process's memory (bench/soak.mjs). Not recording, it costs two channel lookups per request.
 *
 * What it cannot see: a request whose bytes wait in the socket's buffer while the loop is busy has not "arrived" yet,
 * so that wait is outside its window (it shows as event-loop delay, and on the client's side).
 */
import dc from 'node:diagnostics_channel';
import fs from 'node:fs';
import { constants, monitorEventLoopDelay, PerformanceObserver, performance } from 'node:perf_hooks';

const LAG_TICK_MS = 2;
const GC_KINDS = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental marking',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};
let recording = false;
let requests = []; // {key, start, end, inflight}
let gcs = []; // [start, end, kind]
let blocks = []; // [start, end, ms of it waiting for a CPU]: no timer ran in between (a 2 ms tick came > 1 ms late)
let inflight = 0;
let windowStart = 0;
const pending = new WeakMap();
let sched0;

/**
 * This thread's CPU time and its time runnable but waiting for a CPU (the OS scheduler), in ms, from
 * /proc/thread-self/schedstat (Linux); undefined elsewhere.
 */
function schedstat() {
  try {
    const [cpu, wait] = fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
    return { cpu: cpu / 1e6, wait: wait / 1e6 };
  } catch {
    return undefined;
  }
}
const histogram = monitorEventLoopDelay({ resolution: 10 });
let ticker;

const gcObserver = new PerformanceObserver((list) => {
  if (!recording) return;
  for (const e of list.getEntries()) gcs.push([e.startTime, e.startTime + e.duration, e.detail?.kind ?? e.kind]);
});

dc.subscribe('http.server.request.start', ({ request, response }) => {
  if (!recording) return;
  pending.set(response, { key: `${request.method} ${request.url.split('?')[0]}`, start: performance.now(), inflight });
  inflight++;
});
dc.subscribe('http.server.response.finish', ({ response }) => {
  const r = pending.get(response);
  if (r === undefined) return;
  pending.delete(response);
  inflight--;
  if (!recording) return;
  r.end = performance.now();
  requests.push(r);
});

function start() {
  requests = [];
  gcs = [];
  blocks = [];
  recording = true;
  windowStart = performance.now();
  histogram.reset();
  histogram.enable();
  gcObserver.observe({ entryTypes: ['gc'] });
  sched0 = schedstat();
  let last = performance.now();
  let waited = sched0?.wait ?? 0;
  ticker = setInterval(() => {
    const now = performance.now();
    if (now - last > LAG_TICK_MS + 1) {
      // What of the block the thread spent waiting for a CPU (read only after a block: the read costs ~10 us).
      const w = schedstat()?.wait ?? waited;
      blocks.push([last + LAG_TICK_MS, now, Math.min(now - last - LAG_TICK_MS, w - waited)]);
      waited = w;
    }
    last = now;
  }, LAG_TICK_MS);
}

/**
 * Time of the sorted, disjoint intervals that falls inside [a, b]; with `weight`, each interval's overlap scaled by
 * weight(interval) / its length (the share of a block spent waiting for a CPU).
 */
function overlap(intervals, a, b, weight) {
  let lo = 0;
  let hi = intervals.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (intervals[mid][1] <= a) lo = mid + 1;
    else hi = mid;
  }
  let t = 0;
  for (let i = lo; i < intervals.length && intervals[i][0] < b; i++) {
    const [s, e] = intervals[i];
    const o = Math.min(b, e) - Math.max(a, s);
    t += weight ? (o * weight(intervals[i])) / (e - s) : o;
  }
  return t;
}

const q = (sorted, x) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(x * sorted.length) - 1))]);
const mean = (xs) => (xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length);

/** What overlapped a set of requests: mean GC and loop-block ms in their windows, share with any GC, mean inflight. */
function overlapped(list) {
  const gc = list.map((r) => overlap(gcs, r.start, r.end));
  const blocked = list.map((r) => overlap(blocks, r.start, r.end));
  const offCpu = list.map((r) => overlap(blocks, r.start, r.end, (x) => x[2]));
  return {
    offCpuMs: mean(offCpu),
    n: list.length,
    meanMs: mean(list.map((r) => r.end - r.start)),
    gcMs: mean(gc),
    withGc: list.length === 0 ? NaN : gc.filter((x) => x > 0).length / list.length,
    blockedMs: mean(blocked),
    inflight: mean(list.map((r) => r.inflight)),
  };
}

function stop() {
  recording = false;
  clearInterval(ticker);
  histogram.disable();
  gcObserver.disconnect();
  const seconds = (performance.now() - windowStart) / 1000;
  const sched1 = schedstat();
  const thread = sched0 && sched1 ? { cpuMs: sched1.cpu - sched0.cpu, waitMs: sched1.wait - sched0.wait } : undefined;
  gcs.sort((x, y) => x[0] - y[0]);
  const byKey = new Map();
  for (const r of requests) (byKey.get(r.key) ?? byKey.set(r.key, []).get(r.key)).push(r);
  const routes = {};
  for (const [key, list] of byKey) {
    list.sort((x, y) => (x.end - x.start) - (y.end - y.start));
    const ms = list.map((r) => r.end - r.start);
    const p99 = q(ms, 0.99);
    // The same windows less the time this (the main) thread was runnable and waiting for a CPU in them.
    const net = list.map((r) => r.end - r.start - overlap(blocks, r.start, r.end, (x) => x[2])).sort((x, y) => x - y);
    routes[key] = {
      n: list.length,
      p50: q(ms, 0.5),
      p99,
      p999: q(ms, 0.999),
      max: ms.at(-1),
      net: { p50: q(net, 0.5), p99: q(net, 0.99), p999: q(net, 0.999), max: net.at(-1) },
      all: overlapped(list),
      slowest: overlapped(list.filter((r) => r.end - r.start >= p99)),
      // The slowest ten, with their arrival relative to the window's start, for reading by eye.
      worst: list.slice(-10).map((r) => ({ at: Math.round(r.start - windowStart), ms: +(r.end - r.start).toFixed(2), gcMs: +overlap(gcs, r.start, r.end).toFixed(2), blockedMs: +overlap(blocks, r.start, r.end).toFixed(2), offCpuMs: +overlap(blocks, r.start, r.end, (x) => x[2]).toFixed(2), inflight: r.inflight })),
    };
  }
  const pauses = gcs.map((g) => g[1] - g[0]).sort((x, y) => x - y);
  const byKind = {};
  for (const g of gcs) {
    const k = GC_KINDS[g[2]] ?? String(g[2]);
    byKind[k] ??= { n: 0, ms: 0, max: 0 };
    byKind[k].n++;
    byKind[k].ms += g[1] - g[0];
    byKind[k].max = Math.max(byKind[k].max, g[1] - g[0]);
  }
  const ns = (x) => x / 1e6;
  return {
    seconds,
    thread,
    routes,
    loop: { p50: ns(histogram.percentile(50)), p99: ns(histogram.percentile(99)), max: ns(histogram.max), blocks: blocks.length, blockedMs: blocks.reduce((a, b) => a + b[1] - b[0], 0) },
    gc: { n: pauses.length, ms: pauses.reduce((a, b) => a + b, 0), p99: q(pauses, 0.99), max: pauses.at(-1) ?? 0, byKind },
  };
}

// {inproc: 'memory'}: process.memoryUsage() and the heap used right after the last mark-compact (a figure that the
// young generation's fill level does not move), for the soak.
let afterMajor;
const majorObserver = new PerformanceObserver((list) => {
  if (list.getEntries().some((e) => (e.detail?.kind ?? e.kind) === constants.NODE_PERFORMANCE_GC_MAJOR)) afterMajor = process.memoryUsage().heapUsed;
});

if (process.send) {
  process.on('message', (m) => {
    if (m?.inproc === 'memory') {
      if (afterMajor === undefined) majorObserver.observe({ entryTypes: ['gc'] });
      afterMajor ??= NaN;
      process.send({ inproc: 'memory', ...process.memoryUsage(), heapAfterMajor: afterMajor });
    } else if (m?.inproc === 'start') {
      start();
      process.send({ inproc: 'started' });
    } else if (m?.inproc === 'stop') {
      process.send({ inproc: 'stats', ...stop() });
    }
  });
  process.channel?.unref();
}
