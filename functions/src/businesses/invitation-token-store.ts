import type { DocumentSnapshot, Firestore, Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, oncePerDatabase } from "../core/documents";

/**
 * `invitationTokens/{sha256 of the token}`: which business and invitation a token opens (§17).
 * The token is never stored; the invitation itself lives in its business's document.
 */

const tokenDocument = z.object({ businessId: z.string(), invitationId: z.string() });

export type InvitationTokenRecord = z.output<typeof tokenDocument>;

export const invitationTokenStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("invitationTokens");
  return withDeadlines("Firestore", {
    ref: (tokenHash: string) => documentAt(collection, tokenHash),
    read: (snapshot: DocumentSnapshot): InvitationTokenRecord | null => readDocument(tokenDocument, snapshot),
    createIn(tx: Transaction, tokenHash: string, record: InvitationTokenRecord): void {
      tx.create(documentAt(collection, tokenHash), record);
    },
    deleteIn(tx: Transaction, tokenHashes: string[]): void {
      for (const hash of tokenHashes) tx.delete(documentAt(collection, hash));
    },
  });
});
