import { FieldPath, FieldValue, Timestamp, type Firestore, type Query } from "firebase-admin/firestore";
import type { z } from "zod";
import { assertMayUseModule } from "../access/policy";
import { isModuleUsable } from "../access/rules";
import { loadUserAccess } from "../access/service";
import type { Caller } from "../core/auth";
import {
  activationDocument,
  COLLECTIONS,
  moduleDocument,
  moduleRefs,
  moduleVersionDocument,
  readDocument,
  toIso,
  type ModuleDocument,
  type ModuleVersionDocument,
} from "../core/documents";
import { ApiError, invalidRequest } from "../core/errors";
import type { Deps } from "../deps";
import type { activationSchema, downloadSchema, marketplaceModuleSchema, moduleListQuerySchema } from "./schemas";
import { queryTerm } from "./search";

type ListQuery = z.output<typeof moduleListQuerySchema>;
type MarketplaceModule = z.output<typeof marketplaceModuleSchema>;

/**
 * One page of listed modules, newest `updatedAt` first. Filters are Firestore queries (composite
 * indexes in firestore.indexes.json), so a page reads `limit + 1` documents, never the collection.
 */
export async function listModules({ db, clock, cursors }: Deps, query: ListQuery, caller: Caller | null) {
  let firestoreQuery: Query = db.collection(COLLECTIONS.modules).where("listed", "==", true);
  if (query.category) firestoreQuery = firestoreQuery.where("category", "==", query.category);
  if (query.q !== undefined) {
    const term = queryTerm(query.q);
    if (!term) throw invalidRequest("q must be a single word.", [{ path: "q", message: "Expected one word of letters or digits." }]);
    firestoreQuery = firestoreQuery.where("searchTerms", "array-contains", term);
  }
  firestoreQuery = firestoreQuery.orderBy("updatedAt", "desc").orderBy(FieldPath.documentId(), "desc");
  if (query.cursor) {
    const { at, id } = cursors.decode(query.cursor);
    firestoreQuery = firestoreQuery.startAfter(at, id);
  }
  const snapshot = await firestoreQuery.limit(query.limit + 1).get();
  const page = snapshot.docs.slice(0, query.limit).map((doc) => ({ id: doc.id, module: readDocument(moduleDocument, doc)! }));
  const last = page.at(-1);
  const nextCursor = snapshot.docs.length > query.limit && last ? cursors.encode({ at: last.module.updatedAt, id: last.id }) : null;

  const items: MarketplaceModule[] = page.map(({ id, module }) => ({
    id,
    name: module.name,
    summary: module.summary,
    category: module.category ?? null,
    publisherId: module.publisherId,
    latestVersion: module.latestVersion!,
    entitlement: module.entitlement ?? null,
    updatedAt: toIso(module.updatedAt),
  }));
  if (caller && items.length > 0) {
    const [access, activations] = await Promise.all([
      loadUserAccess(db, caller.uid, clock()),
      db.getAll(...items.map((item) => activationRef(db, caller.uid, item.id))),
    ]);
    items.forEach((item, index) => {
      item.access = { usable: isModuleUsable(page[index].module, access.keys), activated: activations[index].exists };
    });
  }
  return { items, nextCursor };
}

/** Records (or refreshes) the caller's activation of a module version they may use. */
export async function confirmActivation(
  { db, clock }: Deps,
  caller: Caller,
  input: { moduleId: string; version?: string; deviceId?: string },
): Promise<z.output<typeof activationSchema>> {
  const now = clock();
  const { version } = await usableVersion(db, caller, input.moduleId, input.version, now);
  const ref = activationRef(db, caller.uid, input.moduleId);
  const at = Timestamp.fromDate(now);
  const activation = await db.runTransaction(async (tx) => {
    const existing = readDocument(activationDocument, await tx.get(ref));
    const deviceId = input.deviceId ?? existing?.deviceId;
    const record = {
      moduleId: input.moduleId,
      version,
      ...(deviceId ? { deviceId } : {}),
      activatedAt: existing?.activatedAt ?? at,
      updatedAt: at,
    };
    tx.set(ref, record);
    return record;
  });
  return { moduleId: input.moduleId, version, activatedAt: toIso(activation.activatedAt), updatedAt: toIso(activation.updatedAt) };
}

/** A signed download of a module version the caller may use; counts the download. */
export async function downloadModule(
  { db, store, config, clock }: Deps,
  caller: Caller,
  moduleId: string,
  requestedVersion: string | undefined,
): Promise<z.output<typeof downloadSchema>> {
  const { version, record } = await usableVersion(db, caller, moduleId, requestedVersion, clock());
  const { url, expiresAt } = await store.signedReadUrl(record.storagePath, {
    ttlSeconds: config.signedUrlTtlSeconds,
    fileName: `${moduleId}-${version}.mpkg`,
  });
  await db.collection(COLLECTIONS.modules).doc(moduleId).update({ downloads: FieldValue.increment(1) });
  return {
    moduleId,
    version,
    url,
    expiresAt: expiresAt.toISOString(),
    sha256: record.sha256,
    size: record.size,
    signature: record.signature,
    keyId: record.keyId,
  };
}

/** The published version (default: the latest) of a listed module, if the caller may use it. */
async function usableVersion(
  db: Firestore,
  caller: Caller,
  moduleId: string,
  requestedVersion: string | undefined,
  now: Date,
): Promise<{ module: ModuleDocument; version: string; record: ModuleVersionDocument }> {
  const [module, access] = await Promise.all([
    db.collection(COLLECTIONS.modules).doc(moduleId).get().then((snapshot) => readDocument(moduleDocument, snapshot)),
    loadUserAccess(db, caller.uid, now),
  ]);
  if (!module?.listed || !module.latestVersion) throw new ApiError("module_not_found", `No module '${moduleId}'.`);
  const version = requestedVersion ?? module.latestVersion;
  const record = readDocument(moduleVersionDocument, await moduleRefs(db, moduleId, version).version.get());
  if (record?.state !== "published") throw new ApiError("version_not_found", `Module '${moduleId}' has no published version '${version}'.`);
  assertMayUseModule(moduleId, module, access.keys);
  return { module, version, record };
}

const activationRef = (db: Firestore, uid: string, moduleId: string) =>
  db.collection(COLLECTIONS.users).doc(uid).collection(COLLECTIONS.activations).doc(moduleId);
