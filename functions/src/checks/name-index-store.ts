import { createHash } from "node:crypto";
import { FieldValue, type DocumentSnapshot, type Firestore, type Transaction, type WriteBatch } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, oncePerDatabase } from "../core/documents";
import { foldedNamesOf, indexKeysOf } from "./names";

/**
 * `moduleNames/{sha256 of key}`: the look-alike index of published modules (contract §14). Each
 * published module's folded names are filed under their index keys (names.ts), so the modules a
 * new name may resemble are found with one batched read of that name's keys, never a scan of all
 * modules. Entries are added at every publish and never removed: a name a module was once published
 * under stays taken against other publishers.
 */

const entry = z.object({ moduleId: z.string(), publisherId: z.string(), folded: z.string() });
const nameIndexDocument = z.object({ key: z.string(), modules: z.array(entry) });

export type NamedModule = z.output<typeof entry>;

/** Keys may hold any character a name folds to: documents are addressed by their hash. */
const documentIdOf = (key: string) => createHash("sha256").update(key).digest("hex");

export const nameIndexStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("moduleNames");
  const read = (snapshot: DocumentSnapshot) => readDocument(nameIndexDocument, snapshot);
  return {
    /** Files a published module under the keys of its names (idempotent). */
    add(writer: WriteBatch | Transaction, module: { moduleId: string; publisherId: string; name: string }): void {
      for (const folded of foldedNamesOf(module.moduleId, module.name)) {
        const named: NamedModule = { moduleId: module.moduleId, publisherId: module.publisherId, folded };
        for (const key of indexKeysOf(folded)) {
          (writer as WriteBatch).set(documentAt(collection, documentIdOf(key)), { key, modules: FieldValue.arrayUnion(named) }, { merge: true });
        }
      }
    },
    ...withDeadlines("Firestore", {
      /** The published modules filed under any of these keys: every candidate look-alike, once. */
      async candidates(keys: string[]): Promise<NamedModule[]> {
        const unique = [...new Set(keys)];
        if (unique.length === 0) return [];
        const snapshots = await db.getAll(...unique.map((key) => documentAt(collection, documentIdOf(key))));
        return snapshots.flatMap((snapshot) => read(snapshot)?.modules ?? []);
      },
    }),
  };
});
