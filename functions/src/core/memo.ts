/**
 * A small in-memory cache, kept per app instance for at most `ttlMs`. An entry may carry a stamp
 * (core/catalog-changes.ts): it is served only to a get with the same stamp, so a change that
 * moved the stamp is seen at the next get. Concurrent misses of one key and stamp share one load;
 * failures are not kept.
 */
export interface Memo<V> {
  get(key: string, load: () => Promise<V>, stamp?: number): Promise<V>;
}

export function memo<V>(options: { ttlMs: number; maxEntries: number; clock?: () => number }): Memo<V> {
  const now = options.clock ?? Date.now;
  const entries = new Map<string, { value: Promise<V>; expiresAt: number; stamp: number | undefined }>();
  return {
    get(key, load, stamp) {
      if (options.ttlMs <= 0) return load();
      const hit = entries.get(key);
      if (hit && hit.expiresAt > now() && hit.stamp === stamp) return hit.value;
      entries.delete(key);
      if (entries.size >= options.maxEntries) {
        for (const [stale, entry] of entries) if (entry.expiresAt <= now()) entries.delete(stale);
        // Still full of live entries: drop the oldest.
        if (entries.size >= options.maxEntries) entries.delete(entries.keys().next().value!);
      }
      const value = load();
      const entry = { value, expiresAt: now() + options.ttlMs, stamp };
      entries.set(key, entry);
      value.catch(() => {
        if (entries.get(key) === entry) entries.delete(key);
      });
      return value;
    },
  };
}
