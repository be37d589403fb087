import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
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
 * stays a string, which Node joins to the headers in one write; a compressed body is a Buffer,
 * which `end` sends with the headers in one writev (a profile shows one system call either way).
 */
const serialized = new WeakMap<object, Serialized>();

interface Serialized {
  json: string;
  bytes: number;
  etag: string;
  /** Whether this object was answered before: only then is its gzip worth making (once). */
  answered: boolean;
  gzip?: { data: Buffer; etag: string };
}

function serialize(body: unknown): Serialized {
  const known = typeof body === "object" && body !== null ? serialized.get(body) : undefined;
  if (known) return known;
  const json = JSON.stringify(body);
  const fresh: Serialized = { json, bytes: Buffer.byteLength(json), etag: strongEtag(json), answered: false };
  if (typeof body === "object" && body !== null) serialized.set(body, fresh);
  return fresh;
}

/**
 * Shared JSON bodies of at least this many bytes go gzip-compressed to clients that accept it.
 * Sending a body costs the server in proportion to its bytes (the kernel's copy and send are most
 * of a listing page's CPU, §18's `GET /modules`), and a page of JSON compresses five- to tenfold.
 */
const GZIP_FROM_BYTES = 1024;

/** Whether Accept-Encoding accepts gzip (RFC 9110 §12.5.3: listed, or `*`, without `q=0`). */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  let accepted = false;
  for (const part of header.split(",")) {
    const [coding, ...parameters] = part.trim().toLowerCase().split(";");
    const refused = parameters.some((parameter) => /^\s*q\s*=\s*0(\.0{0,3})?\s*$/.test(parameter));
    if (coding.trim() === "gzip") return !refused;
    if (coding.trim() === "*") accepted = !refused;
  }
  return accepted;
}

/**
 * The gzip of a shared body that is answered again (a body made for one answer is not worth
 * compressing), made once per object, with a strong ETag of its own: the compressed bytes are
 * another representation (RFC 9110 §8.8.3). If-None-Match with either tag of the same content is
 * answered 304 naming the tag the client holds (endShared), so a client that first got the JSON
 * as is does not download it again compressed.
 */
function compressed(body: Serialized): Serialized["gzip"] {
  if (!body.answered) {
    body.answered = true;
    return undefined;
  }
  body.gzip ??= { data: gzipSync(body.json), etag: `${body.etag.slice(0, -1)}-gzip"` };
  return body.gzip;
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
  if (caching === "public-anonymous") addVary(res, "Authorization");
  const type = media?.type ?? JSON_TYPE;
  const shared =
    status === 200 && !res.get("Cache-Control") && (caching === "public" || caching === "immutable" || (caching === "public-anonymous" && !req.get("authorization")));
  if (!shared) {
    if (!res.get("Cache-Control")) res.set("Cache-Control", NO_STORE);
    return endWith(res, status, type, media ? media.data : JSON.stringify(body));
  }
  const cacheControl = caching === "immutable" ? IMMUTABLE : `public, max-age=${policy.maxAgeSeconds}, s-maxage=${policy.sMaxAgeSeconds}`;
  if (media) return endShared(req, res, type, cacheControl, media.data, strongEtag(media.data));
  const json = serialize(body);
  if (json.bytes < GZIP_FROM_BYTES) return endShared(req, res, type, cacheControl, json.json, json.etag, json.bytes);
  addVary(res, "Accept-Encoding");
  const gzip = acceptsGzip(req.get("accept-encoding")) ? compressed(json) : undefined;
  const sameContent = json.gzip ? [json.etag, json.gzip.etag] : [json.etag];
  if (!gzip) return endShared(req, res, type, cacheControl, json.json, json.etag, json.bytes, undefined, sameContent);
  endShared(req, res, type, cacheControl, gzip.data, gzip.etag, gzip.data.length, "gzip", sameContent);
}

function addVary(res: Response, header: string): void {
  const vary = res.getHeader("Vary");
  res.setHeader("Vary", vary ? `${String(vary)}, ${header}` : header);
}

/**
 * A shared answer: its validator and lifetime, then an empty 304 when the client holds it already
 * (in any of the content's representations, `sameContent`: the 304 names the one it holds), else
 * the body.
 */
function endShared(
  req: Request,
  res: Response,
  type: string,
  cacheControl: string,
  payload: string | Buffer,
  etag: string,
  bytes?: number,
  encoding?: "gzip",
  sameContent: string[] = [etag],
): void {
  res.set({ ETag: etag, "Cache-Control": cacheControl });
  const held = sameContent.find((tag) => ifNoneMatchMatches(req.get("if-none-match"), tag));
  if (held) {
    res.setHeader("ETag", held);
    res.status(304).end();
    return;
  }
  if (encoding) res.setHeader("Content-Encoding", encoding);
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
