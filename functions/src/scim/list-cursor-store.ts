import { createHash } from "node:crypto";
import { Timestamp, type Firestore } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, oncePerDatabase, readDocument, timestamp } from "../core/documents";
import type { MemberPosition } from "../accounts/member-store";

/**
 * `scimListCursors/{hash}`: where the next page of a SCIM list starts (§25). SCIM pages by
 * `startIndex`, a position; a list that answered items up to index n leaves the cursor of index
 * n + 1, so that the client's next request (`startIndex=n+1`) reads from the cursor instead of
 * skipping n members. Kept an hour (`expireAt`, under a TTL policy in firestore.indexes.json); without one the
 * list skips from the start, as it must. The hash names the business, the list and the index.
 */

const LIST_CURSOR_LIFETIME_MS = 60 * 60 * 1000;

const cursorDocument = z.object({ at: timestamp, uid: z.string(), total: z.number().int().optional(), expireAt: timestamp });

/** Where the next page starts, and the list's `totalResults` when its first page was read (an hour at most: SCIM lists are a snapshot-free walk anyway). */
export interface ListCursor {
  position: MemberPosition;
  total: number | null;
}

export const scimListCursorStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("scimListCursors");
  const ref = (businessId: string, list: string, startIndex: number) => documentAt(collection, createHash("sha256").update(`${businessId}\n${list}\n${startIndex}`).digest("hex"));
  return withDeadlines("Firestore", {
    async get(businessId: string, list: string, startIndex: number, now: Date): Promise<ListCursor | null> {
      const stored = readDocument(cursorDocument, await ref(businessId, list, startIndex).get());
      return stored && stored.expireAt.toMillis() > now.getTime() ? { position: { at: stored.at, uid: stored.uid }, total: stored.total ?? null } : null;
    },
    async put(businessId: string, list: string, startIndex: number, cursor: ListCursor, now: Date): Promise<void> {
      const { position, total } = cursor;
      await ref(businessId, list, startIndex).set({ at: position.at, uid: position.uid, ...(total !== null ? { total } : {}), expireAt: Timestamp.fromMillis(now.getTime() + LIST_CURSOR_LIFETIME_MS) });
    },
  });
});
