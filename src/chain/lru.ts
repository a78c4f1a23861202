/**
 * The ChainReader's caches (statuses, detected interfaces, txHashes): LRUCache from lru-cache, bounded by entries,
 * each entry expiring by the reader's injected clock (tests move a fake one). Every cache is owned by the reader that
 * made it.
 */
import { LRUCache } from 'lru-cache';

/**
 * An LRU cache of at most `max` entries, its ages measured on `clock`; undefined where `max` is 0 (lru-cache rejects
 * it): nothing is stored then.
 */
export function boundedCache<V extends {}>(max: number, clock: () => number): LRUCache<string, V> | undefined {
  const bound = Math.floor(max);
  if (!(bound > 0)) return undefined;
  // ttlResolution 0: every expiry check reads the clock; by default lru-cache reuses a reading for 1 ms of real time,
  // which a fake clock moved in between would not be seen through (and it costs a timer per check).
  return new LRUCache<string, V>({ max: bound, perf: { now: clock }, ttlResolution: 0 });
}

/**
 * Set options that expire an entry `ttlMs` after it is set. lru-cache keeps an entry while its age is at most its ttl;
 * these caches have always dropped it at age `ttlMs` exactly (the tests check that boundary): with a clock counting
 * whole milliseconds (Date.now), a ttl half a millisecond shorter is that.
 */
export function expiringIn(ttlMs: number): { ttl: number } {
  return { ttl: ttlMs - 0.5 };
}
