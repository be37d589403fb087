import { createHash } from "node:crypto";
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet } from "jose";
import type { SignaturePayload } from "../../../functions/src/publishing/signature";
import { verifyActivationCertificate as verifyCertificateAsTheAppDoes, type ActivationClaims } from "../../../docs/examples/verify-activation-certificate";
import { acceptRevocationList, isRevoked, type RevocationList } from "../../../docs/examples/verify-revocations";

/** Why a package does not verify; exit 1. */
export class VerificationError extends Error {}

/**
 * Checks a package against its signature, offline: the JWS verifies with a key of the JWKS, is a
 * package signature (no `typ`: an activation certificate is refused), and names these bytes
 * (`sha256` and `size`).
 */
export async function verifyPackage(bytes: Buffer, signature: string, jwks: JSONWebKeySet): Promise<SignaturePayload> {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(signature);
  } catch {
    throw new VerificationError("The signature is not a compact JWS.");
  }
  if (header.typ !== undefined) throw new VerificationError(`This is a '${header.typ}', not a package signature.`);
  let payload: SignaturePayload;
  try {
    const verified = await compactVerify(signature, createLocalJWKSet(jwks), { algorithms: ["EdDSA"] });
    payload = JSON.parse(new TextDecoder().decode(verified.payload)) as SignaturePayload;
  } catch (error) {
    throw new VerificationError(`The signature does not verify with these signing keys (${(error as Error).message}).`);
  }
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  if (payload.sha256 !== sha256 || payload.size !== bytes.length) {
    throw new VerificationError(`The file is not the signed package: its sha256 is ${sha256}, the signature names ${payload.sha256}.`);
  }
  return payload;
}

/**
 * Refuses a package that the marketplace revoked: the list (a `GET /revocations` answer's `list`)
 * is checked as the desktop app checks it (docs/examples), then searched for this package.
 */
export async function assertNotRevoked(signed: SignaturePayload, list: string, jwks: JSONWebKeySet): Promise<{ serial: number }> {
  const accepted = await verifyRevocationList(list, jwks, null);
  const entry = isRevoked(accepted, signed);
  if (entry) throw new VerificationError(`${signed.moduleId}@${signed.version} is revoked by the marketplace: ${entry.reason}`);
  return { serial: accepted.serial };
}

/** An activation certificate, checked as the desktop app checks it offline (docs/examples), or a VerificationError saying why not. */
export async function verifyActivationCertificate(certificate: string, jwks: JSONWebKeySet, expected: { deviceId?: string; moduleId?: string }): Promise<ActivationClaims> {
  return verifiedAs("The activation certificate", () => verifyCertificateAsTheAppDoes(certificate, jwks, expected));
}

/** A revocation list, checked as the desktop app checks it before keeping it (docs/examples), or a VerificationError saying why not. */
export async function verifyRevocationList(list: string, jwks: JSONWebKeySet, keptSerial: number | null): Promise<RevocationList> {
  return verifiedAs("The revocation list", () => acceptRevocationList(list, jwks, keptSerial === null ? null : { serial: keptSerial }));
}

async function verifiedAs<T>(what: string, check: () => Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (error) {
    throw new VerificationError(`${what} does not verify: ${(error as Error).message}`);
  }
}
