import type { Firestore } from "firebase-admin/firestore";
import { withinDeadline } from "../core/deadline";
import { moduleStore } from "../marketplace/module-store";
import { deviceActivityStore } from "../metrics/device-activity-store";
import { metricCounts, type MetricCount } from "../metrics/metric-store";
import { pendingCountStore } from "../metrics/pending-count-store";

/**
 * The count folder (§28): what changes counted waits in `pendingCounts` and on devices' activity;
 * the folder adds it to the month documents of each module, of its publisher and of the
 * marketplace, and deletes (or clears) what it added, in one transaction: a record is added once
 * whoever folds, whenever an instance stops. It alone writes the month documents, one transaction
 * at a time per caller, so each is written a few times a minute at most, whatever the load.
 * Deployed, `metricFold` runs it every minute; `npm start` every few seconds.
 */

/** Records folded per transaction (each deletes or clears its document; the month documents are a few more writes). */
export const FOLD_BATCH = 200;

export interface Folded {
  records: number;
  devices: number;
  transactions: number;
}

/** One transaction: the oldest records and some devices with counts, added and removed. */
async function foldStep(db: Firestore, owners: Map<string, string | null>): Promise<{ records: number; devices: number }> {
  const pending = pendingCountStore(db);
  const devices = deviceActivityStore(db);
  return withinDeadline(
    "Firestore (count folder)",
    db.runTransaction(async (tx) => {
      const records = await pending.oldestIn(tx, FOLD_BATCH);
      const withCounts = records.length < FOLD_BATCH ? await devices.pendingIn(tx, FOLD_BATCH - records.length) : [];
      const counts: MetricCount[] = [...records, ...withCounts].flatMap((source) => source.counts);
      // Each module's publisher: read outside the transaction (a module's owner is not what this folds), once per run.
      const unknown = [...new Set(counts.map((count) => count.moduleId))].filter((moduleId) => !owners.has(moduleId));
      const modules = unknown.length > 0 ? await moduleStore(db).getModules(unknown) : [];
      unknown.forEach((moduleId, index) => owners.set(moduleId, modules[index]?.developerId ?? null));
      metricCounts(db).applyIn(tx, counts, owners);
      pending.deleteIn(tx, records);
      devices.clearIn(tx, withCounts);
      return { records: records.length, devices: withCounts.length };
    }),
  );
}

/**
 * Folds until nothing waits or `budgetMs` has passed (a deployment's run ends before its next
 * one starts). Counts that arrive meanwhile wait for the next run.
 */
export async function foldCounts(db: Firestore, options: { budgetMs: number } = { budgetMs: 50_000 }): Promise<Folded> {
  const started = Date.now();
  const owners = new Map<string, string | null>();
  const folded: Folded = { records: 0, devices: 0, transactions: 0 };
  for (;;) {
    const step = await foldStep(db, owners);
    folded.records += step.records;
    folded.devices += step.devices;
    folded.transactions += 1;
    if (step.records + step.devices < FOLD_BATCH || Date.now() - started >= options.budgetMs) return folded;
  }
}
