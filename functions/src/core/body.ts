import type { Request } from "express";
import getRawBody from "raw-body";
import { ApiError, invalidRequest, payloadTooLarge, unsupportedMediaType } from "./errors";
import { pathOfString } from "./validation";

type RequestWithRawBody = Request & { rawBody?: Buffer };

/**
 * The request body as bytes, at most `limit` of them.
 *
 * Cloud Functions reads the whole body before the app sees it and leaves it in `req.rawBody`;
 * everywhere else (the dev server, tests) the stream is read here. Both paths apply the same
 * limit, so behaviour does not depend on where the app runs.
 */
export async function readBodyBytes(req: Request, limit: number): Promise<Buffer> {
  const preRead = (req as RequestWithRawBody).rawBody;
  if (Buffer.isBuffer(preRead)) {
    if (preRead.length > limit) throw payloadTooLarge(limit);
    return preRead;
  }
  const declared = req.get("content-length");
  try {
    return await getRawBody(req, { limit, length: declared ?? undefined });
  } catch (error) {
    throw bodyReadError(error, limit);
  }
}

/** Parses a JSON request body, enforcing its media type and size limit. */
export async function readJsonBody(req: Request, limit: number): Promise<unknown> {
  if (!req.is("application/json")) throw unsupportedMediaType("application/json");
  const charset = (req.get("content-type") ?? "").match(/charset=([^;]+)/i)?.[1]?.trim().toLowerCase();
  if (charset && charset !== "utf-8" && charset !== "utf8") throw unsupportedMediaType("UTF-8 encoded JSON");
  const bytes = await readBodyBytes(req, limit);
  if (bytes.length === 0) throw invalidRequest("The request body is empty; a JSON object is expected.");
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw invalidRequest("The request body is not valid JSON.");
  }
  // A lone surrogate, which JSON's \uD800 escapes can carry but Firestore, and most systems after
  // it, cannot store.
  const malformed = pathOfString(value, (text) => !text.isWellFormed());
  if (malformed !== null) {
    throw invalidRequest("The request body has a string that is not well-formed Unicode (a lone surrogate).", [
      { path: malformed, message: "Not well-formed Unicode." },
    ]);
  }
  return value;
}

function bodyReadError(error: unknown, limit: number): unknown {
  const type = (error as { type?: string }).type;
  if (type === "entity.too.large") return payloadTooLarge(limit);
  if (type === "request.size.invalid") {
    return invalidRequest("The request body is shorter than its Content-Length.");
  }
  if (type === "request.aborted") return new ApiError("invalid_request", "The request was aborted.");
  return error;
}
