import { FieldValue, Timestamp, type DocumentSnapshot, type Firestore, type Transaction, type WriteBatch } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, timestamp, oncePerDatabase } from "../core/documents";

/**
 * `webhookEndpoints/{wh_…}`: where an owner's events go (contract §21): its URL, the event types it
 * takes, whether it is disabled and why, and its secrets, sealed (secrets.ts): the current one,
 * and after a rotation the previous one until it retires 24 h later.
 */

const secretFields = z.object({ sealed: z.string(), createdAt: timestamp, retiresAt: timestamp.nullable() });

const endpointDocument = z.object({
  owner: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  description: z.string().nullable(),
  disabled: z.boolean(),
  disabledReason: z.string().nullable(),
  secrets: z.array(secretFields),
  createdAt: timestamp,
  updatedAt: timestamp,
  /** When the endpoint began failing every attempt; null while it succeeds. */
  failingSince: timestamp.nullable(),
  /** Who is emailed when the endpoint is disabled: whoever created or last changed it. */
  contactEmail: z.string().nullable(),
});

export interface EndpointSecret {
  sealed: string;
  createdAt: Date;
  retiresAt: Date | null;
}

export interface EndpointRecord {
  id: string;
  /** `business:<id>`, `publisher:<id>` or `operator:operators` (core/event-outbox.ts ownerKey). */
  owner: string;
  url: string;
  events: string[];
  description: string | null;
  disabled: boolean;
  disabledReason: string | null;
  secrets: EndpointSecret[];
  createdAt: Date;
  updatedAt: Date;
  failingSince: Date | null;
  contactEmail: string | null;
}

export const MAX_ENDPOINTS_PER_OWNER = 20;

export const endpointStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("webhookEndpoints");
  const read = (snapshot: DocumentSnapshot): EndpointRecord | null => {
    const stored = readDocument(endpointDocument, snapshot);
    return (
      stored && {
        id: snapshot.id,
        ...stored,
        secrets: stored.secrets.map((secret) => ({ sealed: secret.sealed, createdAt: secret.createdAt.toDate(), retiresAt: secret.retiresAt?.toDate() ?? null })),
        createdAt: stored.createdAt.toDate(),
        updatedAt: stored.updatedAt.toDate(),
        failingSince: stored.failingSince?.toDate() ?? null,
      }
    );
  };
  const toDocument = (endpoint: EndpointRecord) => ({
    owner: endpoint.owner,
    url: endpoint.url,
    events: endpoint.events,
    description: endpoint.description,
    disabled: endpoint.disabled,
    disabledReason: endpoint.disabledReason,
    secrets: endpoint.secrets.map((secret) => ({ sealed: secret.sealed, createdAt: Timestamp.fromDate(secret.createdAt), retiresAt: secret.retiresAt ? Timestamp.fromDate(secret.retiresAt) : null })),
    createdAt: Timestamp.fromDate(endpoint.createdAt),
    updatedAt: Timestamp.fromDate(endpoint.updatedAt),
    failingSince: endpoint.failingSince ? Timestamp.fromDate(endpoint.failingSince) : null,
    contactEmail: endpoint.contactEmail,
  });
  return {
    read,
    ref: (id: string) => documentAt(collection, id),
    /** In a transaction: an owner's endpoints, oldest first (at most 20, so all of them). */
    async ownedIn(tx: Transaction, owner: string): Promise<EndpointRecord[]> {
      const snapshot = await tx.get(collection.where("owner", "==", owner));
      return snapshot.docs.map((doc) => read(doc)!).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
    },
    async getIn(tx: Transaction, id: string): Promise<EndpointRecord | null> {
      return read(await tx.get(documentAt(collection, id)));
    },
    put(writer: Transaction | WriteBatch, endpoint: EndpointRecord): void {
      (writer as WriteBatch).set(documentAt(collection, endpoint.id), toDocument(endpoint));
    },
    delete(writer: Transaction | WriteBatch, id: string): void {
      (writer as WriteBatch).delete(documentAt(collection, id));
    },
    /** An attempt's outcome on the endpoint: failing since when (null: it succeeded), and disabled with a reason. */
    setHealth(tx: Transaction, id: string, health: { failingSince: Date | null; disabledReason?: string }): void {
      tx.update(documentAt(collection, id), {
        failingSince: health.failingSince ? Timestamp.fromDate(health.failingSince) : null,
        ...(health.disabledReason ? { disabled: true, disabledReason: health.disabledReason, updatedAt: FieldValue.serverTimestamp() } : {}),
      });
    },
    ...withDeadlines("Firestore", {
      async get(id: string): Promise<EndpointRecord | null> {
        return read(await documentAt(collection, id).get());
      },
      /** The endpoints of any of these owners (an event's; at most 30 owners). */
      async ofOwners(owners: string[]): Promise<EndpointRecord[]> {
        if (owners.length === 0) return [];
        const snapshot = await collection.where("owner", "in", owners.slice(0, 30)).get();
        return snapshot.docs.map((doc) => read(doc)!);
      },
      async owned(owner: string): Promise<EndpointRecord[]> {
        const snapshot = await collection.where("owner", "==", owner).get();
        return snapshot.docs.map((doc) => read(doc)!).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
      },
    }),
  };
});
