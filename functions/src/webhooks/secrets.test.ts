import { createCipheriv, randomBytes } from "node:crypto";
import { decryptSecret, encryptSecret, newWebhookSecret } from "./secrets";

describe("sealed endpoint secrets (§21)", () => {
  const key = randomBytes(32);

  it("open for the endpoint they were sealed for, and for no other", () => {
    const secret = newWebhookSecret();
    const sealed = encryptSecret(secret, key, "wh_a");
    expect(sealed.startsWith("v2.")).toBe(true);
    expect(decryptSecret(sealed, key, "wh_a")).toBe(secret);
    expect(() => decryptSecret(sealed, key, "wh_b")).toThrow();
    expect(() => decryptSecret(sealed, randomBytes(32), "wh_a")).toThrow();
  });

  it("still open a secret sealed before secrets were bound (v1), until it is rotated", () => {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", key, iv);
    const body = Buffer.concat([cipher.update("whsec_old", "utf8"), cipher.final()]);
    const legacy = ["v1", iv, body, cipher.getAuthTag()].map((part) => (typeof part === "string" ? part : part.toString("base64url"))).join(".");
    expect(decryptSecret(legacy, key, "wh_any")).toBe("whsec_old");
  });
});
