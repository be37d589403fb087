import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { ApiError } from "../core/errors";

/**
 * Endpoint secrets (contract §21): `whsec_` and the base64 of 32 random bytes, shown once, and
 * stored encrypted (AES-256-GCM under WEBHOOK_SECRETS_KEY), so that reading the database alone
 * does not let anybody sign as the marketplace.
 */

export const newWebhookSecret = () => `whsec_${randomBytes(32).toString("base64")}`;

const keyOf = (key: Buffer | null): Buffer => {
  if (!key) throw new ApiError("unavailable", "Webhooks are not configured: WEBHOOK_SECRETS_KEY is not set.");
  return key;
};

/** `v1.<iv>.<ciphertext>.<tag>`, each base64url. */
export function encryptSecret(secret: string, key: Buffer | null): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keyOf(key), iv);
  const sealed = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
  return ["v1", iv, sealed, cipher.getAuthTag()].map((part) => (typeof part === "string" ? part : part.toString("base64url"))).join(".");
}

export function decryptSecret(stored: string, key: Buffer | null): string {
  const [version, iv, sealed, tag] = stored.split(".");
  if (version !== "v1" || !iv || !sealed || !tag) throw new Error("An endpoint secret is stored in an unknown form.");
  const decipher = createDecipheriv("aes-256-gcm", keyOf(key), Buffer.from(iv, "base64url"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(sealed, "base64url")), decipher.final()]).toString("utf8");
}
