import { AggregateField, FieldValue, Timestamp, type Firestore } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, isAlreadyExists, readDocument } from "../core/documents";
import { pendingCountStore } from "../metrics/pending-count-store";

/**
 * `modules/{moduleId}/downloadShards/{day}-{shard}`: download counts of a module, per UTC day and
 * per version, spread over `shards` documents a day (Firebase's distributed-counter pattern), so
 * a popular module's downloads never contend on one document: downloads are atomic increments of
 * a random shard. Totals are a sum aggregation. Each batch also records its downloads for the
 * analytics (§28, metrics/pending-count-store.ts): the group-commit counter
 * (download-counter.ts) batches a burst into few writes, each under an id it records in
 * `countedBatches/{id}` (kept a week: `expireAt` is its TTL field) so that it counts once.
 */

export interface DownloadCount {
  moduleId: string;
  version: string;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  downloads: number;
}

/** How long a counted batch's id is kept (`countedBatches`' TTL): far longer than any retry of its write. */
const COUNTED_BATCH_KEPT_MS = 7 * 24 * 3600 * 1000;

const shardDocument = z.object({ day: z.string(), count: z.number(), versions: z.record(z.string(), z.number()).optional() });

export function downloadStore(db: Firestore, shards: number) {
  const collection = (moduleId: string) => documentAt(db.collection("modules"), moduleId).collection("downloadShards");
  return withDeadlines("Firestore", {
    /**
     * Adds downloads in one atomic batch: each (module, day, version) to a random shard of its day,
     * with `countedBatches/{batchId}` created in the same commit, so that the same batch written
     * again (its first write landed, unseen) is refused whole and answered as done: each batch
     * counts once.
     */
    async add(counts: DownloadCount[], batchId: string, now: Date): Promise<void> {
      const batch = db.batch();
      batch.create(documentAt(db.collection("countedBatches"), batchId), { expireAt: Timestamp.fromMillis(now.getTime() + COUNTED_BATCH_KEPT_MS) });
      for (const { moduleId, version, day, downloads } of counts) {
        const shard = Math.floor(Math.random() * shards);
        batch.set(
          documentAt(collection(moduleId), `${day}-${shard}`),
          { day, count: FieldValue.increment(downloads), versions: { [version]: FieldValue.increment(downloads) } },
          { merge: true },
        );
      }
      // What the analytics count (§28), in the same batch: one record, whatever the shards.
      pendingCountStore(db).addIn(batch, counts.map(({ moduleId, version, day, downloads }) => ({ moduleId, day, metric: "downloads", amount: downloads, version })));
      try {
        await batch.commit();
      } catch (error) {
        // Written before: this batch is counted already.
        if (!isAlreadyExists(error)) throw error;
      }
    },
    /** Downloads per UTC day from `from` to `to` (YYYY-MM-DD, inclusive), with their versions: one range query over the shards. */
    async daily(moduleId: string, from: string, to: string): Promise<Map<string, { downloads: number; versions: Record<string, number> }>> {
      const snapshot = await collection(moduleId).where("day", ">=", from).where("day", "<=", to).get();
      const days = new Map<string, { downloads: number; versions: Record<string, number> }>();
      for (const doc of snapshot.docs) {
        const { day, count, versions } = readDocument(shardDocument, doc)!;
        const entry = days.get(day) ?? { downloads: 0, versions: {} };
        entry.downloads += count;
        for (const [version, n] of Object.entries(versions ?? {})) entry.versions[version] = (entry.versions[version] ?? 0) + n;
        days.set(day, entry);
      }
      return days;
    },
    /** Every module's downloads in one collection-group read of every shard: only for building a search catalog from scratch. */
    async totals(): Promise<Map<string, number>> {
      const totals = new Map<string, number>();
      for (const doc of (await db.collectionGroup("downloadShards").get()).docs) {
        const moduleId = doc.ref.parent.parent!.id;
        totals.set(moduleId, (totals.get(moduleId) ?? 0) + (Number(doc.get("count")) || 0));
      }
      return totals;
    },
    async total(moduleId: string): Promise<number> {
      const snapshot = await collection(moduleId).aggregate({ total: AggregateField.sum("count") }).get();
      return snapshot.data().total ?? 0;
    },
  });
}
