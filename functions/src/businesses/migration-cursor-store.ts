import type { Firestore } from "firebase-admin/firestore";
import { withDeadlines } from "../core/deadline";
import { documentAt, oncePerDatabase } from "../core/documents";

/** `registry/{migration}`: where a data migration stands (`after`: the last id it finished), so that a run that stopped goes on from there. */
export const migrationCursorStore = oncePerDatabase((db: Firestore) => {
  const ref = (migration: string) => documentAt(db.collection("registry"), migration);
  return withDeadlines("Firestore", {
    async get(migration: string): Promise<string | null> {
      const after = (await ref(migration).get()).get("after");
      return typeof after === "string" ? after : null;
    },
    async set(migration: string, after: string): Promise<void> {
      await ref(migration).set({ after });
    },
    async clear(migration: string): Promise<void> {
      await ref(migration).delete();
    },
  });
});
