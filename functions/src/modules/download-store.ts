import { AggregateField, FieldValue, type Firestore } from "firebase-admin/firestore";
import { withDeadlines } from "../core/deadline";

/**
 * `modules/{moduleId}/downloadShards/{day}-{shard}`: download counts of a module, per UTC day and
 * per version, spread over `shards` documents a day (Firebase's distributed-counter pattern), so
 * a popular module's downloads never contend on one document: downloads are atomic increments of
 * a random shard. Totals are a sum aggregation; daily figures a range query.
 */

export interface DailyDownloads {
  date: string;
  downloads: number;
  versions: Record<string, number>;
}

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
    /** Downloads per day from `from` to `to` (UTC days, inclusive), days without any included as 0. */
    async daily(moduleId: string, from: string, to: string): Promise<DailyDownloads[]> {
      const snapshot = await collection(moduleId).where("day", ">=", from).where("day", "<=", to).get();
      const days = new Map<string, DailyDownloads>();
      for (let day = new Date(`${from}T00:00:00Z`); utcDay(day) <= to; day = new Date(day.getTime() + 86_400_000)) {
        days.set(utcDay(day), { date: utcDay(day), downloads: 0, versions: {} });
      }
      for (const doc of snapshot.docs) {
        const entry = days.get(doc.get("day") as string)!;
        entry.downloads += Number(doc.get("count") ?? 0);
        for (const [version, n] of Object.entries((doc.get("versions") as Record<string, number>) ?? {})) {
          entry.versions[version] = (entry.versions[version] ?? 0) + n;
        }
      }
      return [...days.values()];
    },
  });
}
