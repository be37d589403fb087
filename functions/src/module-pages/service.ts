import type { z } from "zod";
import { publicPrice } from "../marketplace/price";
import { moduleTrader } from "../traders/service";
import type { CallerData } from "../accounts/caller-data";
import { catalogCache, moduleTopic } from "../core/catalog-changes";
import { toIso } from "../core/documents";
import { ApiError } from "../core/errors";
import { firstRefusal, type Policy } from "../access/install-policy";
import { assertVisible, moduleNotFound, reachedBusinesses, type Viewer } from "../access/visibility";
import type { Deps } from "../deps";
import { developerStore } from "../developers/developer-store";
import { downloadStore } from "../marketplace/download-store";
import { moduleStore } from "../marketplace/module-store";
import { ratingStore } from "../marketplace/rating-store";
import { publisherOf } from "../marketplace/search-catalog";
import { accessFor, iconUrlOf, ratingView } from "../marketplace/service";
import { contentStore } from "./content-store";
import { withImageAddresses } from "./markdown";
import type { PackageImage } from "./package-content";
import type { modulePageSchema } from "./schemas";

type ModulePage = z.output<typeof modulePageSchema>;

interface KnownModule {
  page: ModulePage;
  /** The business it is private to (§26), or null. */
  businessId: string | null;
  /** The listed versions whose package carries an icon. */
  withIcon: ReadonlySet<string>;
}

/**
 * A page holds up to two rendered documents of up to 960 KiB each, so an instance keeps fewer of
 * them than of anything else: at most this many, current with the catalog's change feed.
 */
const MAX_REMEMBERED_PAGES = 64;

/** Modules' pages (contract §16), as anyone sees them, kept in memory like the listing. */
export function modulePages(deps: Deps) {
  const { db, config } = deps;
  const remembered = catalogCache<KnownModule | null>(db, { ttlMs: config.memoryCacheMs, maxEntries: MAX_REMEMBERED_PAGES });
  const known = async (moduleId: string, viewer: Viewer): Promise<KnownModule> => {
    const found = await remembered.get(moduleId, moduleTopic(moduleId), () => readModulePage(deps, moduleId));
    if (!found) throw moduleNotFound(moduleId);
    await assertVisible({ id: moduleId, businessId: found.businessId }, viewer);
    return found;
  };
  return {
    /** A listed module's page; with the caller's data, whether they may use it. A private module's (§26) only for its business's members. */
    async page(moduleId: string, caller: CallerData | null, policies: readonly Policy[] = []): Promise<ModulePage> {
      const { page } = await known(moduleId, caller && (async () => reachedBusinesses(caller.access.memberships)));
      if (!caller) return page;
      // With a token: whether the caller's businesses' install policies allow its latest version (§26).
      const refusal = firstRefusal(policies, { id: page.id, publisherId: page.publisherId, businessId: page.businessId }, page.latestVersion);
      const name = refusal && caller.access.memberships.find((membership) => membership.businessId === refusal.policy.businessId)?.name;
      return {
        ...page,
        access: accessFor(caller)(page),
        policy: refusal ? { allowed: false, businessId: refusal.policy.businessId, businessName: name ?? refusal.policy.businessId, reason: refusal.decision.reason! } : { allowed: true },
      };
    },


    /**
     * The n-th image the README of a listed module's latest version (or of one of its listed
     * versions) shows; `private`: the module is a business's (§26), so no cache may share it.
     */
    async image(moduleId: string, index: number, version: string | undefined, viewer: Viewer): Promise<PackageImage & { private: boolean }> {
      const { page, businessId } = await known(moduleId, viewer);
      const chosen = listedVersion(page, version);
      const image = await contentStore(db).image(moduleId, chosen, index);
      if (!image) throw new ApiError("module_not_found", `The README of ${moduleId}@${chosen} shows no image ${index}.`);
      return { ...image, private: businessId !== null };
    },

    /** The PNG icon of a listed module's latest version, or of one of its listed versions. */
    async icon(moduleId: string, version: string | undefined, viewer: Viewer): Promise<{ png: Buffer; private: boolean }> {
      const { page, withIcon, businessId } = await known(moduleId, viewer);
      const chosen = listedVersion(page, version);
      const icon = withIcon.has(chosen) ? await contentStore(db).icon(moduleId, chosen) : null;
      if (!icon) throw new ApiError("module_not_found", `${moduleId}@${chosen} has no icon.`);
      return { png: icon, private: businessId !== null };
    },
  };
}

/** The version asked for (by default the latest) when the page lists it; else 404 `version_not_found`. */
function listedVersion(page: ModulePage, version: string | undefined): string {
  const chosen = version ?? page.latestVersion;
  if (!page.versions.some((entry) => entry.version === chosen)) throw new ApiError("version_not_found", `Module '${page.id}' has no published version '${chosen}'.`);
  return chosen;
}

async function readModulePage({ db, config }: Deps, moduleId: string): Promise<KnownModule | null> {
  const module = await moduleStore(db).getModule(moduleId);
  if (!module?.listed || !module.latestVersion) return null;
  const [documents, downloads, rating, publishers, trader] = await Promise.all([
    contentStore(db).documents(moduleId, module.latestVersion),
    downloadStore(db, config.downloadShards).total(moduleId),
    ratingStore(db).summary(moduleId),
    developerStore(db).profiles([module.publisherId]),
    module.price ? moduleTrader({ db }, module.publisherId) : null,
  ]);
  const listedVersions = module.versionSummary.filter((entry) => !entry.revoked);
  const imageAddress = (index: number) => `${config.publicBaseUrl}/modules/${module.id}/images/${index}?v=${module.latestVersion}`;
  return {
    businessId: module.businessId,
    page: {
      id: module.id,
      name: module.name,
      summary: module.summary,
      description: module.description ?? null,
      category: module.category ?? null,
      tags: module.tags ?? [],
      publisherId: module.publisherId,
      publisher: publisherOf(publishers, module.publisherId),
      entitlement: module.entitlement ?? null,
      price: publicPrice(module.price),
      ...(trader ? { trader } : {}),
      installUrl: `${config.appUrlScheme}://install/${module.id}`,
      visibility: module.businessId ? ("business" as const) : ("public" as const),
      businessId: module.businessId,
      latestVersion: module.latestVersion,
      updatedAt: toIso(module.updatedAt),
      downloads,
      rating: ratingView(rating),
      iconUrl: iconUrlOf(config.publicBaseUrl, module),
      resources: {
        homepage: module.links?.homepage ?? null,
        repository: module.links?.repository ?? null,
        issues: module.links?.issues ?? null,
        license: module.links?.license ?? null,
      },
      readmeHtml: documents.readmeHtml && withImageAddresses(documents.readmeHtml, imageAddress),
      changelogHtml: documents.changelogHtml,
      versions: listedVersions.map((entry) => ({
        version: entry.version,
        publishedAt: entry.publishedAt ? toIso(entry.publishedAt) : null,
        minAppVersion: entry.minAppVersion,
        maxAppVersion: entry.maxAppVersion,
        yanked: entry.yanked,
      })),
    },
    withIcon: new Set(listedVersions.filter((entry) => entry.hasIcon).map((entry) => entry.version)),
  };
}
