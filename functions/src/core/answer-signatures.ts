import { createHash } from "node:crypto";
import type { RequestHandler, Response } from "express";
import { httpbis } from "http-message-signatures";
import { parseDictionary } from "structured-headers";
import { invalidRequest } from "./errors";
import { NO_STORE } from "./http-cache";
import type { Logger } from "./logger";
import type { SigningKeys } from "./signing";

/**
 * HTTP Message Signatures (RFC 9421) on the answers the desktop app decides on (contract §15), so
 * a proxy on the user's network cannot turn "not entitled" into "entitled": `Content-Digest`
 * (RFC 9530, sha-256) of the body, and `sig1` over `@status`, `content-digest` and `content-type`
 * with the module-signing key of GET /signing-keys. The signature base is built by the
 * `http-message-signatures` package, never by hand.
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

/**
 * Middleware for a signed route: whatever leaves through `res.end` with a body (the answer, or a
 * problem from any layer after it) is digested and signed first.
 */
export function answerSignatures(keys: SigningKeys, clock: () => Date, logger: Logger): RequestHandler {
  const key = { id: keys.keyId, alg: "ed25519", sign: async (data: Buffer) => keys.signRaw(data) };
  const sign = (status: number, headers: Record<string, string>, nonce: string | undefined) =>
    httpbis.signMessage(
      {
        key,
        name: ANSWER_SIGNATURE_LABEL,
        fields: SIGNED_COMPONENTS,
        params: ["created", "keyid", "alg", ...(nonce === undefined ? [] : ["nonce"])],
        paramValues: { created: clock(), ...(nonce === undefined ? {} : { nonce }) },
      },
      { status, headers },
    );
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
    withSignedEnd(res, (status, headers) => sign(status, headers, nonce), logger);
    next(refusal);
  };
}

type Signer = (status: number, headers: Record<string, string>) => Promise<{ headers: Record<string, string | string[]> }>;

function withSignedEnd(res: Response, sign: Signer, logger: Logger): void {
  const end = res.end.bind(res) as (chunk?: unknown, encoding?: unknown, callback?: unknown) => Response;
  res.end = ((chunk?: unknown, encoding?: unknown, callback?: unknown) => {
    if (res.headersSent || chunk === undefined || chunk === null || typeof chunk === "function") return end(chunk, encoding, callback);
    const body = typeof chunk === "string" ? Buffer.from(chunk, typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8") : Buffer.from(chunk as Uint8Array);
    const done = typeof encoding === "function" ? encoding : callback;
    const digest = contentDigest(body);
    res.set("Content-Digest", digest);
    res.set("Cache-Control", `${res.get("Cache-Control") ?? NO_STORE}, no-transform`);
    sign(res.statusCode, { "content-digest": digest, "content-type": res.get("Content-Type") ?? "" })
      .then(({ headers }) => res.set({ "Signature-Input": headers["Signature-Input"], Signature: headers["Signature"] }))
      // An unsigned answer is refused by a client that checks; it is still better than none.
      .catch((error: Error) => logger.error("could not sign an answer", { error: error.message }))
      .finally(() => end(body, done));
    return res;
  }) as Response["end"];
}
