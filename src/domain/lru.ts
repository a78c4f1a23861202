/**
 * A bounded least-recently-used map with an optional expiry per entry (Map keeps insertion order: a hit re-inserts
 * the key at the end, and the oldest key is evicted first). Expiry is checked on read against the clock handed in.
 *
 * A hit on an entry inserted or moved within the last maxEntries / 2 writes leaves it where it is: it is in the newer
 * half of the order already, and a hot entry is then a Map lookup, not a delete and an insert per read.
 */
export class LruCache<K, V> {
  private readonly map = new Map<K, { value: V; expires: number; stamp: number }>();
  /** Counts insertions and moves: an entry's stamp tells how recently it was put at the end. */
  private stamp = 0;
  private readonly recent: number;

  constructor(
    private readonly maxEntries: number,
    private readonly clock: () => number = Date.now,
  ) {
    if (!Number.isInteger(maxEntries) || maxEntries < 0) throw new RangeError('maxEntries must be an integer >= 0');
    this.recent = Math.floor(maxEntries / 2);
  }

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    const e = this.map.get(key);
    if (e === undefined) return undefined;
    if (e.expires !== Infinity && e.expires <= this.clock()) {
      this.map.delete(key);
      return undefined;
    }
    if (this.stamp - e.stamp >= this.recent) {
      this.map.delete(key);
      e.stamp = ++this.stamp;
      this.map.set(key, e);
    }
    return e.value;
  }

  /** ttlMs: Infinity (default) never expires; <= 0 does not store. */
  set(key: K, value: V, ttlMs = Infinity): void {
    if (this.maxEntries === 0 || !(ttlMs > 0)) return;
    this.map.delete(key);
    this.map.set(key, { value, expires: ttlMs === Infinity ? Infinity : this.clock() + ttlMs, stamp: ++this.stamp });
    while (this.map.size > this.maxEntries) {
      const oldest = this.map.keys().next().value as K;
      this.map.delete(oldest);
    }
  }

  delete(key: K): void {
    this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
  }
}
