import { calculateJwkThumbprint, compactVerify, decodeProtectedHeader, importJWK } from "jose";
import type { Transaction } from "firebase-admin/firestore";
import type { z } from "zod";
import { auditLog, type Actor } from "../core/audit-log";
import type { DeveloperAccount } from "../core/auth";
import { isAlreadyExists, toIso } from "../core/documents";
import { ApiError, invalidRequest } from "../core/errors";
import type { Deps } from "../deps";
import { developerStore } from "../developers/developer-store";
import { authorKeyStore, type AuthorKeyRecord } from "./author-key-store";
import type { addAuthorKeySchema, authorKeySchema, publisherKeysSchema } from "./schemas";

/**
 * Author keys (contract §15): publishers sign their packages with their own Ed25519 keys on top of
 * the registry's signature, so a package altered anywhere after it left the author fails to verify
 * even against a compromised registry. The public keys are listed per publisher for anyone.
 */

export const MAX_ACTIVE_AUTHOR_KEYS = 10;

type AuthorKeyView = z.output<typeof authorKeySchema>;

const view = (key: AuthorKeyRecord): AuthorKeyView => ({
  kid: key.kid,
  name: key.name,
  createdAt: toIso(key.createdAt),
  revokedAt: key.revokedAt ? toIso(key.revokedAt) : null,
});

const publicJwk = (x: string) => ({ kty: "OKP" as const, crv: "Ed25519" as const, x });

export async function addAuthorKey({ db, clock }: Deps, developer: DeveloperAccount, actor: Actor, input: z.output<typeof addAuthorKeySchema>): Promise<AuthorKeyView> {
  const keys = authorKeyStore(db);
  const active = (await keys.ofPublisher(developer.publisherId)).filter((key) => !key.revokedAt);
  if (active.length >= MAX_ACTIVE_AUTHOR_KEYS) {
    throw invalidRequest(`A publisher may have at most ${MAX_ACTIVE_AUTHOR_KEYS} active keys; revoke one first.`);
  }
  const now = clock();
  const key: AuthorKeyRecord = {
    kid: await calculateJwkThumbprint(publicJwk(input.publicKey.x)),
    publisherId: developer.publisherId,
    developerId: developer.id,
    name: input.name,
    x: input.publicKey.x,
    createdAt: now,
    revokedAt: null,
  };
  const event = { action: "author-key.add", target: developer.id, details: { kid: key.kid, name: key.name, publisherId: key.publisherId }, answer: view(key) };
  await auditLog(db)
    .commit(actor, event, now, (batch) => keys.createIn(batch, key))
    .catch((error: unknown) => {
      if (isAlreadyExists(error)) throw new ApiError("author_key_exists", `The key ${key.kid} is registered already (a revoked key cannot come back); generate a new one.`);
      throw error;
    });
  return event.answer;
}

/** The caller's publisher's keys, revoked ones included, oldest first. */
export async function listAuthorKeys({ db }: Deps, developer: DeveloperAccount) {
  return { items: (await authorKeyStore(db).ofPublisher(developer.publisherId)).map(view) };
}

/** Revokes a key of the caller's publisher: refused for new uploads from now on; revoking twice changes nothing. */
export async function revokeAuthorKey({ db, clock }: Deps, developer: DeveloperAccount, actor: Actor, kid: string): Promise<void> {
  const keys = authorKeyStore(db);
  const key = await keys.get(kid);
  if (!key || key.publisherId !== developer.publisherId) throw new ApiError("not_found", `Publisher '${developer.publisherId}' has no key '${kid}'.`);
  if (key.revokedAt) return;
  const event = { action: "author-key.revoke", target: developer.id, details: { kid, publisherId: key.publisherId } };
  await auditLog(db).commit(actor, event, clock(), (batch) => keys.revokeIn(batch, kid, clock()));
}

/** Anyone: a publisher's public keys as JWKs, revoked ones with `revokedAt`. */
export async function publisherKeys({ db }: Deps, publisherId: string): Promise<z.output<typeof publisherKeysSchema>> {
  const [keys, exists] = await Promise.all([authorKeyStore(db).ofPublisher(publisherId), developerStore(db).publisherTaken(publisherId)]);
  if (!exists) throw new ApiError("not_found", `No publisher '${publisherId}'.`);
  return {
    keys: keys.map((key) => ({
      ...publicJwk(key.x),
      kid: key.kid,
      alg: "EdDSA" as const,
      use: "sig" as const,
      createdAt: toIso(key.createdAt),
      ...(key.revokedAt ? { revokedAt: toIso(key.revokedAt) } : {}),
    })),
  };
}

/** Re-reads an author key in the sign's transaction: revoked since the signature was checked, the sign is refused. */
export async function assertAuthorKeyActive(db: Deps["db"], tx: Transaction, kid: string): Promise<void> {
  const key = await authorKeyStore(db).getIn(tx, kid);
  if (!key || key.revokedAt) throw new ApiError("invalid_author_signature", `The author signature was made with key '${kid}', revoked meanwhile.`);
}

/** What an author signature vouches for: this package, as this module version. */
export interface AuthoredPackage {
  moduleId: string;
  version: string;
  sha256: string;
}

/**
 * Checks an `X-Author-Signature`: a compact JWS (EdDSA) by an active key of the publisher whose
 * payload names exactly this module, version and package hash. Anything else is 422
 * `invalid_author_signature`, saying what is wrong.
 */
export async function verifyAuthorSignature(db: Deps["db"], publisherId: string, jws: string, expected: AuthoredPackage): Promise<{ authorKeyId: string }> {
  const refused = (why: string) => new ApiError("invalid_author_signature", `The author signature ${why}.`);
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(jws);
  } catch {
    throw refused("is not a compact JWS");
  }
  if (header.alg !== "EdDSA") throw refused(`must be alg EdDSA, not ${JSON.stringify(header.alg ?? null)}`);
  if (typeof header.kid !== "string") throw refused("names no kid");
  const key = await authorKeyStore(db).get(header.kid);
  if (!key || key.publisherId !== publisherId) throw refused(`names key '${header.kid}', which is not a key of publisher '${publisherId}'`);
  if (key.revokedAt) throw refused(`was made with key '${key.kid}', revoked at ${toIso(key.revokedAt)}`);
  let payload: unknown;
  try {
    const verified = await compactVerify(jws, await importJWK({ ...publicJwk(key.x), alg: "EdDSA" }, "EdDSA"), { algorithms: ["EdDSA"] });
    payload = JSON.parse(new TextDecoder().decode(verified.payload));
  } catch {
    throw refused(`does not verify with key '${key.kid}'`);
  }
  const signed = (payload ?? {}) as Record<string, unknown>;
  for (const field of ["moduleId", "version", "sha256"] as const) {
    if (signed[field] !== expected[field]) throw refused(`is for ${field} ${JSON.stringify(signed[field] ?? null)}, not this package's ${JSON.stringify(expected[field])}`);
  }
  return { authorKeyId: key.kid };
}
