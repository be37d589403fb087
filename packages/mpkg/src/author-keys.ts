import { readFile, writeFile } from "node:fs/promises";
import { calculateJwkThumbprint, CompactSign, exportJWK, generateKeyPair, importJWK, type JWK } from "jose";
import { UsageError } from "./problems";

/**
 * Author keys (contract §15): an Ed25519 key pair kept in a JWK file of the publisher's (never
 * sent anywhere); its public half is registered with `mpkg keys add`, and `mpkg publish --key`
 * signs each package with it.
 */

export interface AuthorKeyFile {
  path: string;
  kid: string;
  publicJwk: { kty: "OKP"; crv: "Ed25519"; x: string };
}

/** Writes a new private key to `path` (refusing to overwrite one; owner-only permissions). */
export async function generateAuthorKey(path: string): Promise<AuthorKeyFile> {
  const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  const jwk = await exportJWK(privateKey);
  const publicJwk = { kty: "OKP" as const, crv: "Ed25519" as const, x: jwk.x! };
  const kid = await calculateJwkThumbprint(publicJwk);
  await writeFile(path, `${JSON.stringify({ ...jwk, kid, alg: "EdDSA" }, null, 2)}\n`, { flag: "wx", mode: 0o600 }).catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(error.code === "EEXIST" ? `'${path}' exists; pick another file (a key is never overwritten).` : `Cannot write '${path}': ${error.message}`);
  });
  return { path, kid, publicJwk };
}

async function readKeyJwk(path: string): Promise<JWK> {
  let jwk: JWK;
  try {
    jwk = JSON.parse(await readFile(path, "utf8")) as JWK;
  } catch {
    throw new UsageError(`'${path}' is not a JWK file (make one with \`mpkg keys generate\`).`);
  }
  if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519" || typeof jwk.x !== "string") throw new UsageError(`'${path}' is not an Ed25519 JWK.`);
  return jwk;
}

const publicHalf = async (jwk: JWK) => {
  const publicJwk = { kty: "OKP" as const, crv: "Ed25519" as const, x: jwk.x! };
  return { kid: await calculateJwkThumbprint(publicJwk), publicJwk };
};

/** The public half of a key file (it may hold the private key too). */
export async function readAuthorKey(path: string): Promise<AuthorKeyFile> {
  return { path, ...(await publicHalf(await readKeyJwk(path))) };
}

/** The X-Author-Signature of a package: a compact JWS over { moduleId, version, sha256 }. */
export async function authorSignature(path: string, signed: { moduleId: string; version: string; sha256: string }): Promise<string> {
  const jwk = await readKeyJwk(path);
  if (typeof jwk.d !== "string") throw new UsageError(`'${path}' holds no private key ('d'): --key needs the file \`mpkg keys generate\` wrote.`);
  const { kid } = await publicHalf(jwk);
  const key = await importJWK({ ...jwk, alg: "EdDSA" }, "EdDSA");
  const payload = { moduleId: signed.moduleId, version: signed.version, sha256: signed.sha256 };
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload))).setProtectedHeader({ alg: "EdDSA", kid }).sign(key);
}
