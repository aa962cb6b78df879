/**
 * A map whose entries remember when they were last used, for caches that drop their least recently used
 * entries past a bound. A use only stamps its entry. Moving the entry to the end of a `Map` on every use
 * (the usual way to keep a `Map` in use order) rewrites the map's table every few uses, and V8 leaves each
 * old table pointing at its successor and at the entries it held, which young-generation collections then
 * keep alive (pending-replies.ts). The bound is the caller's: it asks for the entries least used first
 * when it is over it, a sort per eviction rather than work per use.
 */
export class UseStampedMap<K, V> {
  private readonly entries = new Map<K, { value: V; used: number }>();
  private uses = 0;

  get size(): number {
    return this.entries.size;
  }

  /** The value under `key`, stamped as used now. */
  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    entry.used = ++this.uses;
    return entry.value;
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  /** Sets the value under `key`, used now. */
  set(key: K, value: V): void {
    this.entries.set(key, { value, used: ++this.uses });
  }

  /**
   * Sets the value under `key`, used now, keeping at most `limit` entries: a new key that finds the map
   * full first drops the least recently used quarter of it.
   */
  setWithin(key: K, value: V, limit: number): void {
    if (this.entries.size >= limit && !this.entries.has(key)) {
      for (const old of this.leastUsedFirst().slice(0, Math.max(1, Math.floor(limit / 4)))) this.entries.delete(old);
    }
    this.set(key, value);
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  /** The keys, least recently used first. */
  leastUsedFirst(): K[] {
    return [...this.entries].sort((a, b) => a[1].used - b[1].used).map(([key]) => key);
  }
}
