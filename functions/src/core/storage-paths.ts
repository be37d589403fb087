import { randomUUID } from "node:crypto";

/** Where the service keeps objects in its bucket: every prefix and path is named here. */
export const PACKAGES_PREFIX = "modules/";
export const INSTALLERS_PREFIX = "releases/";
/** Everything the service stores lives under these (the clean-up looks nowhere else). */
export const STORED_PREFIXES = [PACKAGES_PREFIX, INSTALLERS_PREFIX] as const;

/** A module package: one object per content, so a re-sign with other bytes never overwrites a published one. */
export const packagePath = (moduleId: string, version: string, sha256: string) => `${PACKAGES_PREFIX}${moduleId}/${version}/${sha256}.mpkg`;

/** An installer: a fresh folder per upload, so a replacement never overwrites what the release still points at. */
export const installerPath = (releaseId: string, fileName: string) => `${INSTALLERS_PREFIX}${releaseId}/${randomUUID()}/${fileName}`;
