import { Timestamp, type CollectionReference, type DocumentData, type DocumentReference, type DocumentSnapshot, type Firestore, type Transaction } from "firebase-admin/firestore";
import semver from "semver";
import { z } from "zod";
import { invalidRequest } from "./errors";

/**
 * What every collection's store (`<resource>/*-store.ts`) shares: field types of stored
 * documents, and parsing a snapshot against a document's definition. Documents written by other
 * systems (billing, support) are parsed leniently where the data model marks fields optional,
 * and strictly where it does not.
 */

export const timestamp = z.instanceof(Timestamp);

/** A semver version as written in documents and manifests: "1.2.3", never "v1.2.3". */
export const semverVersion = z.string().max(256).refine((value) => semver.valid(value) === value, "must be a semver version such as 1.2.3");

/**
 * A store's factory that builds each database's store once. A store holds no state of its own (its
 * methods read the request's deadlines when they are called), and building one at every call
 * (collection references, each method bound under the deadlines) took about 60 µs of each
 * `/users/me` in a CPU profile, a seventh of what the request spent in our own code.
 */
export function oncePerDatabase<S>(build: (db: Firestore) => S): (db: Firestore) => S {
  const stores = new WeakMap<Firestore, S>();
  return (db) => {
    let store = stores.get(db);
    if (store === undefined) stores.set(db, (store = build(db)));
    return store;
  };
}

/** A publisher's id, e.g. "acme": the namespace of its modules. */
export const PUBLISHER_ID = /^[a-z][a-z0-9-]{2,31}$/;
/** A module's id, `<publisherId>.<name>`, e.g. "acme.charts". */
export const MODULE_ID = /^[a-z][a-z0-9-]{2,31}\.[a-z0-9][a-z0-9-]{0,63}$/;

/** An entitlement key, e.g. "pro" or "beta-access". */
export const ENTITLEMENT_KEY = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const entitlementKey = z.string().regex(ENTITLEMENT_KEY, "must be 1-64 of [a-z0-9_-], starting with a letter or digit");

/** Firestore's limit on a document id, in UTF-8 bytes. */
const MAX_DOCUMENT_ID_BYTES = 1500;

/** Why a string cannot be a Firestore document id, or null when it can. */
export function documentIdProblem(id: string): string | null {
  if (id.length === 0) return "it is empty";
  if (id.includes("/")) return "it contains '/'";
  if (id === "." || id === "..") return "it is '.' or '..'";
  if (/^__.*__$/s.test(id)) return "ids of the form __…__ are reserved";
  if (!id.isWellFormed()) return "it is not valid Unicode";
  if (Buffer.byteLength(id, "utf8") > MAX_DOCUMENT_ID_BYTES) return `it is longer than ${MAX_DOCUMENT_ID_BYTES} bytes`;
  return null;
}

/**
 * The one place a document is addressed by an id (ESLint refuses `.doc(id)` anywhere else): an id
 * that cannot name a document, wherever it came from (a path, a header, a token's claim), is the
 * caller's 400 before any Firestore call, never a path error or a reserved-id failure after retries.
 */
export function documentAt(collection: CollectionReference, id: string): DocumentReference {
  const problem = documentIdProblem(id);
  // eslint-disable-next-line no-restricted-syntax -- the check above is why this is the one place
  if (problem === null) return collection.doc(id);
  throw invalidRequest(`${JSON.stringify(id.length > 80 ? `${id.slice(0, 80)}…` : id)} is not a usable id: ${problem}.`);
}

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

/**
 * Writes a document the transaction has read as missing. `set`, not `create`: should a concurrent
 * transaction create it first, the read's validation aborts this one and the SDK retries it,
 * whereas `create`'s precondition fails with ALREADY_EXISTS, which is never retried (a 500 under
 * concurrency, as six parallel first signs of one module and 50 parallel Stripe events showed).
 */
export function writeReadAsMissing(tx: Transaction, ref: DocumentReference, data: DocumentData): void {
  tx.set(ref, data);
}

/** Firestore's error code for a create() of a document that exists. */
const ALREADY_EXISTS = 6;
export const isAlreadyExists = (error: unknown) => (error as { code?: number }).code === ALREADY_EXISTS;

/** Firestore's error code for a write that can never succeed as it is (a document over 1 MiB, too many index entries, a bad field). */
const INVALID_ARGUMENT = 3;
export const isInvalidArgument = (error: unknown) => (error as { code?: number }).code === INVALID_ARGUMENT;

/** Firestore's error code for a write whose precondition (lastUpdateTime) no longer holds: changed meanwhile. */
const FAILED_PRECONDITION = 9;
export const isFailedPrecondition = (error: unknown) => (error as { code?: number }).code === FAILED_PRECONDITION;
