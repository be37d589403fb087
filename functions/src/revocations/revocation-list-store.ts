import { Timestamp, type DocumentSnapshot, type Firestore, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, timestamp, oncePerDatabase } from "../core/documents";

/**
 * `registry/revocations`: the revocation list (contract §14) in one document, so that a change and
 * its serial move together in one transaction and the list is read in one read. Each entry is a
 * revoked version, or a whole module (`version: "*"`, `sha256: null`). Revocations are rare and
 * small; one document holds thousands of them. The public list and each business's members' list
 * (§26) are both read from it.
 */

const entry = z.object({
  moduleId: z.string(),
  version: z.string(),
  sha256: z.string().nullable(),
  reason: z.string(),
  revokedAt: timestamp,
  /** The business a private module's entry belongs to (§26), null for a public one; absent on entries written before §26's split. */
  businessId: z.string().nullable().optional(),
});
const listDocument = z.object({ serial: z.number().int().nonnegative(), updatedAt: timestamp, entries: z.array(entry) });

export interface RevocationEntry {
  moduleId: string;
  /** A version, or "*" for every version of the module. */
  version: string;
  sha256: string | null;
  reason: string;
  revokedAt: Date;
  /**
   * The business whose private module it is (§26): listed only to its members, never in the public
   * list; null for a public module; undefined for an entry written before §26 (resolved when read).
   */
  businessId?: string | null;
}

export interface RevocationList {
  /** Grows by one at every change; 0 before the first. */
  serial: number;
  entries: RevocationEntry[];
}

export const ALL_VERSIONS = "*";

export const revocationListStore = oncePerDatabase((db: Firestore) => {
  const ref = documentAt(db.collection("registry"), "revocations");
  const read = (snapshot: DocumentSnapshot): RevocationList => {
    const stored = readDocument(listDocument, snapshot);
    return {
      serial: stored?.serial ?? 0,
      entries: (stored?.entries ?? []).map((item) => ({ ...item, revokedAt: item.revokedAt.toDate() })),
    };
  };
  return {
    async readIn(tx: Transaction): Promise<RevocationList> {
      return read(await tx.get(ref));
    },
    /** Writes the list with its serial moved on by one. */
    write(tx: Transaction, list: RevocationList, at: Date): number {
      const serial = list.serial + 1;
      tx.set(ref, {
        serial,
        updatedAt: Timestamp.fromDate(at),
        entries: list.entries.map((item) => ({ ...item, revokedAt: Timestamp.fromDate(item.revokedAt) })),
      });
      return serial;
    },
    ...withDeadlines("Firestore", {
      async get(): Promise<RevocationList> {
        return read(await ref.get());
      },
    }),
  };
});
