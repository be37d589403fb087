import { Timestamp, type DocumentSnapshot, type Firestore, type Transaction, type WriteBatch } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "./deadline";
import { documentAt, readDocument, timestamp } from "./documents";
import { randomBase62 } from "./secret-tokens";
import { DAY_MS } from "./time";

/**
 * `events/{msg_…}`: the outbox of webhook messages (contract §21). A service records the events of
 * a change in the same batch or transaction as the change, through the audit log's `record` and
 * `commit` (an audit event's `emits`), so a change that fails emits nothing and one that commits is
 * never lost. The webhooks' dispatcher fans each event out to the endpoints subscribed to it, then
 * marks it `fannedOut`; events expire after 30 days (a TTL policy on `expireAt`). The events that
 * change what the TUF repository lists (§23) also carry `tufPending` until the repository has
 * taken them (tuf/follower.ts).
 */

/** The events after which the TUF repository's targets may differ: a publish, a revocation or its lifting. */
const TUF_EVENT_TYPES = new Set(["module.version.published", "module.revoked"]);

/** Who receives an event: a business's endpoints, a publisher's, or the operators'. */
export const EVENT_OWNER_KINDS = ["business", "publisher", "operator"] as const;
export interface EventOwner {
  kind: (typeof EVENT_OWNER_KINDS)[number];
  /** The business id, the publisher id, or "operators". */
  id: string;
}
export const OPERATORS: EventOwner = { kind: "operator", id: "operators" };
export const ownerKey = (owner: EventOwner) => `${owner.kind}:${owner.id}`;

export interface OutboundEvent {
  type: string;
  owners: EventOwner[];
  /** The ids of what changed, the fields that changed, the resource's API path: never whole documents. */
  data: Record<string, unknown>;
  /** Only this endpoint receives it (a test delivery). */
  endpointId?: string;
}

export const EVENT_LIFETIME_MS = 30 * DAY_MS;

const eventDocument = z.object({
  type: z.string(),
  owners: z.array(z.string()),
  data: z.record(z.string(), z.unknown()),
  at: timestamp,
  fannedOut: z.boolean(),
  endpointId: z.string().optional(),
  tufPending: z.boolean().optional(),
});

export interface RecordedEvent {
  id: string;
  type: string;
  ownerKeys: string[];
  data: Record<string, unknown>;
  at: Date;
  fannedOut: boolean;
  endpointId: string | null;
  tufPending: boolean;
}

export const newMessageId = () => `msg_${randomBase62(24)}`;

export function eventOutbox(db: Firestore) {
  const collection = db.collection("events");
  const read = (snapshot: DocumentSnapshot): RecordedEvent | null => {
    const stored = readDocument(eventDocument, snapshot);
    return stored && { id: snapshot.id, type: stored.type, ownerKeys: stored.owners, data: stored.data, at: stored.at.toDate(), fannedOut: stored.fannedOut, endpointId: stored.endpointId ?? null, tufPending: stored.tufPending ?? false };
  };
  const tufPendingQuery = () => collection.where("tufPending", "==", true);
  return {
    collection,
    read,
    /** The events not yet fanned out to their webhook endpoints (what the `webhookEvents` trigger takes). */
    notFannedOutQuery: () => collection.where("fannedOut", "==", false),
    /** Adds the events to a batch or transaction, to commit with the change that causes them; their message ids. */
    record(writer: WriteBatch | Transaction, events: OutboundEvent[], at: Date): string[] {
      return events.map((event) => {
        const id = newMessageId();
        (writer as WriteBatch).create(documentAt(collection, id), {
          type: event.type,
          owners: [...new Set(event.owners.map(ownerKey))],
          // Plain JSON values only: no undefined, dates as strings.
          data: JSON.parse(JSON.stringify(event.data)) as Record<string, unknown>,
          at: Timestamp.fromDate(at),
          fannedOut: false,
          ...(event.endpointId ? { endpointId: event.endpointId } : {}),
          ...(TUF_EVENT_TYPES.has(event.type) ? { tufPending: true } : {}),
          expireAt: Timestamp.fromMillis(at.getTime() + EVENT_LIFETIME_MS),
        });
        return id;
      });
    },
    ref: (id: string) => documentAt(collection, id),
    markFannedOut(tx: Transaction, id: string): void {
      tx.update(documentAt(collection, id), { fannedOut: true });
    },
    /** The events the TUF repository has not taken yet (a listener follows this query). */
    tufPendingQuery,
    /** After the repository took these events (a plain write: taking one twice is harmless). */
    async markTufApplied(ids: string[]): Promise<void> {
      const batch = collection.firestore.batch();
      for (const id of ids) batch.update(documentAt(collection, id), { tufPending: false });
      await batch.commit();
    },
    ...withDeadlines("Firestore", {
      /** Events not yet fanned out that were recorded before `before`, oldest first (the sweep). */
      async waiting(before: Date, limit: number): Promise<RecordedEvent[]> {
        const snapshot = await collection.where("fannedOut", "==", false).where("at", "<=", Timestamp.fromDate(before)).orderBy("at").limit(limit).get();
        return snapshot.docs.map((doc) => read(doc)!);
      },
      /** Ids of events the TUF repository has not taken, recorded before `before` (the sweep). */
      async tufWaiting(before: Date, limit: number): Promise<string[]> {
        const snapshot = await tufPendingQuery().limit(limit).get();
        return snapshot.docs.filter((doc) => (doc.get("at") as Timestamp).toMillis() <= before.getTime()).map((doc) => doc.id);
      },
      async tufPendingCount(): Promise<number> {
        return (await tufPendingQuery().count().get()).data().count;
      },
    }),
  };
}
