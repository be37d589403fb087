import { createHash } from "node:crypto";
import type { Request, Response } from "express";

/**
 * HTTP caching of answers that do not depend on the caller (API §1): a strong ETag, 304 for a
 * matching If-None-Match, and `Cache-Control: public` with short lifetimes, so Firebase Hosting's
 * CDN serves repeats. Everything else is `private, no-store`.
 */
export interface CachePolicy {
  maxAgeSeconds: number;
  sMaxAgeSeconds: number;
}

/**
 * How a route may be cached: `public` always; `public-anonymous` only without Authorization (and
 * it always varies by Authorization); `immutable` for files that never change once served (TUF's
 * versioned metadata, §23), for a year; by default not at all.
 */
export type RouteCaching = "public" | "public-anonymous" | "immutable";

const IMMUTABLE = "public, max-age=31536000, immutable";

export const NO_STORE = "private, no-store";

/** A strong validator of a body: the base64url SHA-256 of its bytes. */
export function strongEtag(body: string | Buffer): string {
  return `"${createHash("sha256").update(body).digest("base64url")}"`;
}

/** If-None-Match matches by weak comparison (RFC 9110 §13.1.2): `*`, or any listed tag equal but for `W/`. */
export function ifNoneMatchMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, "");
  return header.split(",").some((tag) => tag.trim() === "*" || opaque(tag) === opaque(etag));
}

/**
 * Bodies served from memory (core/memo.ts) are the same object request after request: their JSON,
 * its length in bytes and their ETag are computed once per object, not once per request. The JSON
 * stays a string: Node writes a string body in one write with the headers, a Buffer in a second.
 */
const serialized = new WeakMap<object, Serialized>();

interface Serialized {
  json: string;
  bytes: number;
  etag: string;
}

function serialize(body: unknown): Serialized {
  const known = typeof body === "object" && body !== null ? serialized.get(body) : undefined;
  if (known) return known;
  const json = JSON.stringify(body);
  const fresh = { json, bytes: Buffer.byteLength(json), etag: strongEtag(json) };
  if (typeof body === "object" && body !== null) serialized.set(body, fresh);
  return fresh;
}

/** A body in another media type than JSON (the YAML update feeds, module icons). */
export interface MediaBody {
  data: string | Buffer;
  type: string;
}

/**
 * Sends an answer under the route's caching rule. A reply that set its own Cache-Control (an
 * answer that depends on the caller after all) is never shared.
 */
export function sendBody(
  req: Request,
  res: Response,
  status: number,
  body: unknown,
  caching: RouteCaching | undefined,
  policy: CachePolicy,
  media?: MediaBody,
): void {
  if (caching === "public-anonymous") {
    const vary = res.getHeader("Vary");
    res.setHeader("Vary", vary ? `${String(vary)}, Authorization` : "Authorization");
  }
  const type = media?.type ?? JSON_TYPE;
  const shared =
    status === 200 && !res.get("Cache-Control") && (caching === "public" || caching === "immutable" || (caching === "public-anonymous" && !req.get("authorization")));
  if (!shared) {
    if (!res.get("Cache-Control")) res.set("Cache-Control", NO_STORE);
    return endWith(res, status, type, media ? media.data : JSON.stringify(body));
  }
  const { json: payload, bytes, etag } = media ? { json: media.data, bytes: undefined, etag: strongEtag(media.data) } : serialize(body);
  res.set({ ETag: etag, "Cache-Control": caching === "immutable" ? IMMUTABLE : `public, max-age=${policy.maxAgeSeconds}, s-maxage=${policy.sMaxAgeSeconds}` });
  if (ifNoneMatchMatches(req.get("if-none-match"), etag)) {
    res.status(304).end();
    return;
  }
  endWith(res, 200, type, payload, bytes);
}

const JSON_TYPE = "application/json; charset=utf-8";

/**
 * What `res.type(t).send(body)` does for these answers, without its content-type parsing, MIME
 * look-up and freshness check (this module answers If-None-Match itself): Content-Type,
 * Content-Length, the body (Node leaves it out of a HEAD answer).
 */
function endWith(res: Response, status: number, type: string, payload: string | Buffer, bytes?: number): void {
  res.statusCode = status;
  res.setHeader("Content-Type", type);
  res.setHeader("Content-Length", bytes ?? (typeof payload === "string" ? Buffer.byteLength(payload) : payload.length));
  res.end(payload);
}
