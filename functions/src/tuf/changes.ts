import type { TargetFile } from "@tufjs/models";
import { catalogChanges } from "../core/catalog-changes";
import { withinDeadline } from "../core/deadline";
import { eventOutbox } from "../core/event-outbox";
import { moduleStore, type VersionRecord } from "../marketplace/module-store";
import { binTargets } from "./metadata";
import { BINS_PER_COMMIT, nextOnlineRoles, nextVersionsWanted, onlineSignerFor, TUF_TOPIC, TufNotReadyError, writeChange, type TufDeps } from "./online-roles";
import { isRotating, tufRepositoryStore } from "./repository-store";
import { binOf, dueForResign, isListedTarget, targetFileOf, targetPath } from "./rules";

/** The TUF repository's online changes (§23): following the catalog, and re-signing what expires. */

/**
 * Brings the targets of the versions these outbox events name (publish, revoke, unrevoke) to what
 * the catalog says now, in one transaction: the bins that changed get new versions, with a new
 * snapshot and timestamp; when nothing changed (a repeat, an event another instance applied
 * already) nothing new is written. Then the events are marked done. The transaction reads what
 * is true now, not the events, so taking an event twice is harmless, and it leaves the event
 * documents to the webhooks' fan-out, which updates them at the same moment (both in one
 * transaction stalled each other for seconds). Events wait (stay pending) while the repository
 * is not initialised or a rotation is under way.
 */
export async function applyTargetChanges(deps: TufDeps, eventIds: string[]): Promise<{ applied: number; changedBins: number }> {
  const outbox = eventOutbox(deps.db);
  const modules = moduleStore(deps.db);
  const store = tufRepositoryStore(deps.db);
  const events = (await withinDeadline("Firestore (tuf)", deps.db.getAll(...eventIds.map((id) => outbox.ref(id))))).map((snapshot) => outbox.read(snapshot)).filter((event) => event?.tufPending);
  if (events.length === 0) return { applied: 0, changedBins: 0 };
  const result = await withinDeadline(
    "Firestore (tuf)",
    deps.db.runTransaction(async (tx) => {
      const state = await store.stateIn(tx);
      const now = deps.clock();
      if (!state || isRotating(state, now)) return { applied: 0, changedBins: 0 };
      const signer = onlineSignerFor(state, deps.tufOnlineSigners);
      // What the catalog says now about every version the events name, by bin and path.
      const wanted = new Map<string, Map<string, TargetFile | null>>();
      const byModule = new Map<string, Set<string> | "all">();
      for (const event of events) {
        const moduleId = String(event!.data.moduleId);
        const version = event!.data.version;
        const known = byModule.get(moduleId);
        if (typeof version !== "string") byModule.set(moduleId, "all");
        else if (known !== "all") byModule.set(moduleId, (known ?? new Set()).add(version));
      }
      for (const [moduleId, versions] of byModule) {
        const module = modules.readModule(await tx.get(modules.moduleRef(moduleId)));
        const records: (VersionRecord | null)[] =
          versions === "all" ? await modules.versionsIn(tx, moduleId) : (await tx.getAll(...[...versions].map((version) => modules.versionRef(moduleId, version)))).map((snapshot) => modules.readVersion(snapshot));
        for (const record of records) {
          if (!record) continue;
          const path = targetPath(moduleId, record.version);
          const bin = binOf(path);
          if (!wanted.has(bin)) wanted.set(bin, new Map());
          wanted.get(bin)!.set(path, module && isListedTarget(record, module) ? targetFileOf({ ...record, publisherId: module.publisherId }) : null);
        }
      }
      const touched = [...wanted.keys()];
      const current = await store.filesIn(tx, touched.map((name) => ({ role: name, version: state.bins[name].version })));
      const changed = new Map<string, TargetFile[]>();
      touched.forEach((name, index) => {
        const targets = new Map(binTargets(current[index]!).map((target) => [target.path, target]));
        let differs = false;
        for (const [path, target] of wanted.get(name)!) {
          const before = targets.get(path);
          if (target && !(before && before.equals(target))) {
            targets.set(path, target);
            differs = true;
          } else if (!target && before) {
            targets.delete(path);
            differs = true;
          }
        }
        if (differs) changed.set(name, [...targets.values()]);
      });
      if (changed.size > 0) {
        const free = await store.freeVersionsIn(tx, nextVersionsWanted(state, changed.keys(), true));
        writeChange(deps, tx, nextOnlineRoles(state, changed, { snapshot: true }, signer, now, free), now);
      }
      return { applied: events.length, changedBins: changed.size };
    }),
  );
  if (result.changedBins > 0) catalogChanges(deps.db).applied([TUF_TOPIC]);
  if (result.applied > 0) await withinDeadline("Firestore (tuf)", outbox.markTufApplied(events.map((event) => event!.id)));
  return result;
}

/**
 * Re-signs the online roles: with `all`, timestamp, snapshot and every bin, each with a new
 * version and a fresh expiry (`tuf resign`); otherwise only what expires within half its period
 * (the scheduled re-sign). Bins go 32 to a transaction, each one a consistent repository.
 */
export async function resignOnlineRoles(deps: TufDeps, options: { all: boolean }): Promise<{ bins: number; snapshot: boolean; timestamp: boolean } | null> {
  const store = tufRepositoryStore(deps.db);
  const done = new Set<string>();
  const outcome = { bins: 0, snapshot: false, timestamp: false };
  for (;;) {
    const step = await withinDeadline(
      "Firestore (tuf resign)",
      deps.db.runTransaction(async (tx) => {
        const state = await store.stateIn(tx);
        if (!state) return null;
        const now = deps.clock();
        if (isRotating(state, now)) throw new TufNotReadyError("A key rotation is under way: re-sign when it is done.");
        const signer = onlineSignerFor(state, deps.tufOnlineSigners);
        const chunk = Object.entries(state.bins)
          .filter(([name, bin]) => !done.has(name) && (options.all || dueForResign(bin.expires, "bins", now)))
          .slice(0, BINS_PER_COMMIT)
          .map(([name]) => name);
        const first = done.size === 0;
        const snapshot = chunk.length > 0 || (first && (options.all || dueForResign(state.snapshot.expires, "snapshot", now)));
        const timestamp = snapshot || (first && (options.all || dueForResign(state.timestamp.expires, "timestamp", now)));
        if (!timestamp) return { chunk, snapshot, timestamp };
        const current = await store.filesIn(tx, chunk.map((name) => ({ role: name, version: state.bins[name].version })));
        const bins = new Map(chunk.map((name, index) => [name, binTargets(current[index]!)]));
        const free = await store.freeVersionsIn(tx, nextVersionsWanted(state, chunk, snapshot));
        writeChange(deps, tx, nextOnlineRoles(state, bins, { snapshot }, signer, now, free), now);
        return { chunk, snapshot, timestamp };
      }),
    );
    if (!step) return null;
    if (step.timestamp) catalogChanges(deps.db).applied([TUF_TOPIC]);
    step.chunk.forEach((name) => done.add(name));
    outcome.bins += step.chunk.length;
    outcome.snapshot ||= step.snapshot;
    outcome.timestamp ||= step.timestamp;
    if (step.chunk.length === 0) return outcome;
  }
}
