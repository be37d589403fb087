import { Timestamp, type DocumentSnapshot, type Firestore, type Query, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, oncePerDatabase, readDocument, timestamp } from "../core/documents";
import { pageOfQuery, type CursorPosition } from "../core/pagination";
import { NOTICE_CATEGORIES, NOTICE_SOURCES, type NoticeCategory, type NoticeSource } from "../notices/rules";
import { CONTENT_TYPES, DECISION_GROUNDS, DECISION_KINDS, type AppealStatus, type ContentType, type DecisionGround, type DecisionKind } from "./rules";

/**
 * `moderationDecisions/{id}`: one decision on a notice (contract §30, the DSA's Art. 17), written
 * in the transaction of its effect. It names whom it affects (the module's publisher, or a
 * review's author) so each reads theirs, and keeps what the transparency figures count: the
 * notice's category, source and arrival. Each side's appeal is summed up on it, so one side's
 * second appeal is refused in the same transaction that reads it.
 */

const appealSummary = z.object({ id: z.string(), status: z.enum(["open", "upheld", "reversed"]), filedAt: timestamp, decidedAt: timestamp.nullable(), reasons: z.string().nullable() });

const decisionDocument = z.object({
  noticeId: z.string(),
  moduleId: z.string(),
  version: z.string().nullable(),
  reviewId: z.string().nullable(),
  contentType: z.enum(CONTENT_TYPES),
  category: z.enum(NOTICE_CATEGORIES),
  noticeSource: z.enum(NOTICE_SOURCES),
  noticeReceivedAt: timestamp,
  decision: z.enum(DECISION_KINDS),
  ground: z.enum(DECISION_GROUNDS),
  reference: z.string(),
  facts: z.string(),
  automated: z.boolean(),
  decidedAt: timestamp,
  decidedBy: z.string(),
  /** The module's publisher: theirs to read when the decision is about a module. */
  publisherId: z.string(),
  /** A review's author: theirs to read when the decision is about a review. */
  authorUid: z.string().nullable(),
  appeals: z.object({ affected: appealSummary.nullable(), reporter: appealSummary.nullable() }),
  /** When an appeal reversed it (its effect undone). */
  reversedAt: timestamp.nullable(),
});

export interface AppealSummary {
  id: string;
  status: AppealStatus;
  filedAt: Date;
  decidedAt: Date | null;
  reasons: string | null;
}

export interface DecisionRecord {
  id: string;
  noticeId: string;
  moduleId: string;
  version: string | null;
  reviewId: string | null;
  contentType: ContentType;
  category: NoticeCategory;
  noticeSource: NoticeSource;
  noticeReceivedAt: Date;
  decision: DecisionKind;
  ground: DecisionGround;
  reference: string;
  facts: string;
  automated: boolean;
  decidedAt: Date;
  decidedBy: string;
  publisherId: string;
  authorUid: string | null;
  appeals: { affected: AppealSummary | null; reporter: AppealSummary | null };
  reversedAt: Date | null;
}

const toDate = (value: Timestamp | null) => value?.toDate() ?? null;
const toStamp = (value: Date | null) => (value ? Timestamp.fromDate(value) : null);
const readSummary = (stored: z.output<typeof appealSummary> | null): AppealSummary | null =>
  stored && { ...stored, filedAt: stored.filedAt.toDate(), decidedAt: toDate(stored.decidedAt) };
const summaryData = (summary: AppealSummary | null) => summary && { ...summary, filedAt: Timestamp.fromDate(summary.filedAt), decidedAt: toStamp(summary.decidedAt) };

/** Only what the transparency figures read of each decision (a projection: no facts, no names). */
const FIGURE_FIELDS = ["decision", "ground", "noticeReceivedAt", "decidedAt"] as const;

export const decisionStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("moderationDecisions");
  const read = (snapshot: DocumentSnapshot): DecisionRecord | null => {
    const stored = readDocument(decisionDocument, snapshot);
    if (!stored) return null;
    return {
      id: snapshot.id,
      ...stored,
      noticeReceivedAt: stored.noticeReceivedAt.toDate(),
      decidedAt: stored.decidedAt.toDate(),
      appeals: { affected: readSummary(stored.appeals.affected), reporter: readSummary(stored.appeals.reporter) },
      reversedAt: toDate(stored.reversedAt),
    };
  };
  const data = ({ id: _id, ...decision }: DecisionRecord) => ({
    ...decision,
    noticeReceivedAt: Timestamp.fromDate(decision.noticeReceivedAt),
    decidedAt: Timestamp.fromDate(decision.decidedAt),
    appeals: { affected: summaryData(decision.appeals.affected), reporter: summaryData(decision.appeals.reporter) },
    reversedAt: toStamp(decision.reversedAt),
  });
  const page = async (query: Query, limit: number, after?: CursorPosition) => {
    const found = await pageOfQuery(query, "decidedAt", { limit, after });
    return { decisions: found.docs.map((doc) => read(doc)!), more: found.more, last: found.last };
  };
  return {
    create(tx: Transaction, decision: DecisionRecord): void {
      tx.create(documentAt(collection, decision.id), data(decision));
    },
    /** Replaces a decision the transaction read (an appeal filed or decided, a reversal). */
    set(tx: Transaction, decision: DecisionRecord): void {
      tx.set(documentAt(collection, decision.id), data(decision));
    },
    async getIn(tx: Transaction, id: string): Promise<DecisionRecord | null> {
      return read(await tx.get(documentAt(collection, id)));
    },
    ...withDeadlines("Firestore", {
      async get(id: string): Promise<DecisionRecord | null> {
        return read(await documentAt(collection, id).get());
      },
      /** A publisher's decisions about modules, newest first (index: publisherId, contentType, decidedAt). */
      async ofPublisher(publisherId: string, limit: number, after?: CursorPosition) {
        return page(collection.where("publisherId", "==", publisherId).where("contentType", "==", "module"), limit, after);
      },
      /** A review author's decisions, newest first (index: authorUid, decidedAt). */
      async ofAuthor(uid: string, limit: number, after?: CursorPosition) {
        return page(collection.where("authorUid", "==", uid), limit, after);
      },
      /** Decisions made in [start, end), newest first: the public database. */
      async decidedBetween(start: Date, end: Date, limit: number, after?: CursorPosition) {
        return page(collection.where("decidedAt", ">=", Timestamp.fromDate(start)).where("decidedAt", "<", Timestamp.fromDate(end)), limit, after);
      },
      /** What the transparency figures count of every decision made in [start, end). */
      async figuresBetween(start: Date, end: Date): Promise<{ decision: DecisionKind; ground: DecisionGround; noticeReceivedAt: Date; decidedAt: Date }[]> {
        const snapshot = await collection
          .where("decidedAt", ">=", Timestamp.fromDate(start))
          .where("decidedAt", "<", Timestamp.fromDate(end))
          .select(...FIGURE_FIELDS)
          .get();
        return snapshot.docs.map((doc) => ({
          decision: doc.get("decision") as DecisionKind,
          ground: doc.get("ground") as DecisionGround,
          noticeReceivedAt: (doc.get("noticeReceivedAt") as Timestamp).toDate(),
          decidedAt: (doc.get("decidedAt") as Timestamp).toDate(),
        }));
      },
    }),
  };
});
