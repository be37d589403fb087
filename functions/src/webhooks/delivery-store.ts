import { FieldPath, Timestamp, type DocumentSnapshot, type Firestore, type Query, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, isFailedPrecondition, readDocument, timestamp, writeReadAsMissing, oncePerDatabase } from "../core/documents";
import { EVENT_LIFETIME_MS } from "../core/event-outbox";
import { pageOfQuery, type CursorPosition } from "../core/pagination";
import type { RecoveryPlace } from "./recovery-store";

/**
 * `webhookDeliveries/{messageId}.{endpointId}`: one message on its way to one endpoint (contract
 * §21): the signed body as first sent, its state, every attempt, when the next is due, and the
 * lease of the instance sending it now. Kept 30 days (a TTL policy on `expireAt`).
 */

export const DELIVERY_STATUSES = ["pending", "succeeded", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

const attemptFields = z.object({ at: timestamp, statusCode: z.number().nullable(), error: z.string().optional(), durationMs: z.number() });

const deliveryDocument = z.object({
  endpointId: z.string(),
  messageId: z.string(),
  type: z.string(),
  payload: z.string(),
  createdAt: timestamp,
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.array(attemptFields),
  nextAttemptAt: timestamp.nullable(),
  leaseUntil: timestamp.nullable(),
  claim: z.string().nullable().optional(),
});

export interface Attempt {
  at: Date;
  statusCode: number | null;
  error?: string;
  durationMs: number;
}

export interface DeliveryRecord {
  id: string;
  endpointId: string;
  messageId: string;
  type: string;
  /** The body, exactly as signed and sent on every attempt. */
  payload: string;
  createdAt: Date;
  status: DeliveryStatus;
  attempts: Attempt[];
  /** While an attempt is in flight: when its lease ends (the delivery is due again then, should the attempt never be recorded). */
  nextAttemptAt: Date | null;
  leaseUntil: Date | null;
  /** The claim of the attempt in flight (null: none): only that attempt's record is taken. */
  claim: string | null;
}

/** A due delivery as the sweep read it, with when it last changed (for `deferIfUnchanged`). */
export type DueDelivery = DeliveryRecord & { readAt: Timestamp };

export const deliveryId = (messageId: string, endpointId: string) => `${messageId}.${endpointId}`;
/** The endpoint a delivery id names (message ids hold no dot). */
export const endpointOfDelivery = (id: string) => id.slice(id.indexOf(".") + 1);

const ts = (date: Date | null) => (date ? Timestamp.fromDate(date) : null);

export const deliveryStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("webhookDeliveries");
  const read = (snapshot: DocumentSnapshot): DeliveryRecord | null => {
    const stored = readDocument(deliveryDocument, snapshot);
    return (
      stored && {
        id: snapshot.id,
        ...stored,
        createdAt: stored.createdAt.toDate(),
        attempts: stored.attempts.map((attempt) => ({ ...attempt, at: attempt.at.toDate() })),
        nextAttemptAt: stored.nextAttemptAt?.toDate() ?? null,
        leaseUntil: stored.leaseUntil?.toDate() ?? null,
        claim: stored.claim ?? null,
      }
    );
  };
  return {
    read,
    /** A delivery of an event the transaction has read as not fanned out. */
    create(tx: Transaction, delivery: Omit<DeliveryRecord, "id" | "claim">): void {
      writeReadAsMissing(tx, documentAt(collection, deliveryId(delivery.messageId, delivery.endpointId)), {
        ...delivery,
        createdAt: Timestamp.fromDate(delivery.createdAt),
        attempts: [],
        nextAttemptAt: ts(delivery.nextAttemptAt),
        leaseUntil: null,
        claim: null,
        expireAt: Timestamp.fromMillis(delivery.createdAt.getTime() + EVENT_LIFETIME_MS),
      });
    },
    async getIn(tx: Transaction, id: string): Promise<DeliveryRecord | null> {
      return read(await tx.get(documentAt(collection, id)));
    },
    /** The delivery's state after a claim (`claim` names it), an attempt, or a redelivery (no claim: none in flight counts). */
    update(tx: Transaction, id: string, change: { status: DeliveryStatus; nextAttemptAt: Date | null; leaseUntil: Date | null; claim?: string; attempts?: Attempt[] }): void {
      tx.update(documentAt(collection, id), {
        status: change.status,
        nextAttemptAt: ts(change.nextAttemptAt),
        leaseUntil: ts(change.leaseUntil),
        claim: change.claim ?? null,
        ...(change.attempts ? { attempts: change.attempts.map((attempt) => ({ ...attempt, at: Timestamp.fromDate(attempt.at) })) } : {}),
      });
    },
    ...withDeadlines("Firestore", {
      async get(id: string): Promise<DeliveryRecord | null> {
        return read(await documentAt(collection, id).get());
      },
      /**
       * A page of pending deliveries whose next attempt is due (the sweep), soonest first, after
       * the page before (`after`: its last). One in flight is not due: its claim moved its next
       * attempt to the end of its lease.
       */
      async due(now: Date, limit: number, after?: DocumentSnapshot): Promise<{ deliveries: DueDelivery[]; last: DocumentSnapshot | undefined }> {
        let query = collection.where("status", "==", "pending").where("nextAttemptAt", "<=", Timestamp.fromDate(now)).orderBy("nextAttemptAt").orderBy(FieldPath.documentId()).limit(limit);
        if (after) query = query.startAfter(after);
        const { docs } = await query.get();
        return { deliveries: docs.map((doc) => ({ ...read(doc)!, readAt: doc.updateTime })), last: docs.at(-1) };
      },
      /**
       * Moves a due delivery's next attempt later, unless it changed since it was read (a claim, a
       * record): the sweep's way to put an endpoint's overflow behind every other endpoint's due
       * deliveries. False when it had changed.
       */
      async deferIfUnchanged(id: string, read: Timestamp, until: Date): Promise<boolean> {
        try {
          await documentAt(collection, id).update({ nextAttemptAt: Timestamp.fromDate(until) }, { lastUpdateTime: read });
          return true;
        } catch (error) {
          if (isFailedPrecondition(error)) return false;
          throw error;
        }
      },
      /** One page of an endpoint's deliveries, newest first. */
      async page(endpointId: string, status: DeliveryStatus | undefined, page: { limit: number; after?: CursorPosition }) {
        let query: Query = collection.where("endpointId", "==", endpointId);
        if (status) query = query.where("status", "==", status);
        const found = await pageOfQuery(query, "createdAt", page);
        return { deliveries: found.docs.map((doc) => read(doc)!), more: found.more, last: found.last };
      },
      /** A page of an endpoint's failed deliveries created since a time (or after `after`), oldest first: a recovery's next (recover). */
      async failedSince(endpointId: string, since: Date, after: RecoveryPlace | null, limit: number): Promise<DeliveryRecord[]> {
        let query = collection.where("endpointId", "==", endpointId).where("status", "==", "failed").where("createdAt", ">=", Timestamp.fromDate(since)).orderBy("createdAt").orderBy(FieldPath.documentId()).limit(limit);
        if (after) query = query.startAfter(Timestamp.fromDate(after.createdAt), after.id);
        const { docs } = await query.get();
        return docs.map((doc) => read(doc)!);
      },
    }),
  };
});
