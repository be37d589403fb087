import { createHmac, timingSafeEqual } from "node:crypto";
import { FieldPath, Timestamp, type Query, type QueryDocumentSnapshot } from "firebase-admin/firestore";
import { z } from "zod";
import { invalidRequest } from "./errors";
import { documentId } from "./schemas";

/** `?limit=` and `?cursor=` of every list (contract §1). */
export const pageQuery = {
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(500).optional().meta({ description: "The nextCursor of the previous page." }),
};

// Seconds within what a Firestore Timestamp holds (0001-01-01 to 9999-12-31).
const cursorPayload = z.strictObject({ s: z.number().int().min(-62_135_596_800).max(253_402_300_799), n: z.number().int().min(0).max(999_999_999), id: documentId });
const MAC_BYTES = 16;

export interface CursorPosition {
  at: Timestamp;
  id: string;
}

/**
 * Opaque cursors for lists ordered by a timestamp, then the document id: the position, and a MAC
 * of it under a key only the service has, so a cursor the service did not issue is a 400 before
 * it reaches a query.
 */
export interface CursorCodec {
  encode(position: CursorPosition): string;
  decode(cursor: string): CursorPosition;
  /** A position in an ordering of keys (strings and numbers) named `order`, e.g. a sort of the search catalog. */
  encodeKey(order: string, key: (string | number)[]): string;
  /** The key of a cursor of that ordering; a cursor of another ordering is a 400. */
  decodeKey(order: string, cursor: string): (string | number)[];
}

const keyPayload = z.strictObject({ o: z.string(), k: z.array(z.union([z.string().max(300), z.number()])).min(1).max(8) });

export function cursorCodec(key: Buffer): CursorCodec {
  const mac = (payload: string) => createHmac("sha256", key).update(payload).digest().subarray(0, MAC_BYTES);
  const refuse = () => invalidRequest("The cursor is not one this API returned.", [{ path: "cursor", message: "Invalid cursor." }]);
  const sealed = (value: unknown) => {
    const payload = Buffer.from(JSON.stringify(value)).toString("base64url");
    return `${payload}.${mac(payload).toString("base64url")}`;
  };
  const opened = (cursor: string): unknown => {
    const [payload, signature, ...rest] = cursor.split(".");
    const given = Buffer.from(signature ?? "", "base64url");
    if (rest.length > 0 || !payload || given.length !== MAC_BYTES || !timingSafeEqual(given, mac(payload))) throw refuse();
    try {
      return JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    } catch {
      throw refuse();
    }
  };
  return {
    encodeKey: (order, key) => sealed({ o: order, k: key }),
    decodeKey: (order, cursor) => {
      const parsed = keyPayload.safeParse(opened(cursor));
      if (!parsed.success || parsed.data.o !== order) throw refuse();
      return parsed.data.k;
    },
    encode: ({ at, id }) => sealed({ s: at.seconds, n: at.nanoseconds, id }),
    decode: (cursor) => {
      const parsed = cursorPayload.safeParse(opened(cursor));
      if (!parsed.success) throw refuse();
      return { at: new Timestamp(parsed.data.s, parsed.data.n), id: parsed.data.id };
    },
  };
}

/**
 * One page of a query, newest `timeField` first (ties by document id, descending), after a
 * position: reads `limit + 1` documents to know whether more follow, and says where this page ends.
 */
export async function pageOfQuery(
  query: Query,
  timeField: string,
  page: { limit: number; after?: CursorPosition },
): Promise<{ docs: QueryDocumentSnapshot[]; more: boolean; last: CursorPosition | null }> {
  let ordered = query.orderBy(timeField, "desc").orderBy(FieldPath.documentId(), "desc");
  if (page.after) ordered = ordered.startAfter(page.after.at, page.after.id);
  const snapshot = await ordered.limit(page.limit + 1).get();
  const docs = snapshot.docs.slice(0, page.limit);
  const last = docs.at(-1);
  return { docs, more: snapshot.docs.length > page.limit, last: last ? { at: last.get(timeField) as Timestamp, id: last.id } : null };
}
