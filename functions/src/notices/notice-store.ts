import { Timestamp, type DocumentSnapshot, type Firestore, type Transaction, type WriteBatch } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, timestamp, oncePerDatabase } from "../core/documents";
import { NOTICE_CATEGORIES, NOTICE_SOURCES, type NoticeCategory, type NoticeSource } from "./rules";

/**
 * `notices/{id}`: one notice (contract §30) as received: what it targets (resolved: a review's
 * module is recorded with it), why, who sent it and how (a trusted flagger's come first), and
 * once decided, the decision's id. The reporter's name and email are for the operators and the
 * statement sent to the reporter; no answer to the affected side carries them.
 */

const noticeDocument = z.object({
  moduleId: z.string(),
  version: z.string().nullable(),
  reviewId: z.string().nullable(),
  category: z.enum(NOTICE_CATEGORIES),
  explanation: z.string(),
  reporter: z.object({ name: z.string().nullable(), email: z.string().nullable(), uid: z.string().nullable() }),
  source: z.enum(NOTICE_SOURCES),
  /** 0 for a trusted flagger's notice, 1 for any other: the queue's first order. */
  priority: z.number().int(),
  appealTokenHash: z.string(),
  status: z.enum(["open", "decided"]),
  decisionId: z.string().nullable(),
  receivedAt: timestamp,
});

export interface NoticeRecord {
  id: string;
  moduleId: string;
  version: string | null;
  reviewId: string | null;
  category: NoticeCategory;
  explanation: string;
  reporter: { name: string | null; email: string | null; uid: string | null };
  source: NoticeSource;
  appealTokenHash: string;
  status: "open" | "decided";
  decisionId: string | null;
  receivedAt: Date;
}

export const noticeStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("notices");
  const read = (snapshot: DocumentSnapshot): NoticeRecord | null => {
    const stored = readDocument(noticeDocument, snapshot);
    if (!stored) return null;
    const { priority: _priority, receivedAt, ...fields } = stored;
    return { id: snapshot.id, ...fields, receivedAt: receivedAt.toDate() };
  };
  return {
    create(batch: WriteBatch, notice: NoticeRecord): void {
      const { id, receivedAt, ...fields } = notice;
      batch.create(documentAt(collection, id), { ...fields, priority: notice.source === "trusted_flagger" ? 0 : 1, receivedAt: Timestamp.fromDate(receivedAt) });
    },
    async getIn(tx: Transaction, id: string): Promise<NoticeRecord | null> {
      return read(await tx.get(documentAt(collection, id)));
    },
    /** A decision on it (§30), or (null) none any more: a reversed `no_action` puts it back in the queue. */
    setDecision(tx: Transaction, id: string, decisionId: string | null): void {
      tx.update(documentAt(collection, id), { status: decisionId ? "decided" : "open", decisionId });
    },
    ...withDeadlines("Firestore", {
      async get(id: string): Promise<NoticeRecord | null> {
        return read(await documentAt(collection, id).get());
      },
      /** The queue: a status's notices, trusted flaggers' first, then oldest first. */
      async queue(status: "open" | "decided", limit: number): Promise<NoticeRecord[]> {
        const snapshot = await collection.where("status", "==", status).orderBy("priority").orderBy("receivedAt").limit(limit).get();
        return snapshot.docs.map((doc) => read(doc)!);
      },
      /** The category and source of every notice received in [start, end): what the transparency figures count. */
      async countedBetween(start: Date, end: Date): Promise<{ category: NoticeCategory; source: NoticeSource }[]> {
        const snapshot = await collection.where("receivedAt", ">=", Timestamp.fromDate(start)).where("receivedAt", "<", Timestamp.fromDate(end)).select("category", "source").get();
        return snapshot.docs.map((doc) => ({ category: doc.get("category") as NoticeCategory, source: doc.get("source") as NoticeSource }));
      },
    }),
  };
});
