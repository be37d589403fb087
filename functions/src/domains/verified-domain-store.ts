import { FieldPath, Timestamp, type DocumentReference, type DocumentSnapshot, type Firestore, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, timestamp, oncePerDatabase } from "../core/documents";

/**
 * `verifiedDomains/{domain}`: which business holds a verified domain (§22). One document per
 * domain, created in the transaction that verifies it, so the first business to verify a domain
 * holds it and a second cannot; single sign-on's just-in-time membership finds the business of
 * an email's domain with one read. The daily check (recheck.ts) keeps when it is next due and
 * since when its TXT record has been missing.
 */

const verifiedDomainDocument = z.object({
  businessId: z.string(),
  verifiedAt: timestamp,
  /** Missing on domains verified before checks began: due at once. */
  nextCheckAt: timestamp.optional(),
  missingSince: timestamp.nullable().optional(),
});

export interface VerifiedDomainRecord {
  domain: string;
  businessId: string;
  verifiedAt: Date;
  nextCheckAt: Date | null;
  missingSince: Date | null;
}

export const verifiedDomainStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("verifiedDomains");
  const ref = (domain: string): DocumentReference => documentAt(collection, domain);
  const read = (snapshot: DocumentSnapshot): VerifiedDomainRecord | null => {
    const stored = readDocument(verifiedDomainDocument, snapshot);
    return stored && { domain: snapshot.id, businessId: stored.businessId, verifiedAt: stored.verifiedAt.toDate(), nextCheckAt: stored.nextCheckAt?.toDate() ?? null, missingSince: stored.missingSince?.toDate() ?? null };
  };
  return withDeadlines("Firestore", {
    ref,
    read,
    async get(domain: string): Promise<VerifiedDomainRecord | null> {
      return read(await ref(domain).get());
    },
    async getIn(tx: Transaction, domain: string): Promise<VerifiedDomainRecord | null> {
      return read(await tx.get(ref(domain)));
    },
    /** One page of every verified domain, by name after `after` (the daily check walks them all). */
    async page(after: string | null, limit: number): Promise<VerifiedDomainRecord[]> {
      let query = collection.orderBy(FieldPath.documentId()).limit(limit);
      if (after !== null) query = query.startAfter(after);
      return (await query.get()).docs.map((doc) => read(doc)!);
    },
    put(tx: Transaction, record: Pick<VerifiedDomainRecord, "domain" | "businessId" | "verifiedAt" | "nextCheckAt" | "missingSince">): void {
      tx.set(ref(record.domain), {
        businessId: record.businessId,
        verifiedAt: Timestamp.fromDate(record.verifiedAt),
        nextCheckAt: record.nextCheckAt ? Timestamp.fromDate(record.nextCheckAt) : null,
        missingSince: record.missingSince ? Timestamp.fromDate(record.missingSince) : null,
      });
    },
    delete(tx: Transaction, domain: string): void {
      tx.delete(ref(domain));
    },
  });
});
