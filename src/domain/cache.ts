import { LRUCache } from 'lru-cache';

/** An injected clock read on every check (ttlResolution 0); size 0 means no cache (lru-cache wants at least 1). */
export function lruCache<K extends {}, V extends {}>(max: number, clock?: () => number): LRUCache<K, V> | undefined {
  if (!(max > 0)) return undefined;
  return new LRUCache<K, V>({ max, ttlResolution: 0, ...(clock && { perf: { now: clock } }) });
}

/** 0 or less: not at all (lru-cache reads a ttl of 0 as forever). */
export function keep<K extends {}, V extends {}>(cache: LRUCache<K, V> | undefined, key: K, value: V, ttlMs = Infinity): void {
  if (cache === undefined || !(ttlMs > 0)) return;
  cache.set(key, value, ttlMs === Infinity ? undefined : expiringIn(ttlMs));
}

/** lru-cache keeps an entry while its age is at most its ttl; ours drop it at exactly `ttlMs` (whole-ms clock). */
function expiringIn(ttlMs: number): { ttl: number } {
  return { ttl: ttlMs - 0.5 };
}
