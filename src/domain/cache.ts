import { LRUCache } from 'lru-cache';

/**
 * The service's caches are lru-cache's LRUCache, made here with the service's conventions: an injected clock (read on
 * every check: ttlResolution 0, so a test's clock moves at once) and a size of 0 meaning no cache at all
 * (CREDENTIAL_CACHE_SIZE=0; lru-cache wants at least 1).
 */
export function lruCache<K extends {}, V extends {}>(max: number, clock?: () => number): LRUCache<K, V> | undefined {
  if (!(max > 0)) return undefined;
  return new LRUCache<K, V>({ max, ttlResolution: 0, ...(clock && { perf: { now: clock } }) });
}

/** Keeps `value` for ttlMs: Infinity until evicted, 0 or less not at all (lru-cache would read a ttl of 0 as forever). */
export function keep<K extends {}, V extends {}>(cache: LRUCache<K, V> | undefined, key: K, value: V, ttlMs = Infinity): void {
  if (cache === undefined || !(ttlMs > 0)) return;
  cache.set(key, value, ttlMs === Infinity ? undefined : expiringIn(ttlMs));
}

/**
 * Set options that expire an entry `ttlMs` after it is set. lru-cache keeps an entry while its age is at most its ttl;
 * the service's caches drop it at age `ttlMs` exactly (tests check that boundary): with a clock counting whole
 * milliseconds (Date.now), a ttl half a millisecond shorter is that.
 */
function expiringIn(ttlMs: number): { ttl: number } {
  return { ttl: ttlMs - 0.5 };
}
