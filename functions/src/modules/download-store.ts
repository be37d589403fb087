import { AggregateField, FieldValue, type Firestore } from "firebase-admin/firestore";
import { withDeadlines } from "../core/deadline";

/**
 * `modules/{moduleId}/downloadShards/{day}-{shard}`: download counts of a module, per UTC day and
 * per version, spread over `shards` documents a day (Firebase's distributed-counter pattern), so
 * a popular module's downloads never contend on one document: downloads are atomic increments of
 * a random shard. Totals are a sum aggregation.
 */

export interface DownloadCount {
  moduleId: string;
  version: string;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  downloads: number;
}

export const utcDay = (at: Date) => at.toISOString().slice(0, 10);

export function downloadStore(db: Firestore, shards: number) {
  const collection = (moduleId: string) => db.collection("modules").doc(moduleId).collection("downloadShards");
  return withDeadlines("Firestore", {
    /** Adds downloads in one atomic batch: each (module, day, version) to a random shard of its day. */
    async add(counts: DownloadCount[]): Promise<void> {
      const batch = db.batch();
      for (const { moduleId, version, day, downloads } of counts) {
        const shard = Math.floor(Math.random() * shards);
        batch.set(
          collection(moduleId).doc(`${day}-${shard}`),
          { day, count: FieldValue.increment(downloads), versions: { [version]: FieldValue.increment(downloads) } },
          { merge: true },
        );
      }
      await batch.commit();
    },
    async total(moduleId: string): Promise<number> {
      const snapshot = await collection(moduleId).aggregate({ total: AggregateField.sum("count") }).get();
      return snapshot.data().total ?? 0;
    },
  });
}
