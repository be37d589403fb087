import { FieldValue, Timestamp, type DocumentSnapshot, type Firestore, type Query, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, timestamp, writeReadAsMissing, oncePerDatabase } from "../core/documents";

/**
 * `modules/{moduleId}/reviews/{uid}`: one review per user and module (contract §18), with the
 * owner's reply and its moderation state; `…/reports/{reporterUid}`: one report per person.
 * The review's public id is a random `rev_…`, never the author's uid.
 */

const replyFields = z.object({ body: z.string(), createdAt: timestamp, updatedAt: timestamp });

const reviewDocument = z.object({
  id: z.string(),
  rating: z.number().int().min(1).max(5),
  title: z.string().nullable(),
  body: z.string().nullable(),
  authorName: z.string().nullable(),
  version: z.string(),
  createdAt: timestamp,
  updatedAt: timestamp,
  /** Whether the review is shown and counted: false once an operator hides it. */
  visible: z.boolean(),
  hidden: z.object({ reason: z.string(), at: timestamp, by: z.string() }).optional(),
  reply: replyFields.optional(),
  /** Whether `reply` is there: what the publisher's "Unanswered" filter queries (§24). */
  replied: z.boolean().optional(),
  reports: z.number().int().nonnegative().optional(),
  lastReportedAt: timestamp.optional(),
});

export interface ReviewRecord {
  moduleId: string;
  uid: string;
  id: string;
  rating: number;
  title: string | null;
  body: string | null;
  authorName: string | null;
  version: string;
  createdAt: Date;
  updatedAt: Date;
  visible: boolean;
  hidden: { reason: string; at: Date; by: string } | null;
  reply: { body: string; createdAt: Date; updatedAt: Date } | null;
  reports: number;
  lastReportedAt: Date | null;
}

export const REVIEW_SORTS = ["newest", "rating_high", "rating_low"] as const;
export type ReviewSort = (typeof REVIEW_SORTS)[number];

/** A position in one of the orders: its rating, its creation time (ms), its public id. */
export type ReviewPosition = [number, number, string];

/** Reviews of one rating, or answered or not by the publisher (§24): these come newest first. */
export interface ReviewFilter {
  rating?: number;
  replied?: boolean;
}

export const reviewStore = oncePerDatabase((db: Firestore) => {
  const reviews = (moduleId: string) => documentAt(db.collection("modules"), moduleId).collection("reviews");
  const read = (snapshot: DocumentSnapshot): ReviewRecord | null => {
    const stored = readDocument(reviewDocument, snapshot);
    if (!stored) return null;
    return {
      moduleId: snapshot.ref.parent.parent!.id,
      uid: snapshot.id,
      ...stored,
      createdAt: stored.createdAt.toDate(),
      updatedAt: stored.updatedAt.toDate(),
      hidden: stored.hidden ? { ...stored.hidden, at: stored.hidden.at.toDate() } : null,
      reply: stored.reply ? { body: stored.reply.body, createdAt: stored.reply.createdAt.toDate(), updatedAt: stored.reply.updatedAt.toDate() } : null,
      reports: stored.reports ?? 0,
      lastReportedAt: stored.lastReportedAt?.toDate() ?? null,
    };
  };
  return withDeadlines("Firestore", {
    ref: (moduleId: string, uid: string) => documentAt(reviews(moduleId), uid),
    read,
    /** A module's review by its public id: one query on the automatic index of `id`. */
    async byId(moduleId: string, reviewId: string, tx?: Transaction): Promise<ReviewRecord | null> {
      const query = reviews(moduleId).where("id", "==", reviewId).limit(1);
      const snapshot = tx ? await tx.get(query) : await query.get();
      return snapshot.empty ? null : read(snapshot.docs[0]);
    },
    /**
     * A review by its public id, whatever its module (ids are unique across modules): one
     * collection-group query (its index: firestore.indexes.json's override of `reviews.id`).
     */
    async anyById(reviewId: string): Promise<ReviewRecord | null> {
      const snapshot = await db.collectionGroup("reviews").where("id", "==", reviewId).limit(1).get();
      return snapshot.empty ? null : read(snapshot.docs[0]);
    },
    /**
     * A page of a module's visible reviews in one order (newest first when filtered), after a
     * position (composite indexes in firestore.indexes.json).
     */
    async page(moduleId: string, sort: ReviewSort, limit: number, after?: ReviewPosition, filter: ReviewFilter = {}): Promise<{ reviews: ReviewRecord[]; more: boolean }> {
      let query: Query = reviews(moduleId).where("visible", "==", true);
      if (filter.rating !== undefined) query = query.where("rating", "==", filter.rating);
      if (filter.replied !== undefined) query = query.where("replied", "==", filter.replied);
      if (sort !== "newest") query = query.orderBy("rating", sort === "rating_high" ? "desc" : "asc");
      query = query.orderBy("createdAt", "desc").orderBy("id", "desc");
      if (after) {
        const [rating, createdAt, id] = after;
        const cursor = [Timestamp.fromMillis(createdAt), id];
        query = sort === "newest" ? query.startAfter(...cursor) : query.startAfter(rating, ...cursor);
      }
      const snapshot = await query.limit(limit + 1).get();
      return { reviews: snapshot.docs.slice(0, limit).map((doc) => read(doc)!), more: snapshot.size > limit };
    },
    /** The reviews people reported, most recently reported first (operators). */
    async reported(limit: number): Promise<ReviewRecord[]> {
      const snapshot = await db.collectionGroup("reviews").orderBy("lastReportedAt", "desc").limit(limit).get();
      return snapshot.docs.map((doc) => read(doc)!);
    },
    setIn(tx: Transaction, review: ReviewRecord): void {
      tx.set(documentAt(reviews(review.moduleId), review.uid), {
        id: review.id,
        rating: review.rating,
        title: review.title,
        body: review.body,
        authorName: review.authorName,
        version: review.version,
        createdAt: Timestamp.fromDate(review.createdAt),
        updatedAt: Timestamp.fromDate(review.updatedAt),
        visible: review.visible,
        ...(review.hidden ? { hidden: { ...review.hidden, at: Timestamp.fromDate(review.hidden.at) } } : {}),
        ...(review.reply ? { reply: { body: review.reply.body, createdAt: Timestamp.fromDate(review.reply.createdAt), updatedAt: Timestamp.fromDate(review.reply.updatedAt) } } : {}),
        replied: review.reply !== null,
        ...(review.reports > 0 ? { reports: review.reports } : {}),
        ...(review.lastReportedAt ? { lastReportedAt: Timestamp.fromDate(review.lastReportedAt) } : {}),
      });
    },
    /** A user's own review of a module, hidden or not. */
    async mine(moduleId: string, uid: string): Promise<ReviewRecord | null> {
      return read(await documentAt(reviews(moduleId), uid).get());
    },
    deleteIn(tx: Transaction, moduleId: string, uid: string): void {
      tx.delete(documentAt(reviews(moduleId), uid));
    },
    /** Records one person's report once: a repeat changes nothing. */
    async reportIn(tx: Transaction, review: ReviewRecord, reporter: string, reason: string, at: Date): Promise<boolean> {
      const report = documentAt(documentAt(reviews(review.moduleId), review.uid).collection("reports"), reporter);
      if ((await tx.get(report)).exists) return false;
      writeReadAsMissing(tx, report, { reason, at: Timestamp.fromDate(at) });
      tx.update(documentAt(reviews(review.moduleId), review.uid), "reports", FieldValue.increment(1), "lastReportedAt", Timestamp.fromDate(at));
      return true;
    },
  });
});
