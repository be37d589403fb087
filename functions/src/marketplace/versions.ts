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
  /** Revoked by an operator (contract §14): like yanked, and never downloaded either. */
  revoked: boolean;
  /** Null on summaries written before module pages (contract §16); `rebuildVersionSummaries` fills it in. */
  publishedAt: Date | null;
  /** Its package carries an icon (contract §16). */
  hasIcon: boolean;
}

/** At most this many published versions are summarised on a module (the highest ones). */
export const MAX_SUMMARISED_VERSIONS = 500;

/** Whether a version runs on app version `appVersion`: within its bounds, both inclusive. */
export function isCompatible(entry: Pick<VersionSummary, "minAppVersion" | "maxAppVersion">, appVersion: string): boolean {
  if (entry.minAppVersion && semver.lt(appVersion, entry.minAppVersion)) return false;
  if (entry.maxAppVersion && semver.gt(appVersion, entry.maxAppVersion)) return false;
  return true;
}

/**
 * The highest version neither yanked nor revoked (and, given an app version, compatible with it;
 * given `allowed`, one it allows: install policies, §26), or null.
 */
export function chooseVersion(summary: VersionSummary[], appVersion?: string, allowed: (version: string) => boolean = () => true): string | null {
  const candidates = summary.filter((entry) => !entry.yanked && !entry.revoked && (appVersion === undefined || isCompatible(entry, appVersion)) && allowed(entry.version));
  return candidates.reduce<string | null>((best, entry) => (!best || semver.gt(entry.version, best) ? entry.version : best), null);
}

/** The summary with one entry added or replaced, highest versions first, bounded. */
export function withEntry(summary: VersionSummary[], entry: VersionSummary): VersionSummary[] {
  return [...summary.filter((known) => known.version !== entry.version), entry]
    .sort((a, b) => semver.rcompare(a.version, b.version))
    .slice(0, MAX_SUMMARISED_VERSIONS);
}

/** A published version as its module's summary holds it. */
export const summaryOf = (record: {
  version: string;
  minAppVersion: string | null;
  maxAppVersion: string | null;
  yankedAt: Date | null;
  revocation: object | null;
  publishedAt: Date | null;
  hasIcon: boolean;
}): VersionSummary => ({
  version: record.version,
  minAppVersion: record.minAppVersion,
  maxAppVersion: record.maxAppVersion,
  yanked: record.yankedAt !== null,
  revoked: record.revocation !== null,
  publishedAt: record.publishedAt,
  hasIcon: record.hasIcon,
});

/**
 * The latest version (highest neither yanked nor revoked) of a summary, and whether the module is
 * listed at all: a module revoked as a whole has no latest version.
 */
export const latestOf = (summary: VersionSummary[], moduleRevocation: object | null) => {
  const latestVersion = moduleRevocation ? null : chooseVersion(summary);
  return { versionSummary: summary, latestVersion, listed: latestVersion !== null };
};
