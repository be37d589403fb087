import { FieldValue, Timestamp, type Firestore, type QueryDocumentSnapshot, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, isAlreadyExists, oncePerDatabase } from "../core/documents";
import { tokenHash } from "../core/secret-tokens";
import { HEALTH_EVENTS, type HealthEvent } from "./rules";

/**
 * `releases/{releaseId}/healthReports/{sha256 of stagingId and event}`: one document per installed
 * app and event (contract §19), so a repeat changes nothing; `releases/{releaseId}/healthShards/{n}`:
 * the counts per event, spread over shards, so a thousand reports at once never contend on one
 * document. A report and its count are one batch: both or neither.
 */

export const HEALTH_SHARDS = 20;

export type HealthCounts = Record<HealthEvent, number>;

const shardDocument = z.object(Object.fromEntries(HEALTH_EVENTS.map((event) => [event, z.number().optional()])) as Record<HealthEvent, z.ZodOptional<z.ZodNumber>>);

export interface HealthReport {
  releaseId: string;
  stagingId: string;
  fromVersion: string;
  event: HealthEvent;
  error: string | null;
  at: Date;
}

function sum(docs: QueryDocumentSnapshot[]): HealthCounts {
  const counts = Object.fromEntries(HEALTH_EVENTS.map((event) => [event, 0])) as HealthCounts;
  for (const doc of docs) {
    const shard = shardDocument.safeParse(doc.data());
    if (shard.success) for (const event of HEALTH_EVENTS) counts[event] += shard.data[event] ?? 0;
  }
  return counts;
}

export const healthStore = oncePerDatabase((db: Firestore) => {
  const release = (releaseId: string) => documentAt(db.collection("releases"), releaseId);
  return withDeadlines("Firestore", {
    /** Records a report once: false when this app already reported this event for this release. */
    async record(report: HealthReport): Promise<boolean> {
      const batch = db.batch();
      batch.create(documentAt(release(report.releaseId).collection("healthReports"), tokenHash(`${report.stagingId}\n${report.event}`)), {
        stagingId: report.stagingId,
        fromVersion: report.fromVersion,
        event: report.event,
        ...(report.error ? { error: report.error } : {}),
        at: Timestamp.fromDate(report.at),
      });
      batch.set(documentAt(release(report.releaseId).collection("healthShards"), String(Math.floor(Math.random() * HEALTH_SHARDS))), { [report.event]: FieldValue.increment(1) }, { merge: true });
      try {
        await batch.commit();
        return true;
      } catch (error) {
        if (isAlreadyExists(error)) return false;
        throw error;
      }
    },
    /** A release's counts per event: the sum of its shards. */
    async counts(releaseId: string): Promise<HealthCounts> {
      return sum((await release(releaseId).collection("healthShards").get()).docs);
    },
    /** The same, read in a transaction (a ramp's tick). */
    async countsIn(tx: Transaction, releaseId: string): Promise<HealthCounts> {
      return sum((await tx.get(release(releaseId).collection("healthShards"))).docs);
    },
  });
});
