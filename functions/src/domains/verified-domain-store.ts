import { Timestamp, type DocumentReference, type DocumentSnapshot, type Firestore, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, timestamp, oncePerDatabase } from "../core/documents";

/**
 * `verifiedDomains/{domain}`: which business holds a verified domain (§22). One document per
 * domain, created in the transaction that verifies it, so the first business to verify a domain
 * holds it and a second cannot; single sign-on's just-in-time membership finds the business of
 * an email's domain with one read.
 */

const verifiedDomainDocument = z.object({ businessId: z.string(), verifiedAt: timestamp });

export interface VerifiedDomainRecord {
  domain: string;
  businessId: string;
  verifiedAt: Date;
}

export const verifiedDomainStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("verifiedDomains");
  const ref = (domain: string): DocumentReference => documentAt(collection, domain);
  const read = (snapshot: DocumentSnapshot): VerifiedDomainRecord | null => {
    const stored = readDocument(verifiedDomainDocument, snapshot);
    return stored && { domain: snapshot.id, businessId: stored.businessId, verifiedAt: stored.verifiedAt.toDate() };
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
    put(tx: Transaction, record: VerifiedDomainRecord): void {
      tx.set(ref(record.domain), { businessId: record.businessId, verifiedAt: Timestamp.fromDate(record.verifiedAt) });
    },
    delete(tx: Transaction, domain: string): void {
      tx.delete(ref(domain));
    },
  });
});
