import semver from "semver";
import type { z } from "zod";
import { activationStore } from "../accounts/activation-store";
import type { CallerData, InstallAccess } from "../accounts/caller-data";
import { firstRefusal, policySubject, type Policy } from "../access/install-policy";
import { fallbackVersionsOf, type FallbackVersions } from "../access/fallback";
import { assertAllowedByPolicies, assertMayUseModule, assertWithinFallback } from "../access/policy";
import { assertVisible, isVisibleIn, moduleNotFound, reachedBusinesses, type Viewer } from "../access/visibility";
import { fallbackBound, isModuleUsable, type EntitlementGrant, type ModuleTerms } from "../access/rules";
import { isInvalidArgument, toIso } from "../core/documents";
import { ApiError } from "../core/errors";
import { catalogCache, moduleTopic } from "../core/catalog-changes";
import { utcDay } from "../core/time";
import type { Deps } from "../deps";
import { updateCheckSeen } from "../metrics/device-counts";
import { groupCommitCounter, type DownloadCounter } from "./download-counter";
import { downloadStore } from "./download-store";
import { moduleStore, type ModuleRecord, type VersionRecord } from "./module-store";
import type { downloadSchema, marketplaceModuleSchema, moduleListQuerySchema } from "./schemas";
import { effectiveSort, findModules, mergeFacets, mergeRanked, pageAfter, type RatingFigures } from "./ranking";
import type { PrivateCatalog } from "./private-catalog";
import type { SearchCatalog } from "./search-catalog";
import { chooseVersion, type VersionSummary } from "./versions";

type ListQuery = z.output<typeof moduleListQuerySchema>;
type MarketplaceModule = z.output<typeof marketplaceModuleSchema>;
type ModulePage = { items: MarketplaceModule[]; nextCursor: string | null };

/**
 * Where a module's icon is served (contract §16), for its latest version: the version is in the
 * address, so a cached icon is never another version's. Null when that version's package has none.
 */
export function iconUrlOf(publicBaseUrl: string, module: { id: string; latestVersion: string | null; versionSummary: VersionSummary[] }): string | null {
  const latest = module.versionSummary.find((entry) => entry.version === module.latestVersion);
  return latest?.hasIcon ? `${publicBaseUrl}/modules/${module.id}/icon?v=${latest.version}` : null;
}

/** A module's rating as answers show it: the average to one decimal, and the count; null before the first review. */
export const ratingView = (rating: RatingFigures | null) => (rating && rating.count > 0 ? { average: Math.round((rating.sum / rating.count) * 10) / 10, count: rating.count } : null);

/**
 * One page of the marketplace as anyone sees it (contract §18): the search catalog of this
 * instance, current with every change, ranked, filtered and paged after the cursor's position in
 * the same sort; with `facets`, counts over the whole result.
 */
/** A listed module the viewer may see (a private one only for its business's members, §26); else 404 as for an id never made. */
export async function listedModuleFor(db: Deps["db"], moduleId: string, viewer: Viewer): Promise<ModuleRecord> {
  const module = await moduleStore(db).getModule(moduleId);
  if (!module?.listed) throw moduleNotFound(moduleId);
  await assertVisible(module, viewer);
  return module;
}

export async function listModules({ cursors, config }: Deps, catalog: SearchCatalog, query: ListQuery, own: PrivateCatalog | null = null) {
  const sort = effectiveSort(query);
  const after = query.cursor ? cursors.decodeKey(`modules:${sort}`, query.cursor) : undefined;
  const { entries, index, prior } = await catalog.current();
  const found = findModules(index, entries, query, prior);
  // A business's members (§26): its private modules beside the public ones, in one order.
  const ownFound = own && findModules(own.index, own.entries, query, prior);
  const ranked = ownFound ? mergeRanked(found.ranked, ownFound.ranked) : found.ranked;
  const page = pageAfter(ranked, after, query.limit);
  const items: MarketplaceModule[] = page.items.map(({ entry }) => {
    const module = entries.get(entry.id) ?? own!.entries.get(entry.id)!;
    return {
      id: module.id,
      name: module.name,
      summary: module.summary,
      category: module.category,
      publisherId: module.publisherId,
      publisher: module.publisher,
      latestVersion: module.latestVersion,
      entitlement: module.entitlement,
      price: module.price,
      updatedAt: toIso(new Date(module.updatedAt)),
      tags: module.tags,
      rating: ratingView(module.rating),
      downloads: module.downloads,
      iconUrl: iconUrlOf(config.publicBaseUrl, { id: module.id, latestVersion: module.latestVersion, versionSummary: module.versions }),
      visibility: own?.entries.has(module.id) ? ("business" as const) : ("public" as const),
      businessId: own?.entries.has(module.id) ? (query.business ?? null) : null,
      ...(query.appVersion ? { compatibleVersion: chooseVersion(module.versions, query.appVersion) } : {}),
    };
  });
  const last = page.items.at(-1);
  return {
    items,
    nextCursor: page.more && last ? cursors.encodeKey(`modules:${sort}`, last.key) : null,
    total: ranked.length,
    ...(query.q ? { suggestion: ranked.length > 0 ? null : found.suggestion() } : {}),
    ...(query.facets ? { facets: ownFound ? mergeFacets(found.facets(), ownFound.facets()) : found.facets() } : {}),
  };
}

/** A page as the caller sees it: each item says whether they may use it and have activated it. */
export function withAccess(page: ModulePage, caller: CallerData): ModulePage {
  if (page.items.length === 0) return page;
  const accessOf = accessFor(caller);
  return { ...page, items: page.items.map((item) => ({ ...item, access: accessOf(item) })) };
}

/**
 * A business's page (§26): each item with whether the version it lists may be installed, which
 * every install policy of the caller's businesses decides (as a download would), not only this business's.
 */
export function withPolicy(page: ModulePage, policies: readonly Policy[]): ModulePage {
  return {
    ...page,
    items: page.items.map((item) => {
      const refusal = firstRefusal(policies, policySubject(item), item.compatibleVersion ?? item.latestVersion);
      return { ...item, policy: refusal ? { allowed: false, reason: refusal.decision.reason } : { allowed: true } };
    }),
  };
}

/** For one caller: whether they may use a module, and whether they have activated it. */
export function accessFor(caller: CallerData) {
  const activated = new Set(caller.activations.map((activation) => activation.moduleId));
  return (module: ModuleTerms) => ({ usable: isModuleUsable(module, caller.access.keys), activated: activated.has(module.id) });
}

/** Where a module and its versions are read from: the store itself, or an instance's memory of it. */
export interface ModuleLookup {
  module(moduleId: string): Promise<ModuleRecord | null>;
  version(moduleId: string, version: string): Promise<VersionRecord | null>;
}

export const storeLookup = (db: Deps["db"]): ModuleLookup => {
  const modules = moduleStore(db);
  return { module: (id) => modules.getModule(id), version: (id, version) => modules.getVersion(id, version) };
};

/**
 * Modules and versions kept in memory, current with the catalog's change feed (a publish, yank or
 * unyank anywhere shows within the feed's delay, at once here) and never older than `ttlMs`.
 */
export function rememberingLookup(db: Deps["db"], ttlMs: number): ModuleLookup {
  const modules = catalogCache<ModuleRecord | null>(db, { ttlMs, maxEntries: 5_000 });
  const versions = catalogCache<VersionRecord | null>(db, { ttlMs, maxEntries: 20_000 });
  return {
    module: (id) => modules.get(id, moduleTopic(id), () => storeLookup(db).module(id)),
    version: (id, version) => versions.get(`${id}@${version}`, moduleTopic(id), () => storeLookup(db).version(id, version)),
  };
}

/** What downloads read and count through, one set per route table: modules kept in memory, and the download counter. */
export function downloadReads(deps: Deps): { lookup: ModuleLookup; downloads: DownloadCounter } {
  const store = downloadStore(deps.db, deps.config.downloadShards);
  return {
    lookup: rememberingLookup(deps.db, deps.config.memoryCacheMs),
    downloads: groupCommitCounter(
      (counts, batchId) => store.add(counts, batchId, deps.clock()),
      (error, pending) => deps.logger.warn("download counts not written yet; retrying", { pending, error: (error as Error).message }),
      isInvalidArgument,
    ),
  };
}

/**
 * A signed download of a module version the caller may use; counts the download. With `sha256`
 * (a TUF target's path), a version whose package has another hash is not found.
 */
export async function downloadModule(
  { store, config, clock }: Deps,
  reads: { lookup: ModuleLookup; access: InstallAccess; downloads: DownloadCounter },
  moduleId: string,
  requested: { version?: string; appVersion?: string; sha256?: string },
): Promise<z.output<typeof downloadSchema>> {
  const { version, record } = await usableVersion(reads.lookup, reads.access, moduleId, requested.version, requested.appVersion);
  if (requested.sha256 !== undefined && record.sha256 !== requested.sha256) throw new ApiError("version_not_found", `${moduleId} ${version} is not the package with SHA-256 ${requested.sha256}.`);
  const { url, expiresAt } = await store.signedReadUrl(record.storagePath, {
    ttlSeconds: config.signedUrlTtlSeconds,
    fileName: `${moduleId}-${version}.mpkg`,
  });
  reads.downloads.count({ moduleId, version, day: utcDay(clock()) });
  return {
    moduleId,
    version,
    url,
    expiresAt: expiresAt.toISOString(),
    sha256: record.sha256,
    size: record.size,
    signature: record.signature,
    keyId: record.keyId,
    authorSignature: record.authorSignature,
    authorKeyId: record.authorKeyId,
    provenance: record.provenance,
  };
}

/**
 * The published version of a module, if the caller may use it: the one asked for (yanked or not,
 * so existing installs can be restored, even when every version is yanked and the module left the
 * listing), else the highest compatible with `appVersion`, else the latest; without a version
 * asked for, the highest of those that every install policy of the caller's businesses allows
 * (§26) and, for a caller who holds the module through a fallback alone, one of its fallback
 * versions (§27); a version asked for must be both.
 */
export async function usableVersion(
  lookup: ModuleLookup,
  access: Pick<InstallAccess, "keys" | "grants" | "policies" | "memberships">,
  moduleId: string,
  requestedVersion: string | undefined,
  appVersion: string | undefined,
): Promise<{ module: ModuleRecord; version: string; record: VersionRecord; fallback: FallbackVersions | null }> {
  const [module, requested] = await Promise.all([
    lookup.module(moduleId),
    requestedVersion ? lookup.version(moduleId, requestedVersion) : Promise.resolve(null),
  ]);
  if (module && !isVisibleIn(module, reachedBusinesses(access.memberships))) throw moduleNotFound(moduleId);
  if (module && revokedWhole(module)) throw moduleRevoked(moduleId, module.revocation?.reason);
  const available = requestedVersion ? module?.highestPublishedVersion : module?.listed && module.latestVersion;
  if (!module || !available) throw moduleNotFound(moduleId);
  const fallback = fallbackOfCaller(module, access.grants);
  let version = requestedVersion ?? module.latestVersion!;
  if (!requestedVersion && appVersion) {
    const compatible = chooseVersion(module.versionSummary, appVersion);
    if (!compatible) throw new ApiError("no_compatible_version", `Module '${moduleId}' has no version for app ${appVersion}.`);
    version = compatible;
  }
  if (!requestedVersion && (access.policies.length > 0 || fallback)) {
    const subject = policySubject(module);
    const allowed = (candidate: string) => (fallback === null || fallback.allows(candidate)) && firstRefusal(access.policies, subject, candidate) === null;
    version = chooseVersion(module.versionSummary, appVersion, allowed) ?? version;
  }
  const record = requestedVersion ? requested : await lookup.version(moduleId, version);
  if (record?.state !== "published") throw new ApiError("version_not_found", `Module '${moduleId}' has no published version '${version}'.`);
  if (record.revocation) throw moduleRevoked(`${moduleId}@${version}`, record.revocation.reason);
  assertAllowedByPolicies(access.policies, module, version);
  assertMayUseModule(module, access.keys);
  assertWithinFallback(moduleId, fallback, version);
  return { module, version, record, fallback };
}

/** The fallback versions a caller holding a module through its fallback alone may use (§27), or null: not bound. */
const fallbackOfCaller = (module: ModuleRecord, grants: readonly EntitlementGrant[]): FallbackVersions | null => {
  const bound = fallbackBound(module, grants);
  return bound === null ? null : fallbackVersionsOf(module.versionSummary, bound);
};

/** Revoked as a whole, or every published version revoked: nothing of it may be downloaded. */
const revokedWhole = (module: ModuleRecord) => module.revocation !== null || (module.versionSummary.length > 0 && module.versionSummary.every((entry) => entry.revoked));

const moduleRevoked = (what: string, reason: string | undefined) =>
  new ApiError("module_revoked", `${what} was revoked by the marketplace${reason ? `: ${reason}` : ""}. It must not be installed or used.`);

/**
 * For each installed module with a compatible version greater than the installed one, or whose
 * installed version is yanked, revoked or blocked by an install policy: what to move to (only
 * versions every policy of the caller's businesses allows are offered, §26; to a caller holding a
 * module through its fallback alone, only its fallback versions, §27). One batched read of the
 * module documents (their version summaries decide); unknown modules are left out.
 */
export async function checkModuleUpdates(
  { db, clock, logger }: Deps,
  access: InstallAccess,
  input: { appVersion: string; installed: { moduleId: string; version: string }[]; deviceId?: string; platform?: string },
  uid: string,
) {
  const ids = [...new Set(input.installed.map((item) => item.moduleId))];
  const modules = new Map((await moduleStore(db).getModules(ids)).map((module, index) => [ids[index], module]));
  const reached = reachedBusinesses(access.memberships);
  const items = input.installed.flatMap(({ moduleId, version: installedVersion }) => {
    const module = modules.get(moduleId);
    // Unknown modules, and private ones of businesses the caller's request does not reach (§26), are left out.
    if (!module || !isVisibleIn(module, reached)) return [];
    const subject = policySubject(module);
    // Held through a fallback alone, only fallback versions are offered (§27).
    const fallback = fallbackOfCaller(module, access.grants);
    const allowed = (version: string) => (fallback === null || fallback.allows(version)) && firstRefusal(access.policies, subject, version) === null;
    const compatible = module.revocation ? null : chooseVersion(module.versionSummary, input.appVersion, allowed);
    const installed = module.versionSummary.find((entry) => entry.version === installedVersion);
    const yanked = installed?.yanked ?? false;
    const revoked = module.revocation !== null || (installed?.revoked ?? false);
    // An installed version a business's policy does not allow (§26): reported, with the newest allowed one or null.
    const blocked = !allowed(installedVersion);
    const newer = compatible !== null && semver.gt(compatible, installedVersion);
    // Nothing newer and nothing to report of the installed version (a fallback with nothing newer
    // to offer included; its yanked, revoked or blocked version is still reported, §27 "Edges").
    if (!newer && !yanked && !revoked && !blocked) return [];
    return [{ moduleId, installedVersion, version: compatible, usable: isModuleUsable(module, access.keys), yanked, revoked, blocked }];
  });
  // A device named (§28): it counts among the active devices of a module only where it holds the
  // caller's activation of it, and the version it names was published; any other entry changes no figure.
  if (input.deviceId) {
    const { deviceId } = input;
    const published = input.installed.filter(({ moduleId, version }) => {
      const module = modules.get(moduleId);
      return module !== undefined && module !== null && isVisibleIn(module, reached) && module.versionSummary.some((entry) => entry.version === version);
    });
    const activations = await activationStore(db).getMany(uid, published.map(({ moduleId }) => moduleId));
    const held = published.filter((_, index) => activations[index]?.devices.some((device) => device.deviceId === deviceId));
    // Counting never fails the check (§28): a device whose activity could not be written now is
    // counted by its next check, which finds the same days uncounted.
    await updateCheckSeen(db, { uid, deviceId, platform: input.platform }, held, utcDay(clock())).catch((error: Error) =>
      logger.warn("update check not counted; the device's next check counts it", { error: error.message }),
    );
  }
  return { items };
}
