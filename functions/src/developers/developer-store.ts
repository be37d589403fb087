import { FieldValue, Timestamp, type DocumentSnapshot, type Firestore, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import type { DeveloperAccount } from "../core/auth";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, timestamp, writeReadAsMissing, oncePerDatabase } from "../core/documents";
import { businessStore } from "../accounts/business-store";

/**
 * `developers/{uid}`: developer accounts; and `publishers/{publisherId}` (`{ developerId,
 * verifiedDomain? }`, or `{ businessId }` for a business's own publisher, §26), the claim that
 * gives each publisher id one owner, with the domain an operator verified for it (§24). The
 * service writes an account and its claim in one transaction.
 */

const developerDocument = z.object({
  email: z.string().nullable(),
  displayName: z.string(),
  publisherId: z.string(),
  createdAt: timestamp,
});

/** A moderation decision's suspension of the publisher (§30): its modules out of listings, its sign and publish refused. */
const suspensionFields = z.object({ decisionId: z.string(), at: timestamp });

const publisherDocument = z.union([
  z.object({ developerId: z.string(), verifiedDomain: z.string().nullable().default(null), suspension: suspensionFields.optional() }),
  z.object({ businessId: z.string(), verifiedDomain: z.string().nullable().default(null), suspension: suspensionFields.optional() }),
]);

/** Who holds a publisher id: a developer account, or a business (its private modules, §26). */
export type PublisherClaim = z.output<typeof publisherDocument>;

/** A publisher as pages show it: the display name its developer registered with, and its verified domain. */
export interface PublisherProfile {
  id: string;
  displayName: string;
  verifiedDomain: string | null;
}

/** A profile with what the catalog also needs to know: whether a decision suspended the publisher (§30). */
export interface PublisherStanding extends PublisherProfile {
  suspended: boolean;
}

export const developerStore = oncePerDatabase((db: Firestore) => {
  const developers = db.collection("developers");
  const publishers = db.collection("publishers");
  const read = (snapshot: DocumentSnapshot): DeveloperAccount | null => {
    const stored = readDocument(developerDocument, snapshot);
    return stored && { id: snapshot.id, ...stored, createdAt: stored.createdAt.toDate() };
  };
  return withDeadlines("Firestore", {
    async get(uid: string): Promise<DeveloperAccount | null> {
      return read(await documentAt(developers, uid).get());
    },
    async publisherTaken(publisherId: string): Promise<boolean> {
      return (await documentAt(publishers, publisherId).get()).exists;
    },
    /**
     * The profiles of these publishers, by id (the claims in one batched read, then their
     * developers' and businesses' documents, whose names they show, in two at once); a publisher
     * id nobody claims is left out.
     */
    async profiles(publisherIds: Iterable<string>): Promise<Map<string, PublisherStanding>> {
      const ids = [...new Set(publisherIds)];
      if (ids.length === 0) return new Map();
      const claims = (await db.getAll(...ids.map((id) => documentAt(publishers, id))))
        .map((snapshot) => ({ id: snapshot.id, claim: readDocument(publisherDocument, snapshot) }))
        .filter((entry): entry is { id: string; claim: PublisherClaim } => entry.claim !== null);
      if (claims.length === 0) return new Map();
      // A developer's name is its account's; a business's (§26), the business store's.
      const developerIds = claims.flatMap(({ claim }) => ("developerId" in claim ? [claim.developerId] : []));
      const businessIds = claims.flatMap(({ claim }) => ("businessId" in claim ? [claim.businessId] : []));
      const [accounts, businesses] = await Promise.all([developerIds.length > 0 ? db.getAll(...developerIds.map((uid) => documentAt(developers, uid))) : [], businessStore(db).getMany(businessIds)]);
      const names = new Map<string, string | undefined>([
        ...developerIds.map((uid, index) => [`developer:${uid}`, read(accounts[index])?.displayName] as const),
        ...businessIds.map((businessId, index) => [`business:${businessId}`, businesses[index]?.name] as const),
      ]);
      const nameOf = (claim: PublisherClaim) => names.get("developerId" in claim ? `developer:${claim.developerId}` : `business:${claim.businessId}`);
      return new Map(claims.map(({ id, claim }) => [id, { id, displayName: nameOf(claim) ?? id, verifiedDomain: claim.verifiedDomain, suspended: claim.suspension !== undefined }]));
    },
    async claim(publisherId: string): Promise<PublisherClaim | null> {
      return readDocument(publisherDocument, await documentAt(publishers, publisherId).get());
    },
    /** In a transaction: the publisher's claim, or null when nobody claimed the id. */
    async claimIn(tx: Transaction, publisherId: string): Promise<PublisherClaim | null> {
      return readDocument(publisherDocument, await tx.get(documentAt(publishers, publisherId)));
    },
    setVerifiedDomain(tx: Transaction, publisherId: string, domain: string | null): void {
      tx.update(documentAt(publishers, publisherId), { verifiedDomain: domain });
    },
    /** Suspends the publisher for a decision, or (null) lifts its suspension; the transaction read its claim (claimIn). */
    setSuspension(tx: Transaction, publisherId: string, suspension: { decisionId: string; at: Date } | null): void {
      tx.update(documentAt(publishers, publisherId), { suspension: suspension ? { decisionId: suspension.decisionId, at: Timestamp.fromDate(suspension.at) } : FieldValue.delete() });
    },
    /** In a transaction: whether the user is a developer already, and whether the publisher id is claimed. */
    async claims(tx: Transaction, uid: string, publisherId: string): Promise<{ registered: boolean; publisherTaken: boolean }> {
      const [developer, publisher] = await tx.getAll(documentAt(developers, uid), documentAt(publishers, publisherId));
      return { registered: developer.exists, publisherTaken: publisher.exists };
    },
    /** A business's own publisher id, which the transaction has read as free. */
    claimForBusiness(tx: Transaction, publisherId: string, businessId: string): void {
      writeReadAsMissing(tx, documentAt(publishers, publisherId), { businessId });
    },
    /** An account and publisher id the transaction has read as free (`claims`). */
    create(tx: Transaction, account: DeveloperAccount): void {
      writeReadAsMissing(tx, documentAt(publishers, account.publisherId), { developerId: account.id });
      writeReadAsMissing(tx, documentAt(developers, account.id), {
        email: account.email,
        displayName: account.displayName,
        publisherId: account.publisherId,
        createdAt: Timestamp.fromDate(account.createdAt),
      });
    },
  });
});
