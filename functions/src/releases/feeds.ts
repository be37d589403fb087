import semver from "semver";
import { stringify } from "yaml";
import type { ReleaseRecord } from "./release-store";

/**
 * What update clients read (API §8): electron-updater's generic-provider channel files, and the
 * JSON update check of Squirrel.Mac and Hazel-style clients. Pure functions of the offered release.
 */

/** electron-updater's channel files: the name fixes the channel, its suffix the platform. */
export const FEED_FILES = ["latest.yml", "latest-mac.yml", "latest-linux.yml", "beta.yml", "beta-mac.yml", "beta-linux.yml"] as const;
export type FeedFile = (typeof FEED_FILES)[number];
const SUFFIX = { win32: "", darwin: "-mac", linux: "-linux" } as const;

/** The channel a feed file names, or null when its suffix is not the platform's. */
export function feedChannel(file: FeedFile, platform: keyof typeof SUFFIX): "stable" | "beta" | null {
  const [, channel, suffix] = /^(latest|beta)(-mac|-linux)?\.yml$/.exec(file)!;
  if ((suffix ?? "") !== SUFFIX[platform]) return null;
  return channel === "latest" ? "stable" : "beta";
}

/**
 * The channel file of a release (`version`, `files`, `path`, `sha512`, `releaseDate`,
 * `releaseNotes`), with `stagingPercentage` when the release is staged and the caller sent no
 * staging id, so electron-updater applies it itself.
 */
export function electronFeed(release: ReleaseRecord & { sha512: string }, downloadUrl: string, staged: boolean): string {
  return stringify({
    version: release.version,
    files: [{ url: downloadUrl, sha512: release.sha512, size: release.size }],
    path: downloadUrl,
    sha512: release.sha512,
    releaseDate: release.publishedAt.toISOString(),
    ...(release.notes ? { releaseNotes: release.notes } : {}),
    ...(staged && release.rolloutPercentage < 100 ? { stagingPercentage: release.rolloutPercentage } : {}),
  });
}

/** The JSON update check: null (204) unless the offered release is newer than what the caller runs. */
export function jsonUpdate(release: ReleaseRecord, currentVersion: string, downloadUrl: string) {
  if (!semver.gt(release.version, currentVersion)) return null;
  return {
    version: release.version,
    name: release.version,
    notes: release.notes ?? "",
    pub_date: release.publishedAt.toISOString(),
    url: downloadUrl,
    sha256: release.sha256,
    sha512: release.sha512,
    size: release.size,
  };
}
