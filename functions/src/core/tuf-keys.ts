import { canonicalize } from "@tufjs/canonical-json";
import { Key, Signature } from "@tufjs/models";
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from "node:crypto";

/**
 * TUF keys: Ed25519 or ECDSA P-256 private keys in PKCS#8 PEM, as `TUF_ONLINE_KEY` and the
 * offline key files hold them. A key's public half is written as TUF's key object, and its id is
 * the SHA-256 of that object's canonical JSON (as python-tuf computes it). ECDSA signatures are
 * DER, the form TUF clients verify.
 */

export interface TufSigner {
  key: Key;
  keyId: string;
  sign(data: Buffer): Signature;
}

const PEM_BLOCK = /-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----/g;

/** Every PKCS#8 private key in a text (one secret may hold a key and its successor during a rotation). */
export function parsePrivateKeys(text: string): KeyObject[] {
  return (text.match(PEM_BLOCK) ?? []).map((pem) => createPrivateKey(pem));
}

export function signerOf(privateKey: KeyObject): TufSigner {
  const publicKey = createPublicKey(privateKey);
  let fields: { keyType: string; scheme: string; keyVal: Record<string, string> };
  let algorithm: string | null;
  if (privateKey.asymmetricKeyType === "ed25519") {
    const raw = Buffer.from(publicKey.export({ format: "jwk" }).x!, "base64url");
    fields = { keyType: "ed25519", scheme: "ed25519", keyVal: { public: raw.toString("hex") } };
    algorithm = null;
  } else if (privateKey.asymmetricKeyType === "ec" && privateKey.asymmetricKeyDetails?.namedCurve === "prime256v1") {
    fields = { keyType: "ecdsa", scheme: "ecdsa-sha2-nistp256", keyVal: { public: publicKey.export({ format: "pem", type: "spki" }).toString() } };
    algorithm = "sha256";
  } else {
    throw new Error("A TUF key must be Ed25519 or ECDSA P-256 (PKCS#8 PEM).");
  }
  const keyId = createHash("sha256")
    .update(canonicalize({ keytype: fields.keyType, scheme: fields.scheme, keyval: fields.keyVal }))
    .digest("hex");
  return {
    key: new Key({ keyID: keyId, ...fields }),
    keyId,
    sign: (data) => new Signature({ keyID: keyId, sig: sign(algorithm, data, { key: privateKey, dsaEncoding: "der" }).toString("hex") }),
  };
}

/** A new Ed25519 key, PKCS#8 PEM. */
export function generateTufKey(): string {
  return generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }).toString();
}
