import { Timestamp, type Firestore, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, oncePerDatabase, readDocument, timestamp } from "../core/documents";

/**
 * `scimDirectoryJobs/{businessId}_{kind}[_{groupId}]`: a change to a business's directory whose
 * effect on its members runs in the background (§25), whatever the business's size: a SCIM group
 * deleted (its members leave it, `group-removal`) or the SCIM settings changed (every member's role
 * and seat follow them, `settle`, a page of members at a time from `after`). The request records
 * the job in the transaction of its change; the directory jobs (directory-jobs.ts) run it and
 * delete the record when it is done. A settings change while a settle runs starts it over.
 */

export type DirectoryJob = { businessId: string; kind: "group-removal"; groupId: string } | { businessId: string; kind: "settle" };

/** Where a settle stands: after this member in join order (null: from the first). */
export interface SettlePosition {
  at: Timestamp;
  uid: string;
}

const jobDocument = z.object({
  businessId: z.string(),
  kind: z.enum(["group-removal", "settle"]),
  groupId: z.string().optional(),
  after: z.object({ at: timestamp, uid: z.string() }).nullable().optional(),
  at: timestamp,
});

const jobOf = (stored: z.output<typeof jobDocument>): DirectoryJob =>
  stored.kind === "group-removal" ? { businessId: stored.businessId, kind: "group-removal", groupId: stored.groupId ?? "" } : { businessId: stored.businessId, kind: "settle" };

export const directoryJobStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("scimDirectoryJobs");
  const ref = (job: DirectoryJob) => documentAt(collection, job.kind === "settle" ? `${job.businessId}_settle` : `${job.businessId}_group_${job.groupId}`);
  const jobsOf = (docs: FirebaseFirestore.QueryDocumentSnapshot[]) => docs.map((doc) => readDocument(jobDocument, doc)).flatMap((stored) => (stored ? [jobOf(stored)] : []));
  return {
    /** A job's document as a job (null: not one). */
    read(snapshot: FirebaseFirestore.DocumentSnapshot): DirectoryJob | null {
      const stored = readDocument(jobDocument, snapshot);
      return stored ? jobOf(stored) : null;
    },
    /** Records a job (a settle already recorded starts over from the first member). */
    addIn(tx: Transaction, job: DirectoryJob, now: Date): void {
      tx.set(ref(job), { ...job, after: null, at: Timestamp.fromDate(now) });
    },
    /** A settle's position, read in the step's transaction; undefined when the job is done (or never was). */
    async positionIn(tx: Transaction, job: DirectoryJob): Promise<SettlePosition | null | undefined> {
      const stored = readDocument(jobDocument, await tx.get(ref(job)));
      return stored ? (stored.after ?? null) : undefined;
    },
    movedIn(tx: Transaction, job: DirectoryJob, after: SettlePosition): void {
      tx.update(ref(job), { after });
    },
    doneIn(tx: Transaction, job: DirectoryJob): void {
      tx.delete(ref(job));
    },
    ...withDeadlines("Firestore", {
      /** The oldest jobs not done. */
      async pending(limit: number): Promise<DirectoryJob[]> {
        return jobsOf((await collection.orderBy("at").limit(limit).get()).docs);
      },
    }),
    /** The jobs not done (what the `scimDirectoryJob` trigger acts on). */
    query: () => collection,
  };
});
