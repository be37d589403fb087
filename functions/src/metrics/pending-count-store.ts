import { FieldValue, type Firestore, type Transaction, type WriteBatch } from "firebase-admin/firestore";
import { z } from "zod";
import { oncePerDatabase, readDocument, timestamp } from "../core/documents";
import type { MetricCount } from "./metric-store";

/**
 * `pendingCounts/{autoId}`: what a change counts (§28), written in the change's own batch or
 * transaction (`addIn`) as a document of its own, so that counting takes no lock, never slows or
 * fails what it counts, and counts exactly once: the record commits with the change or not at
 * all. The count folder (analytics/count-folder.ts) adds the records to the month documents and
 * deletes them in one transaction. Devices' counts ride on their activity document instead
 * (device-activity-store.ts), so that an update check writes one document.
 */

const countSchema = z.object({
  moduleId: z.string(),
  day: z.string(),
  metric: z.string(),
  amount: z.number(),
  currency: z.string().optional(),
  version: z.string().optional(),
  platform: z.string().optional(),
  onlySplits: z.boolean().optional(),
});
export const metricCountList = z.array(countSchema);
const pendingDocument = z.object({ counts: metricCountList, at: timestamp });

/** Counts as stored: no field left undefined (Firestore refuses it), none that adds nothing. */
export const storedCounts = (counts: readonly MetricCount[]): MetricCount[] =>
  counts.filter((count) => count.amount !== 0).map((count) => JSON.parse(JSON.stringify(count)) as MetricCount);

export interface PendingCounts {
  ref: FirebaseFirestore.DocumentReference;
  counts: MetricCount[];
}

export const pendingCountStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("pendingCounts");
  return {
    /** Records what a change counts in its batch or transaction: one new document, nothing read. */
    addIn(writer: Transaction | WriteBatch, counts: readonly MetricCount[]): void {
      const stored = storedCounts(counts);
      if (stored.length === 0) return;
      (writer as WriteBatch).create(collection.doc(), { counts: stored, at: FieldValue.serverTimestamp() });
    },
    /** The oldest records, read (and so held) by the folder's transaction. */
    async oldestIn(tx: Transaction, limit: number): Promise<PendingCounts[]> {
      const snapshot = await tx.get(collection.orderBy("at").limit(limit));
      return snapshot.docs.map((doc) => ({ ref: doc.ref, counts: readDocument(pendingDocument, doc)!.counts }));
    },
    deleteIn(tx: Transaction, records: readonly PendingCounts[]): void {
      for (const record of records) tx.delete(record.ref);
    },
  };
});
