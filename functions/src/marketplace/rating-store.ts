import { FieldValue, type Firestore, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, oncePerDatabase } from "../core/documents";
import type { RatingFigures } from "./ranking";

/**
 * `modules/{moduleId}/ratingShards/{n}`: a module's rating figures (count, sum, and the count of
 * each star), spread over a few documents as the download counters are, so that a hundred reviews
 * written at once each change one shard in their own transaction and never contend on one
 * document; the figures are the shards' sum, exact.
 */

export const RATING_SHARDS = 10;
export const STARS = ["1", "2", "3", "4", "5"] as const;

const shardDocument = z.object({ count: z.number(), sum: z.number(), histogram: z.record(z.string(), z.number()).optional() });

export interface RatingSummary extends RatingFigures {
  histogram: Record<(typeof STARS)[number], number>;
}

const emptySummary = (): RatingSummary => ({ count: 0, sum: 0, histogram: { "1": 0, "2": 0, "3": 0, "4": 0, "5": 0 } });

export const ratingStore = oncePerDatabase((db: Firestore) => {
  const shards = (moduleId: string) => documentAt(db.collection("modules"), moduleId).collection("ratingShards");
  const add = (summary: RatingSummary, data: unknown) => {
    const shard = shardDocument.safeParse(data);
    if (!shard.success) return;
    summary.count += shard.data.count;
    summary.sum += shard.data.sum;
    for (const star of STARS) summary.histogram[star] += shard.data.histogram?.[star] ?? 0;
  };
  return withDeadlines("Firestore", {
    /** A module's figures: one small query. */
    async summary(moduleId: string): Promise<RatingSummary> {
      const summary = emptySummary();
      for (const doc of (await shards(moduleId).get()).docs) add(summary, doc.data());
      return summary;
    },
    /** The figures of several modules (those without reviews are left out). */
    async figures(moduleIds: string[]): Promise<Map<string, RatingFigures>> {
      const summaries = new Map<string, RatingSummary>();
      if (moduleIds.length > 200) {
        // Many at once (a catalog built from scratch): every shard in one collection-group query.
        const wanted = new Set(moduleIds);
        for (const doc of (await db.collectionGroup("ratingShards").get()).docs) {
          const moduleId = doc.ref.parent.parent!.id;
          if (!wanted.has(moduleId)) continue;
          if (!summaries.has(moduleId)) summaries.set(moduleId, emptySummary());
          add(summaries.get(moduleId)!, doc.data());
        }
      } else {
        const found = await Promise.all(moduleIds.map(async (id) => [id, await this.summary(id)] as const));
        for (const [id, summary] of found) summaries.set(id, summary);
      }
      const figures = new Map<string, RatingFigures>();
      for (const [id, { count, sum }] of summaries) if (count > 0) figures.set(id, { count, sum });
      return figures;
    },
    /** Moves one random shard by a review's change: a rating added (+1), taken away (-1), or both. */
    changeIn(tx: Transaction, moduleId: string, change: { added?: number; removed?: number }): void {
      const histogram: Record<string, FieldValue> = {};
      let count = 0;
      let sum = 0;
      if (change.added) {
        count += 1;
        sum += change.added;
        histogram[String(change.added)] = FieldValue.increment(1);
      }
      if (change.removed) {
        count -= 1;
        sum -= change.removed;
        histogram[String(change.removed)] = change.added === change.removed ? FieldValue.increment(0) : FieldValue.increment(-1);
      }
      const shard = documentAt(shards(moduleId), String(Math.floor(Math.random() * RATING_SHARDS)));
      tx.set(shard, { count: FieldValue.increment(count), sum: FieldValue.increment(sum), histogram }, { merge: true });
    },
  });
});
