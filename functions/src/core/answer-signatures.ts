import { createHash } from "node:crypto";
import type { RequestHandler, Response } from "express";
import { parseDictionary } from "structured-headers";
import { invalidRequest } from "./errors";
import { NO_STORE } from "./http-cache";
import type { Logger } from "./logger";
import type { SigningKeys } from "./signing";

/**
 * HTTP Message Signatures (RFC 9421) on the answers the desktop app decides on (contract §15), so
 * a proxy on the user's network cannot turn "not entitled" into "entitled": `Content-Digest`
 * (RFC 9530, sha-256) of the body, and `sig1` over `@status`, `content-digest` and `content-type`
 * with the module-signing key of GET /signing-keys.
 *
 * The signature base and the two headers have one fixed shape, serialized here (answerSignature):
 * the `http-message-signatures` package built the same bytes in about 90 µs an answer, this in 3
 * (the Ed25519 signature itself takes about 60). A property test holds the two byte for byte
 * equal, and clients verify with that package (docs/examples/verify-answer.ts).
 *
 * A request's `Accept-Signature: sig1=(…);nonce="…"` adds that nonce to the signature, so an answer
 * recorded for one request cannot be replayed to another; such an answer is never shared by caches.
 * Answers are marked `no-transform`, so no intermediary re-encodes the body the digest covers.
 */

export const ANSWER_SIGNATURE_LABEL = "sig1";
export const SIGNED_COMPONENTS = ["@status", "content-digest", "content-type"];
const MAX_NONCE_LENGTH = 256;
const NONCE = /^[\x21-\x7e]+$/;

/** The nonce the caller asked `sig1` to carry, if any; a malformed Accept-Signature is a 400. */
export function requestedNonce(header: string | undefined): string | undefined {
  if (header === undefined || header.trim() === "") return undefined;
  let requested: ReturnType<typeof parseDictionary>;
  try {
    requested = parseDictionary(header);
  } catch {
    throw invalidRequest("Accept-Signature is not a structured-field dictionary (RFC 9421 §5.1), e.g. sig1=(\"@status\");nonce=\"…\".");
  }
  const member = requested.get(ANSWER_SIGNATURE_LABEL);
  if (!member) return undefined;
  const nonce = member[1].get("nonce");
  if (nonce === undefined) return undefined;
  if (typeof nonce !== "string" || nonce.length > MAX_NONCE_LENGTH || !NONCE.test(nonce)) {
    throw invalidRequest(`The nonce of Accept-Signature must be a string of 1-${MAX_NONCE_LENGTH} visible ASCII characters.`);
  }
  return nonce;
}

/** `sha-256=:<base64>:` of the body (RFC 9530). */
export const contentDigest = (body: Uint8Array) => `sha-256=:${createHash("sha256").update(body).digest("base64")}:`;

/** What `sig1` covers of an answer, and the parameters it is made with. */
export interface SignedAnswer {
  status: number;
  contentDigest: string;
  contentType: string;
  created: Date;
  keyId: string;
  nonce?: string;
}

/** An sf-string (RFC 8941 §3.3.3) of visible ASCII: quoted, with `"` and `\` escaped. */
const sfString = (value: string) => `"${value.replace(/[\\"]/g, "\\$&")}"`;
const COVERED = `(${SIGNED_COMPONENTS.map(sfString).join(" ")})`;

/**
 * The signature base of an answer (RFC 9421 §2.5) and the value of its `@signature-params`, which
 * Signature-Input repeats: components in the order of SIGNED_COMPONENTS, then `created`, `keyid`,
 * `alg` and, when asked for, `nonce`.
 */
export function answerSignatureBase(answer: SignedAnswer): { base: string; params: string } {
  const nonce = answer.nonce === undefined ? "" : `;nonce=${sfString(answer.nonce)}`;
  const params = `${COVERED};created=${Math.floor(answer.created.getTime() / 1000)};keyid=${sfString(answer.keyId)};alg="ed25519"${nonce}`;
  const base = `"@status": ${answer.status}\n"content-digest": ${answer.contentDigest.trim()}\n"content-type": ${answer.contentType.trim()}\n"@signature-params": ${params}`;
  return { base, params };
}

/** The two headers that carry an answer's signature. */
export interface SignatureHeaders {
  "Signature-Input": string;
  Signature: string;
}

/** The Signature-Input and Signature headers of an answer, signed with `sign` (Ed25519). */
export function answerSignature(answer: SignedAnswer, sign: (data: Buffer) => Buffer): SignatureHeaders {
  const { base, params } = answerSignatureBase(answer);
  return { "Signature-Input": `${ANSWER_SIGNATURE_LABEL}=${params}`, Signature: `${ANSWER_SIGNATURE_LABEL}=:${sign(Buffer.from(base)).toString("base64")}:` };
}

/**
 * Middleware for a signed route: whatever leaves through `res.end` with a body (the answer, or a
 * problem from any layer after it) is digested and signed first.
 */
export function answerSignatures(keys: SigningKeys, clock: () => Date, logger: Logger): RequestHandler {
  const sign = (status: number, contentDigest: string, contentType: string, nonce: string | undefined) =>
    answerSignature({ status, contentDigest, contentType, created: clock(), keyId: keys.keyId, nonce }, keys.signRaw);
  return (req, res, next) => {
    res.vary("Accept-Signature");
    let nonce: string | undefined;
    let refusal: unknown;
    try {
      nonce = requestedNonce(req.get("accept-signature"));
    } catch (error) {
      refusal = error;
    }
    // An answer bound to one request's nonce is that request's alone.
    if (nonce !== undefined) res.set("Cache-Control", NO_STORE);
    withSignedEnd(res, (status, digest, type) => sign(status, digest, type, nonce), logger);
    next(refusal);
  };
}

type Signer = (status: number, contentDigest: string, contentType: string) => SignatureHeaders;

function withSignedEnd(res: Response, sign: Signer, logger: Logger): void {
  const end = res.end.bind(res) as (chunk?: unknown, encoding?: unknown, callback?: unknown) => Response;
  res.end = ((chunk?: unknown, encoding?: unknown, callback?: unknown) => {
    if (res.headersSent || chunk === undefined || chunk === null || typeof chunk === "function") return end(chunk, encoding, callback);
    const body = typeof chunk === "string" ? Buffer.from(chunk, typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8") : Buffer.from(chunk as Uint8Array);
    const done = typeof encoding === "function" ? encoding : callback;
    const digest = contentDigest(body);
    res.set("Content-Digest", digest);
    res.set("Cache-Control", `${res.get("Cache-Control") ?? NO_STORE}, no-transform`);
    try {
      res.set(sign(res.statusCode, digest, res.get("Content-Type") ?? ""));
    } catch (error) {
      // An unsigned answer is refused by a client that checks; it is still better than none.
      logger.error("could not sign an answer", { error: (error as Error).message });
    }
    return end(body, done);
  }) as Response["end"];
}
