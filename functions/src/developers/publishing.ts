import { Timestamp } from "firebase-admin/firestore";
import semver from "semver";
import type { z } from "zod";
import { assertInNamespace, assertOwnsModule } from "../access/policy";
import type { DeveloperAccount } from "../core/documents";
import {
  COLLECTIONS,
  moduleDocument,
  moduleRefs,
  moduleVersionDocument,
  readDocument,
  toIso,
  type ModuleDocument,
  type ModuleListing,
  type ModuleVersionDocument,
} from "../core/documents";
import { ApiError } from "../core/errors";
import type { Deps } from "../deps";
import { searchTerms } from "../modules/search";
import { inspectPackage, type Manifest } from "./package";
import type { moduleSchema, versionViewSchema } from "./schemas";

/**
 * The path of a module from package to marketplace: sign (validate, store, sign, record as
 * "signed"), then publish (make that version the module's latest, in a transaction).
 */

const packagePath = (moduleId: string, version: string, sha256: string) => `modules/${moduleId}/${version}/${sha256}.mpkg`;

const alreadyPublished = (moduleId: string, version: string) =>
  new ApiError("version_already_published", `${moduleId}@${version} is published; published versions are immutable.`);

export async function signPackage(deps: Deps, developer: DeveloperAccount, bytes: Buffer) {
  const { store, signingKeys, db, clock, logger } = deps;
  const { manifest, sha256, size } = await inspectPackage(bytes);
  const { id: moduleId, version } = manifest;
  assertInNamespace(moduleId, developer.publisherId);
  const ref = moduleRefs(deps.db, moduleId, version);
  await checkSignable(deps, developer, moduleId, version);

  const storagePath = packagePath(moduleId, version, sha256);
  await store.write(storagePath, bytes, { contentType: "application/zip", metadata: { moduleId, version, sha256 } });
  const signedAt = clock();
  const signature = await signingKeys.sign({
    moduleId,
    version,
    sha256,
    size,
    publisherId: developer.publisherId,
    iat: Math.floor(signedAt.getTime() / 1000),
  });
  const record: ModuleVersionDocument = {
    state: "signed",
    sha256,
    size,
    storagePath,
    signature,
    keyId: signingKeys.keyId,
    signedAt: Timestamp.fromDate(signedAt),
    ...(manifest.minAppVersion ? { minAppVersion: manifest.minAppVersion } : {}),
    listing: listingOf(manifest),
  };
  let replacedPath: string | undefined;
  try {
    replacedPath = await db.runTransaction(async (tx) => {
      const [moduleSnapshot, versionSnapshot] = await tx.getAll(ref.module, ref.version);
      const module = readDocument(moduleDocument, moduleSnapshot);
      const previous = readDocument(moduleVersionDocument, versionSnapshot);
      if (module) assertOwnsModule(moduleId, module, developer.id);
      if (previous?.state === "published") throw alreadyPublished(moduleId, version);
      const now = record.signedAt;
      if (!module) {
        tx.create(ref.module, newModule(moduleId, developer, record.listing, now));
      } else if (!module.listed) {
        tx.set(ref.module, { ...unlisted(module), ...record.listing, searchTerms: terms(moduleId, record.listing), updatedAt: now });
      }
      tx.set(ref.version, record);
      return previous?.storagePath;
    });
  } catch (error) {
    // The package is stored only if a version record points at it.
    const current = readDocument(moduleVersionDocument, await ref.version.get());
    if (current?.storagePath !== storagePath) await store.delete(storagePath);
    throw error;
  }
  if (replacedPath && replacedPath !== storagePath) {
    await store.delete(replacedPath).catch((error: Error) =>
      logger.warn("could not delete a replaced package", { storagePath: replacedPath, error: error.message }),
    );
  }
  return { moduleId, version, sha256, size, signature, keyId: record.keyId, signedAt: toIso(record.signedAt), state: "signed" as const };
}

/** Refuses early (before storing anything) what the transaction would refuse anyway. */
async function checkSignable(deps: Deps, developer: DeveloperAccount, moduleId: string, version: string): Promise<void> {
  const ref = moduleRefs(deps.db, moduleId, version);
  const [moduleSnapshot, versionSnapshot] = await deps.db.getAll(ref.module, ref.version);
  const module = readDocument(moduleDocument, moduleSnapshot);
  if (module) assertOwnsModule(moduleId, module, developer.id);
  if (readDocument(moduleVersionDocument, versionSnapshot)?.state === "published") throw alreadyPublished(moduleId, version);
}

/**
 * Publishes a signed version. In one transaction: the version must exist, belong to the caller,
 * not be published yet, and be semver-greater than the latest published one; of concurrent
 * publishes of one version, exactly one commits and the others see it published.
 */
export async function publishVersion(deps: Deps, developer: DeveloperAccount, moduleId: string, version: string) {
  const ref = moduleRefs(deps.db, moduleId, version);
  const now = Timestamp.fromDate(deps.clock());
  return deps.db.runTransaction(async (tx) => {
    const [moduleSnapshot, versionSnapshot] = await tx.getAll(ref.module, ref.version);
    const module = readDocument(moduleDocument, moduleSnapshot);
    if (module) assertOwnsModule(moduleId, module, developer.id);
    const signed = readDocument(moduleVersionDocument, versionSnapshot);
    if (!module || !signed) throw new ApiError("version_not_found", `${moduleId}@${version} was never signed.`);
    if (signed.state === "published") throw alreadyPublished(moduleId, version);
    if (module.latestVersion && !semver.gt(version, module.latestVersion)) {
      throw new ApiError("version_not_newer", `${version} is not greater than the latest published version ${module.latestVersion}.`);
    }
    const published: ModuleVersionDocument = { ...signed, state: "published", publishedAt: now };
    const listed: ModuleDocument = {
      ...unlisted(module),
      ...signed.listing,
      latestVersion: version,
      listed: true,
      updatedAt: now,
      searchTerms: terms(moduleId, signed.listing),
    };
    tx.set(ref.version, published);
    tx.set(ref.module, listed);
    return { module: toModuleView(moduleId, listed), version: toVersionView(version, published) };
  });
}

/** The caller's modules with every version, newest first. */
export async function listDeveloperModules({ db }: Deps, developer: DeveloperAccount) {
  const modules = await db.collection(COLLECTIONS.modules).where("developerId", "==", developer.id).get();
  const items = await Promise.all(
    modules.docs.map(async (snapshot) => {
      const module = readDocument(moduleDocument, snapshot)!;
      const versions = await snapshot.ref.collection(COLLECTIONS.versions).get();
      return {
        id: snapshot.id,
        name: module.name,
        latestVersion: module.latestVersion,
        downloads: module.downloads,
        versions: versions.docs
          .map((version) => toVersionView(version.id, readDocument(moduleVersionDocument, version)!))
          .sort((a, b) => semver.rcompare(a.version, b.version))
          .map(({ minAppVersion: _minAppVersion, ...view }) => view),
      };
    }),
  );
  return { items: items.sort((a, b) => a.id.localeCompare(b.id)) };
}

export function toModuleView(id: string, module: ModuleDocument): z.output<typeof moduleSchema> {
  return {
    id,
    name: module.name,
    summary: module.summary,
    description: module.description ?? null,
    category: module.category ?? null,
    publisherId: module.publisherId,
    entitlement: module.entitlement ?? null,
    latestVersion: module.latestVersion,
    downloads: module.downloads,
    createdAt: toIso(module.createdAt),
    updatedAt: toIso(module.updatedAt),
  };
}

export function toVersionView(version: string, record: ModuleVersionDocument): z.output<typeof versionViewSchema> {
  return {
    version,
    state: record.state,
    sha256: record.sha256,
    size: record.size,
    signedAt: toIso(record.signedAt),
    publishedAt: record.publishedAt ? toIso(record.publishedAt) : null,
    minAppVersion: record.minAppVersion ?? null,
  };
}

function listingOf(manifest: Manifest): ModuleListing {
  const { name, summary, description, category, entitlement } = manifest;
  return {
    name,
    summary,
    ...(description !== undefined ? { description } : {}),
    ...(category !== undefined ? { category } : {}),
    ...(entitlement !== undefined ? { entitlement } : {}),
  };
}

/** A module without its listing fields, so that fields a new manifest drops are dropped. */
function unlisted(module: ModuleDocument): Omit<ModuleDocument, keyof ModuleListing> {
  const { name: _name, summary: _summary, description: _description, category: _category, entitlement: _entitlement, ...rest } = module;
  return rest;
}

const terms = (moduleId: string, listing: ModuleListing) => searchTerms(moduleId, listing.name, listing.summary);

function newModule(moduleId: string, developer: DeveloperAccount, listing: ModuleListing, now: Timestamp): ModuleDocument {
  return {
    ...listing,
    publisherId: developer.publisherId,
    developerId: developer.id,
    latestVersion: null,
    createdAt: now,
    updatedAt: now,
    downloads: 0,
    listed: false,
    searchTerms: terms(moduleId, listing),
  };
}
