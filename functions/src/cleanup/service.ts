import { STORED_PREFIXES } from "../core/storage-paths";
import type { OperatorDeps } from "../deps";
import { moduleStore } from "../marketplace/module-store";
import { releaseStore } from "../releases/release-store";

/**
 * Packages and installers that no document references, left by a request that died between
 * storing an object and recording it (or by a recording that never landed after a deadline).
 * Objects younger than the grace period are kept: their document may still be on its way.
 */
const ORPHAN_GRACE_MS = 60 * 60 * 1000;

export async function removeOrphanedObjects({ db, store, clock }: Pick<OperatorDeps, "db" | "store" | "clock">, graceMs = ORPHAN_GRACE_MS) {
  const cutoff = clock().getTime() - graceMs;
  const [packages, installers] = await Promise.all([moduleStore(db).storagePaths(), releaseStore(db).storagePaths()]);
  const referenced = new Set([...packages, ...installers]);
  let checked = 0;
  const removed: string[] = [];
  for (const prefix of STORED_PREFIXES) {
    for await (const object of store.list(prefix)) {
      checked += 1;
      if (referenced.has(object.path) || object.createdAt.getTime() > cutoff) continue;
      await store.delete(object.path);
      removed.push(object.path);
    }
  }
  return { checked, removed };
}
