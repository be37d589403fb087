import { createHash, createPublicKey, timingSafeEqual } from "node:crypto";
import { createVerifier, httpbis } from "http-message-signatures";
import { parseDictionary } from "structured-headers";
import type { JSONWebKeySet } from "jose";

/** An answer of the API as the app received it: status, headers (lower-case names) and body bytes. */
export interface ReceivedAnswer {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
}

export class UnverifiedAnswerError extends Error {}

/**
 * Checks that an answer of GET /users/me, POST /modules/confirm, GET /modules/download/:id,
 * POST /modules/updates or GET /revocations comes from the marketplace unchanged (RFC 9421, RFC
 * 9530): the body matches Content-Digest, and sig1 covers status, digest and type, verifies with
 * a key of GET /signing-keys, is at most `maxAgeSeconds` old and, when the request sent
 * `Accept-Signature: sig1=("@status" "content-digest" "content-type");nonce="<nonce>"`, carries
 * that nonce. Throws UnverifiedAnswerError otherwise; use the answer only after this returns.
 */
export async function verifyAnswer(answer: ReceivedAnswer, signingKeys: JSONWebKeySet, expected: { nonce?: string; maxAgeSeconds?: number } = {}) {
  const digest = parseDictionary(answer.headers["content-digest"] ?? "").get("sha-256")?.[0];
  const actual = createHash("sha256").update(answer.body).digest();
  if (!(digest instanceof ArrayBuffer) || digest.byteLength !== actual.length || !timingSafeEqual(Buffer.from(digest), actual)) {
    throw new UnverifiedAnswerError("The body does not match its Content-Digest.");
  }
  let keyid: string | undefined;
  const verified = await httpbis
    .verifyMessage(
      {
        keyLookup: async (params) => {
          const jwk = signingKeys.keys.find((key) => key.kid === params.keyid);
          if (!jwk || params.alg !== "ed25519" || params.nonce !== expected.nonce) return null;
          keyid = jwk.kid;
          return { id: jwk.kid, algs: ["ed25519"], verify: createVerifier(createPublicKey({ key: jwk as never, format: "jwk" }), "ed25519") };
        },
        requiredFields: ["@status", "content-digest", "content-type"],
        requiredParams: ["created", "keyid", "alg", ...(expected.nonce === undefined ? [] : ["nonce"])],
        maxAge: expected.maxAgeSeconds ?? 300,
      },
      { status: answer.status, headers: answer.headers },
    )
    .catch((error: Error) => {
      throw new UnverifiedAnswerError(`The answer's signature is not acceptable: ${error.message}.`);
    });
  if (verified !== true) throw new UnverifiedAnswerError("The answer is not signed by the marketplace (or not for this request's nonce).");
  return { keyid: keyid! };
}
