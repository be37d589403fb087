import { Timestamp, type DocumentSnapshot, type Firestore, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, oncePerDatabase, readDocument, timestamp } from "../core/documents";
import { APPEAL_SIDES, type AppealSide, type AppealStatus } from "./rules";

/**
 * `moderationAppeals/{id}`: an appeal against a decision (contract §30, the DSA's Art. 20), by
 * the side it affects or by the notice's reporter, and once decided its outcome, its reasons and
 * the operator who decided it (never the one who made the decision).
 */

const appealDocument = z.object({
  decisionId: z.string(),
  side: z.enum(APPEAL_SIDES),
  explanation: z.string(),
  filedAt: timestamp,
  status: z.enum(["open", "upheld", "reversed"]),
  reasons: z.string().nullable(),
  decidedBy: z.string().nullable(),
  decidedAt: timestamp.nullable(),
});

export interface AppealRecord {
  id: string;
  decisionId: string;
  side: AppealSide;
  explanation: string;
  filedAt: Date;
  status: AppealStatus;
  reasons: string | null;
  decidedBy: string | null;
  decidedAt: Date | null;
}

export const appealStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("moderationAppeals");
  const read = (snapshot: DocumentSnapshot): AppealRecord | null => {
    const stored = readDocument(appealDocument, snapshot);
    return stored && { id: snapshot.id, ...stored, filedAt: stored.filedAt.toDate(), decidedAt: stored.decidedAt?.toDate() ?? null };
  };
  return {
    set(tx: Transaction, { id, ...appeal }: AppealRecord): void {
      tx.set(documentAt(collection, id), { ...appeal, filedAt: Timestamp.fromDate(appeal.filedAt), decidedAt: appeal.decidedAt ? Timestamp.fromDate(appeal.decidedAt) : null });
    },
    async getIn(tx: Transaction, id: string): Promise<AppealRecord | null> {
      return read(await tx.get(documentAt(collection, id)));
    },
    ...withDeadlines("Firestore", {
      async get(id: string): Promise<AppealRecord | null> {
        return read(await documentAt(collection, id).get());
      },
      /** Appeals of a status, oldest first (index: status, filedAt). */
      async withStatus(status: AppealStatus, limit: number): Promise<AppealRecord[]> {
        return (await collection.where("status", "==", status).orderBy("filedAt").limit(limit).get()).docs.map((doc) => read(doc)!);
      },
      /** How many appeals filed in [start, end) stand at each status (one count query each). */
      async countsFiledBetween(start: Date, end: Date): Promise<Record<AppealStatus, number>> {
        const inRange = collection.where("filedAt", ">=", Timestamp.fromDate(start)).where("filedAt", "<", Timestamp.fromDate(end));
        const [open, upheld, reversed] = await Promise.all(
          (["open", "upheld", "reversed"] as const).map(async (status) => (await inRange.where("status", "==", status).count().get()).data().count),
        );
        return { open, upheld, reversed };
      },
    }),
  };
});
