import type { Provenance } from "../core/provenance";

/**
 * What a module signature vouches for: the compact JWS payload the service signs at sign time
 * and clients check against the bytes they downloaded (API §5).
 */
export interface SignaturePayload {
  moduleId: string;
  version: string;
  /** Hex SHA-256 of the package bytes. */
  sha256: string;
  size: number;
  publisherId: string;
  /** Signing time, whole seconds since the epoch. */
  iat: number;
  /** The CI run that signed it through trusted publishing (§15), when it did. */
  provenance?: Provenance;
  /** The publisher's key (GET /publishers/:publisherId/keys) of the author signature, when it has one. */
  authorKeyId?: string;
}

export function signaturePayload(
  target: { moduleId: string; version: string; sha256: string; size: number; publisherId: string; provenance?: Provenance | null; authorKeyId?: string | null },
  signedAt: Date,
): SignaturePayload {
  return {
    moduleId: target.moduleId,
    version: target.version,
    sha256: target.sha256,
    size: target.size,
    publisherId: target.publisherId,
    iat: Math.floor(signedAt.getTime() / 1000),
    ...(target.provenance ? { provenance: target.provenance } : {}),
    ...(target.authorKeyId ? { authorKeyId: target.authorKeyId } : {}),
  };
}
