import type { FastifyInstance } from 'fastify';
import { Overloaded } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: load shedding lets the route through however late the event loop is (the liveness check). */
    loadShedding?: false;
  }
}

/** How often the event loop's delay is sampled, and over how long a window the samples are averaged. */
const RESOLUTION_MS = 10;
const WINDOW_MS = 1000;

/**
 * The event loop's delay: how much later than asked a 10 ms timer runs, averaged over each window of about a second;
 * `delayMs` is the last closed window's mean. A window closes in a timer tick, so it always holds a sample, and a
 * stall counts as the delay it caused. (@fastify/under-pressure 9.2.0, used before, reset a monitorEventLoopDelay
 * histogram every second: a window in which the histogram recorded nothing, e.g. when a stall of more than a second
 * began before its first sample, came out as NaN, which it read as an infinite delay. After such a stall it answered
 * 503 for a second whatever the threshold.)
 */
function eventLoopDelay(): { readonly delayMs: number; stop(): void } {
  let last = performance.now();
  let windowStart = last;
  let sum = 0;
  let samples = 0;
  let delayMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    sum += Math.max(0, now - last - RESOLUTION_MS);
    samples++;
    last = now;
    if (now - windowStart >= WINDOW_MS) {
      delayMs = sum / samples;
      sum = 0;
      samples = 0;
      windowStart = now;
    }
  }, RESOLUTION_MS);
  timer.unref();
  return { get delayMs() { return delayMs; }, stop: () => clearInterval(timer) };
}

/**
 * Load shedding: while the event loop's mean delay over the last window (see eventLoopDelay) exceeds `maxDelayMs`,
 * every request but those of routes with `config.loadShedding: false` gets 503 problem+json with Retry-After: 1.
 * The mean over a window, not a single late tick, so a short pause sheds nothing; a sustained lag does.
 */
export function installLoadShedding(app: FastifyInstance, maxDelayMs: number): void {
  const monitor = eventLoopDelay();
  app.addHook('onClose', async () => monitor.stop());
  app.addHook('onRequest', async (request) => {
    const delayMs = monitor.delayMs;
    if (delayMs <= maxDelayMs || request.routeOptions.config?.loadShedding === false) return;
    throw new Overloaded(Math.round(delayMs), maxDelayMs);
  });
}
