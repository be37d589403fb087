import type { Request } from "express";
import getRawBody from "raw-body";
import { ApiError, invalidRequest, payloadTooLarge, unsupportedMediaType } from "./errors";

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
  const malformed = findIllFormedString(value);
  if (malformed !== null) {
    throw invalidRequest("The request body has a string that is not well-formed Unicode (a lone surrogate).", [
      { path: malformed, message: "Not well-formed Unicode." },
    ]);
  }
  return value;
}

/**
 * The path of the first string (or key) holding a lone surrogate, which JSON's \uD800 escapes can
 * carry but Firestore, and most systems after it, cannot store; null when there is none. Walked
 * with an explicit stack, not recursion: a body may nest as deep as its size allows.
 */
function findIllFormedString(root: unknown): string | null {
  const pending: { value: unknown; path: string }[] = [{ value: root, path: "" }];
  const child = (path: string, key: string | number) => (path ? `${path}.${key}` : String(key));
  while (pending.length > 0) {
    const { value, path } = pending.pop()!;
    if (typeof value === "string") {
      if (!value.isWellFormed()) return path;
    } else if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index -= 1) pending.push({ value: value[index], path: child(path, index) });
    } else if (value !== null && typeof value === "object") {
      const entries = Object.entries(value);
      for (let index = entries.length - 1; index >= 0; index -= 1) {
        const [key, item] = entries[index];
        if (!key.isWellFormed()) return child(path, key);
        pending.push({ value: item, path: child(path, key) });
      }
    }
  }
  return null;
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
