import { Timestamp } from "firebase-admin/firestore";
import { z } from "zod";
import { invalidRequest } from "./errors";

/** `?limit=` and `?cursor=` of every list (contract §1). */
export const pageQuery = {
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(500).optional().meta({ description: "The nextCursor of the previous page." }),
};

const cursorPayload = z.strictObject({ s: z.number().int(), n: z.number().int().min(0).max(999_999_999), id: z.string().min(1) });

/** An opaque cursor for lists ordered by a timestamp, then the document id. */
export function encodeCursor(position: { at: Timestamp; id: string }): string {
  return Buffer.from(JSON.stringify({ s: position.at.seconds, n: position.at.nanoseconds, id: position.id })).toString("base64url");
}

export function decodeCursor(cursor: string): { at: Timestamp; id: string } {
  try {
    const { s, n, id } = cursorPayload.parse(JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")));
    return { at: new Timestamp(s, n), id };
  } catch {
    throw invalidRequest("The cursor is not one this API returned.", [{ path: "cursor", message: "Invalid cursor." }]);
  }
}
