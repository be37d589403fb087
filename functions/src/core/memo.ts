/**
 * A small in-memory cache for data every caller sees alike (public collections), kept per app
 * instance for a short time: a warm instance answers from memory, and a change is visible
 * everywhere within `ttlMs`. Concurrent misses of one key share one load; failures are not kept.
 */
export interface Memo<V> {
  get(key: string, load: () => Promise<V>): Promise<V>;
  /** Drops a key, so that the next get loads it (after a change this instance made itself). */
  forget(key: string): void;
}

export function memo<V>(options: { ttlMs: number; maxEntries: number; clock?: () => number }): Memo<V> {
  const now = options.clock ?? Date.now;
  const entries = new Map<string, { value: Promise<V>; expiresAt: number }>();
  return {
    get(key, load) {
      if (options.ttlMs <= 0) return load();
      const hit = entries.get(key);
      if (hit && hit.expiresAt > now()) return hit.value;
      if (entries.size >= options.maxEntries) {
        for (const [stale, entry] of entries) if (entry.expiresAt <= now()) entries.delete(stale);
        // Still full of live entries: drop the oldest.
        if (entries.size >= options.maxEntries) entries.delete(entries.keys().next().value!);
      }
      const value = load();
      entries.set(key, { value, expiresAt: now() + options.ttlMs });
      value.catch(() => entries.delete(key));
      return value;
    },
    forget(key) {
      entries.delete(key);
    },
  };
}
