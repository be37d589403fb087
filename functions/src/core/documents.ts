import { Timestamp, type DocumentSnapshot } from "firebase-admin/firestore";
import semver from "semver";
import { z } from "zod";

/**
 * What every collection's store (`<resource>/*-store.ts`) shares: field types of stored
 * documents, and parsing a snapshot against a document's definition. Documents written by other
 * systems (billing, support) are parsed leniently where the data model marks fields optional,
 * and strictly where it does not.
 */

export const timestamp = z.instanceof(Timestamp);

/** A semver version as written in documents and manifests: "1.2.3", never "v1.2.3". */
export const semverVersion = z.string().refine((value) => semver.valid(value) === value, "must be a semver version such as 1.2.3");

/** A publisher's id, e.g. "acme": the namespace of its modules. */
export const PUBLISHER_ID = /^[a-z][a-z0-9-]{2,31}$/;
/** A module's id, `<publisherId>.<name>`, e.g. "acme.charts". */
export const MODULE_ID = /^[a-z][a-z0-9-]{2,31}\.[a-z0-9][a-z0-9-]{0,63}$/;

/** An entitlement key, e.g. "pro" or "beta-access". */
export const ENTITLEMENT_KEY = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const entitlementKey = z.string().regex(ENTITLEMENT_KEY, "must be 1-64 of [a-z0-9_-], starting with a letter or digit");

/** A document that does not match its definition: a data error, answered as a 500 and logged. */
export class MalformedDocumentError extends Error {
  constructor(
    readonly path: string,
    readonly issues: string[],
  ) {
    super(`Malformed document ${path}: ${issues.join("; ")}`);
    this.name = "MalformedDocumentError";
  }
}

/** The parsed data of an existing document, or null when it does not exist. */
export function readDocument<S extends z.ZodType>(schema: S, snapshot: DocumentSnapshot): z.output<S> | null {
  if (!snapshot.exists) return null;
  const result = schema.safeParse(snapshot.data());
  if (!result.success) {
    throw new MalformedDocumentError(
      snapshot.ref.path,
      result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`),
    );
  }
  return result.data;
}

export const toIso = (value: Date): string => value.toISOString();

/** Firestore's error code for a create() of a document that exists. */
const ALREADY_EXISTS = 6;
export const isAlreadyExists = (error: unknown) => (error as { code?: number }).code === ALREADY_EXISTS;
