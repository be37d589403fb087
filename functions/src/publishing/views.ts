import semver from "semver";
import { moduleNotFound } from "../access/visibility";
import { publicPrice } from "../marketplace/price";
import type { z } from "zod";
import { assertInCredentialScope, assertOwnsModule } from "../access/policy";
import { toIso } from "../core/documents";
import type { Deps } from "../deps";
import { downloadStore } from "../marketplace/download-store";
import { moduleStore, type ModuleRecord, type Revocation, type Review, type VersionRecord } from "../marketplace/module-store";
import { actingOwner, modulesActedOn, type Publisher } from "./publisher";
import type { moduleSchema, versionViewSchema } from "./schemas";
import { dailyStats, statsRange } from "./stats";

/** What a publisher sees of their modules: the list with every version, statistics, and the views sign and publish answer with. */

/** A module's downloads per day and version, for its owner: every day of the range, zeros included. */
export async function moduleDownloadStats({ db, config, clock }: Deps, publisher: Publisher, moduleId: string, query: { from?: string; to?: string }) {
  assertInCredentialScope(moduleId, publisher.credential);
  const range = statsRange(query, clock());
  const [module, owner] = await Promise.all([moduleStore(db).getModule(moduleId), actingOwner(db, publisher, moduleId)]);
  if (!module) throw moduleNotFound(moduleId);
  assertOwnsModule(moduleId, module, owner.id);
  return dailyStats(moduleId, range, await downloadStore(db, config.downloadShards).daily(moduleId, range.from, range.to));
}

/** The caller's modules (and those of the businesses they publish for, §26) with every version, highest first. */
export async function listDeveloperModules({ db, config }: Deps, publisher: Publisher) {
  const modules = moduleStore(db);
  const downloads = downloadStore(db, config.downloadShards);
  // A publish token sees the modules it may act on, no others.
  const owned = await modulesActedOn(db, publisher);
  const items = await Promise.all(
    owned.map(async (module) => ({
      id: module.id,
      name: module.name,
      latestVersion: module.latestVersion,
      policy: module.policy,
      price: publicPrice(module.price),
      downloads: await downloads.total(module.id),
      versions: (await modules.versions(module.id))
        .sort((a, b) => semver.rcompare(a.version, b.version))
        .map((record) => {
          const { minAppVersion: _minAppVersion, ...view } = toVersionView(record);
          return {
            ...view,
            yankedAt: record.yankedAt ? toIso(record.yankedAt) : null,
            yankReason: record.yankReason,
            review: reviewView(record.review),
            revocation: revocationOf(record.revocation ?? module.revocation),
            provenance: record.provenance,
            authorKeyId: record.authorKeyId,
          };
        }),
    })),
  );
  return { items: items.sort((a, b) => a.id.localeCompare(b.id)) };
}

export function toModuleView(module: ModuleRecord, downloads: number): z.output<typeof moduleSchema> {
  return {
    id: module.id,
    name: module.name,
    summary: module.summary,
    description: module.description ?? null,
    category: module.category ?? null,
    publisherId: module.publisherId,
    entitlement: module.entitlement ?? null,
    price: publicPrice(module.price),
    latestVersion: module.latestVersion,
    downloads,
    createdAt: toIso(module.createdAt),
    updatedAt: toIso(module.updatedAt),
  };
}

export function toVersionView(record: VersionRecord): z.output<typeof versionViewSchema> {
  return {
    version: record.version,
    state: record.state,
    sha256: record.sha256,
    size: record.size,
    signedAt: toIso(record.signedAt),
    publishedAt: record.publishedAt ? toIso(record.publishedAt) : null,
    minAppVersion: record.minAppVersion,
  };
}

/** A version's review as its publisher sees it: the state, what was found, and the operator's reason. */
export const reviewView = (review: Review) => ({
  state: review.state,
  findings: review.findings,
  ...(review.reason ? { reason: review.reason } : {}),
  ...(review.note ? { note: review.note } : {}),
});

/** A version's own revocation, else its module's (every version revoked), as the publisher sees it. */
const revocationOf = (revocation: Revocation | null) => (revocation ? { reason: revocation.reason, revokedAt: toIso(revocation.revokedAt) } : null);
