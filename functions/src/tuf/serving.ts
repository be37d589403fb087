import { catalogCache } from "../core/catalog-changes";
import type { Deps } from "../deps";
import { TUF_TOPIC } from "./online-roles";
import { tufRepositoryStore, type RepositoryState } from "./repository-store";

/**
 * The files under tuf/metadata/, kept in this instance's memory under the repository's catalog
 * topic: a versioned file never changes once written, and `timestamp.json` and any file not yet
 * written are read again once a change moved the topic (within the feed's 2 s on every
 * instance, at once on the one that made it) and never kept longer than `ttlMs`.
 */
export function metadataReader(deps: Pick<Deps, "db">, ttlMs: number) {
  const store = tufRepositoryStore(deps.db);
  const files = catalogCache<string | null>(deps.db, { ttlMs, maxEntries: 512 });
  const states = catalogCache<RepositoryState | null>(deps.db, { ttlMs, maxEntries: 1 });
  const state = () => states.get("state", TUF_TOPIC, () => store.state());
  return {
    timestamp: async () => (await state())?.timestamp.json ?? null,
    // Only what a committed state names (its version or an older one) is served, and so cached as immutable.
    versioned: async (role: string, version: number) => {
      const current = await state();
      return current ? files.get(`${version}.${role}`, TUF_TOPIC, () => store.servedFile(current, role, version)) : null;
    },
  };
}
