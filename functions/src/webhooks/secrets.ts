import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { ApiError } from "../core/errors";

/**
 * Endpoint secrets (contract §21): `whsec_` and the base64 of 32 random bytes, shown once, and
 * stored encrypted (AES-256-GCM under WEBHOOK_SECRETS_KEY), so that reading the database alone
 * does not let anybody sign as the marketplace. A sealed secret is bound to its endpoint (its id is
 * the cipher's associated data): copied onto another endpoint, it does not open.
 */

export const newWebhookSecret = () => `whsec_${randomBytes(32).toString("base64")}`;

const keyOf = (key: Buffer | null): Buffer => {
  if (!key) throw new ApiError("unavailable", "Webhooks are not configured: WEBHOOK_SECRETS_KEY is not set.");
  return key;
};

const boundTo = (endpointId: string) => Buffer.from(`webhook-endpoint:${endpointId}`, "utf8");

/** `v2.<iv>.<ciphertext>.<tag>`, each base64url, sealed for one endpoint. */
export function encryptSecret(secret: string, key: Buffer | null, endpointId: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keyOf(key), iv);
  cipher.setAAD(boundTo(endpointId));
  const sealed = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
  return ["v2", iv, sealed, cipher.getAuthTag()].map((part) => (typeof part === "string" ? part : part.toString("base64url"))).join(".");
}

/**
 * The secret sealed for this endpoint; throws when it was sealed for another. `v1` secrets, sealed
 * before they were bound, still open until the endpoint's secret is rotated.
 */
export function decryptSecret(stored: string, key: Buffer | null, endpointId: string): string {
  const [version, iv, sealed, tag] = stored.split(".");
  if ((version !== "v1" && version !== "v2") || !iv || !sealed || !tag) throw new Error("An endpoint secret is stored in an unknown form.");
  const decipher = createDecipheriv("aes-256-gcm", keyOf(key), Buffer.from(iv, "base64url"));
  if (version === "v2") decipher.setAAD(boundTo(endpointId));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(sealed, "base64url")), decipher.final()]).toString("utf8");
}
