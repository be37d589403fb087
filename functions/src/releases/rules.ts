import semver from "semver";

/** Highest semver first (1.10.0 above 1.9.0, 2.0.0 above 2.0.0-beta.1); ties keep a stable order. */
export function compareBySemverDescending(a: { version: string }, b: { version: string }): number {
  return semver.rcompare(a.version, b.version);
}

export function highestVersion<T extends { version: string }>(items: T[]): T | null {
  return items.reduce<T | null>((best, item) => (!best || semver.gt(item.version, best.version) ? item : best), null);
}
