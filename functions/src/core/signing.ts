import { createPrivateKey, hkdfSync, sign as signBytes } from "node:crypto";
import { calculateJwkThumbprint, CompactSign, exportJWK, generateKeyPair, importJWK, type JWK, type KeyLike } from "jose";
import { z } from "zod";

/**
 * Module-signing keys: Ed25519, as a JSON key set `{ "keys": [JWK, …] }`.
 *
 * The first key is the active one and must be private (it has `d`). The others are earlier keys
 * kept so that signatures made with them still verify; they may be public-only. Rotation: put a
 * new private key first, keep the previous ones after it. A key's id is its `kid`, or else its
 * RFC 7638 thumbprint.
 */
const ed25519Jwk = z.object({
  kty: z.literal("OKP"),
  crv: z.literal("Ed25519"),
  x: z.string().min(1),
  d: z.string().min(1).optional(),
  kid: z.string().min(1).optional(),
});
const keySetJson = z.object({ keys: z.array(ed25519Jwk).min(1) });

export interface PublicSigningJwk {
  kty: "OKP";
  crv: "Ed25519";
  x: string;
  kid: string;
  alg: "EdDSA";
  use: "sig";
}

export interface SigningKeys {
  /** Id of the key that signs now. */
  readonly keyId: string;
  /** A compact JWS (alg EdDSA, kid = keyId, and `typ` when given) over the JSON of `payload`. */
  sign(payload: Record<string, unknown>, header?: { typ: string }): Promise<string>;
  /** A raw Ed25519 signature of bytes with the active key (HTTP Message Signatures, core/answer-signatures.ts). */
  signRaw(data: Uint8Array): Buffer;
  /** Every public key whose signatures may still be in use. */
  jwks(): { keys: PublicSigningJwk[] };
  /**
   * A 32-byte secret for `purpose` (e.g. MACs of list cursors), derived from the active key, so
   * every instance has the same one without another secret to manage.
   */
  derivedKey(purpose: string): Buffer;
}

export async function loadSigningKeys(json: string): Promise<SigningKeys> {
  let parsed: z.output<typeof keySetJson>;
  try {
    parsed = keySetJson.parse(JSON.parse(json));
  } catch (error) {
    throw new Error(`MODULE_SIGNING_KEYS is not an Ed25519 JWK set: ${(error as Error).message}`);
  }
  const [active] = parsed.keys;
  if (!active.d) throw new Error("MODULE_SIGNING_KEYS: the first key must be a private key (with 'd').");
  const publicKeys: PublicSigningJwk[] = await Promise.all(
    parsed.keys.map(async (key) => ({
      kty: "OKP" as const,
      crv: "Ed25519" as const,
      x: key.x,
      kid: key.kid ?? (await calculateJwkThumbprint({ kty: key.kty, crv: key.crv, x: key.x })),
      alg: "EdDSA" as const,
      use: "sig" as const,
    })),
  );
  const keyId = publicKeys[0].kid;
  // One object for the life of the instance, so its JSON and ETag are computed once (core/http-cache.ts).
  const jwks = { keys: publicKeys };
  const privateKey = (await importJWK({ ...active, alg: "EdDSA" }, "EdDSA")) as KeyLike;
  const rawKey = createPrivateKey({ key: { kty: "OKP", crv: "Ed25519", x: active.x, d: active.d }, format: "jwk" });
  const encoder = new TextEncoder();
  return {
    signRaw: (data) => signBytes(null, data, rawKey),
    keyId,
    sign: (payload, header) =>
      new CompactSign(encoder.encode(JSON.stringify(payload)))
        .setProtectedHeader({ alg: "EdDSA", kid: keyId, ...header })
        .sign(privateKey),
    jwks: () => jwks,
    derivedKey: (purpose) => Buffer.from(hkdfSync("sha256", Buffer.from(active.d!, "base64url"), Buffer.alloc(0), `marketplace:${purpose}`, 32)),
  };
}

/** A new private Ed25519 JWK with its thumbprint as `kid`. */
export async function generateSigningKey(): Promise<JWK> {
  const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint({ kty: jwk.kty, crv: jwk.crv, x: jwk.x });
  return { ...jwk, kid };
}
