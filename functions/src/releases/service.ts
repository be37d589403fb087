import type { Firestore, Query } from "firebase-admin/firestore";
import { COLLECTIONS, readDocument, releaseDocument, toIso, type Arch, type Channel, type Platform, type ReleaseDocument } from "../core/documents";
import { ApiError } from "../core/errors";
import type { ObjectStore, SignedUrl } from "../core/storage";
import { compareBySemverDescending, highestVersion } from "./rules";
import type { Release } from "./schemas";

export interface ReleaseFilter {
  platform?: Platform;
  channel?: Channel;
  arch?: Arch;
}

/** Published releases matching the filter, highest semver first. */
export async function listReleases(db: Firestore, filter: ReleaseFilter): Promise<Release[]> {
  const releases = await queryReleases(db, filter);
  return releases.sort(compareBySemverDescending).map(({ id, release }) => ({
    id,
    version: release.version,
    platform: release.platform,
    arch: release.arch,
    channel: release.channel,
    fileName: release.fileName,
    size: release.size,
    sha256: release.sha256,
    notes: release.notes ?? null,
    publishedAt: toIso(release.publishedAt),
  }));
}

/** A signed URL of the installer of the highest-semver release for a platform, arch and channel. */
export async function latestInstallerUrl(
  db: Firestore,
  store: ObjectStore,
  filter: Required<ReleaseFilter>,
  ttlSeconds: number,
): Promise<SignedUrl> {
  const latest = highestVersion(await queryReleases(db, filter));
  if (!latest) {
    throw new ApiError("release_not_found",
      `No ${filter.channel} release for ${filter.platform} ${filter.arch}.`,
    );
  }
  return store.signedReadUrl(latest.release.storagePath, { ttlSeconds, fileName: latest.release.fileName });
}

async function queryReleases(
  db: Firestore,
  filter: ReleaseFilter,
): Promise<{ id: string; version: string; release: ReleaseDocument }[]> {
  let query: Query = db.collection(COLLECTIONS.releases);
  for (const field of ["platform", "channel", "arch"] as const) {
    if (filter[field]) query = query.where(field, "==", filter[field]);
  }
  const snapshot = await query.get();
  return snapshot.docs.map((doc) => {
    const release = readDocument(releaseDocument, doc)!;
    return { id: doc.id, version: release.version, release };
  });
}
