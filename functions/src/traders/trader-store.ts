import { Timestamp, type DocumentSnapshot, type Firestore, type WriteBatch } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, timestamp, oncePerDatabase } from "../core/documents";

/**
 * `traders/{publisherId}`: a publisher's trader declaration (contract §30), replaced whole by each
 * `PUT /developers/trader`. A trader's fields are null for `trader: false`.
 */

const traderDocument = z.object({
  trader: z.boolean(),
  name: z.string().nullable(),
  address: z.string().nullable(),
  email: z.string().nullable(),
  phone: z.string().nullable(),
  tradeRegister: z.string().nullable(),
  registrationNumber: z.string().nullable(),
  declaredBy: z.string(),
  updatedAt: timestamp,
});

export type TraderRecord =
  | { publisherId: string; trader: true; name: string; address: string; email: string; phone: string; tradeRegister: string | null; registrationNumber: string | null; declaredBy: string; updatedAt: Date }
  | { publisherId: string; trader: false; declaredBy: string; updatedAt: Date };

export const traderStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("traders");
  const read = (snapshot: DocumentSnapshot): TraderRecord | null => {
    const stored = readDocument(traderDocument, snapshot);
    if (!stored) return null;
    const common = { publisherId: snapshot.id, declaredBy: stored.declaredBy, updatedAt: stored.updatedAt.toDate() };
    if (!stored.trader) return { ...common, trader: false };
    return {
      ...common,
      trader: true,
      name: stored.name ?? "",
      address: stored.address ?? "",
      email: stored.email ?? "",
      phone: stored.phone ?? "",
      tradeRegister: stored.tradeRegister,
      registrationNumber: stored.registrationNumber,
    };
  };
  return withDeadlines("Firestore", {
    async get(publisherId: string): Promise<TraderRecord | null> {
      return read(await documentAt(collection, publisherId).get());
    },
    put(batch: WriteBatch, record: TraderRecord): void {
      const declared = record.trader
        ? { name: record.name, address: record.address, email: record.email, phone: record.phone, tradeRegister: record.tradeRegister, registrationNumber: record.registrationNumber }
        : { name: null, address: null, email: null, phone: null, tradeRegister: null, registrationNumber: null };
      batch.set(documentAt(collection, record.publisherId), { trader: record.trader, ...declared, declaredBy: record.declaredBy, updatedAt: Timestamp.fromDate(record.updatedAt) });
    },
  });
});
