import semver from "semver";

/**
 * The published versions of a module as its document summarises them (module-store.ts), and the
 * rules that choose among them (API §9): pure functions, so listing, downloads and the batch
 * update check decide alike without reading the versions themselves.
 */
export interface VersionSummary {
  version: string;
  minAppVersion: string | null;
  maxAppVersion: string | null;
  yanked: boolean;
}

/** At most this many published versions are summarised on a module (the highest ones). */
export const MAX_SUMMARISED_VERSIONS = 500;

/** Whether a version runs on app version `appVersion`: within its bounds, both inclusive. */
export function isCompatible(entry: Pick<VersionSummary, "minAppVersion" | "maxAppVersion">, appVersion: string): boolean {
  if (entry.minAppVersion && semver.lt(appVersion, entry.minAppVersion)) return false;
  if (entry.maxAppVersion && semver.gt(appVersion, entry.maxAppVersion)) return false;
  return true;
}

/** The highest version not yanked (and, given an app version, compatible with it), or null. */
export function chooseVersion(summary: VersionSummary[], appVersion?: string): string | null {
  const candidates = summary.filter((entry) => !entry.yanked && (appVersion === undefined || isCompatible(entry, appVersion)));
  return candidates.reduce<string | null>((best, entry) => (!best || semver.gt(entry.version, best) ? entry.version : best), null);
}

/** The summary with one entry added or replaced, highest versions first, bounded. */
export function withEntry(summary: VersionSummary[], entry: VersionSummary): VersionSummary[] {
  return [...summary.filter((known) => known.version !== entry.version), entry]
    .sort((a, b) => semver.rcompare(a.version, b.version))
    .slice(0, MAX_SUMMARISED_VERSIONS);
}
