import { LRUCache } from 'lru-cache';

/** lru-cache wants max >= 1. */
export function lruCache<K extends {}, V extends {}>(max: number, clock?: () => number): LRUCache<K, V> | undefined {
  if (!(max > 0)) return undefined;
  return new LRUCache<K, V>({ max, ttlResolution: 0, ...(clock && { perf: { now: clock } }) });
}

/** lru-cache reads ttl 0 as forever. */
export function keep<K extends {}, V extends {}>(cache: LRUCache<K, V> | undefined, key: K, value: V, ttlMs = Infinity): void {
  if (cache === undefined || !(ttlMs > 0)) return;
  cache.set(key, value, ttlMs === Infinity ? undefined : expiringIn(ttlMs));
}

/** lru-cache keeps an entry while age <= ttl. */
function expiringIn(ttlMs: number): { ttl: number } {
  return { ttl: ttlMs - 0.5 };
}
