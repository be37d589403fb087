import { createHash } from "node:crypto";
import { gunzipSync } from "node:zlib";
import semver from "semver";

/** Where and how installers are released. */
export const PLATFORMS = ["win32", "darwin", "linux"] as const;
export const ARCHES = ["x64", "arm64"] as const;
export const CHANNELS = ["stable", "beta"] as const;

/** Highest semver first (1.10.0 above 1.9.0, 2.0.0 above 2.0.0-beta.1); ties keep a stable order. */
export function compareBySemverDescending(a: { version: string }, b: { version: string }): number {
  return semver.rcompare(a.version, b.version);
}

export function highestVersion<T extends { version: string }>(items: T[]): T | null {
  return items.reduce<T | null>((best, item) => (!best || semver.gt(item.version, best.version) ? item : best), null);
}

/**
 * A caller's cohort for a release, in [0, 100): the first four bytes of
 * sha256(stagingId + ":" + releaseId), big-endian, over 2^32, times 100. The release includes the
 * caller when that is below its rolloutPercentage, so an operator can predict who gets what, and
 * raising the percentage only ever adds callers.
 */
export function cohortOf(stagingId: string, releaseId: string): number {
  return (createHash("sha256").update(`${stagingId}:${releaseId}`).digest().readUInt32BE(0) / 2 ** 32) * 100;
}

export interface Rollable {
  id: string;
  version: string;
  rolloutPercentage: number;
  yankedAt: Date | null;
}

/**
 * The release offered to a caller among the releases of one platform, arch and channel: the
 * highest-semver one that is not yanked and includes them; without a staging id, the highest one
 * not yanked whose rollout is above 0 (its percentage goes with it, for the client to apply).
 */
export function offeredRelease<T extends Rollable>(releases: T[], stagingId: string | undefined): T | null {
  const candidates = releases.filter(
    (release) =>
      !release.yankedAt &&
      (stagingId === undefined ? release.rolloutPercentage > 0 : cohortOf(stagingId, release.id) < release.rolloutPercentage),
  );
  return highestVersion(candidates);
}

/** The events a desktop app reports about an update (contract §19). */
export const HEALTH_EVENTS = ["downloaded", "installed", "failed", "launched", "crashed"] as const;
export type HealthEvent = (typeof HEALTH_EVENTS)[number];

export interface EventCounts {
  downloaded: number;
  installed: number;
  failed: number;
  launched: number;
  crashed: number;
}

/** A rate with the reports behind it: null until there is at least one. */
export interface Rate {
  rate: number | null;
  reports: number;
}

/** failureRate = failed / (installed + failed); crashRate = crashed / launched. */
export function healthRates(counts: EventCounts): { failureRate: Rate; crashRate: Rate } {
  const rate = (part: number, whole: number): Rate => ({ rate: whole > 0 ? part / whole : null, reports: whole });
  return { failureRate: rate(counts.failed, counts.installed + counts.failed), crashRate: rate(counts.crashed, counts.launched) };
}

/** An automatic ramp of a release's rollout (contract §19). */
export interface RampSchedule {
  /** Rollout percentages, rising, ending at most at 100. */
  steps: number[];
  /** How long each step lasts at least, in hours. */
  everyHours: number;
  maxFailureRate: number;
  maxCrashRate: number;
  /** Reports a rate needs before it may halt the ramp or let it advance. */
  minReports: number;
  /** The current step's index in `steps`. */
  step: number;
  stepStartedAt: Date;
  state: "running" | "halted" | "done";
}

export type RampDecision = { kind: "wait"; reason: string } | { kind: "advance"; to: number; done: boolean } | { kind: "halt"; reason: string };

const percent = (rate: number) => `${(rate * 100).toFixed(1)}%`;

/**
 * What a tick does with a running ramp: halt as soon as a rate exceeds its bound with enough
 * reports; advance once the step has lasted its hours and both rates are within bounds with
 * enough reports each; else wait.
 */
export function rampDecision(ramp: RampSchedule, health: { failureRate: Rate; crashRate: Rate }, now: Date): RampDecision {
  const bounds = [
    ["failure rate", health.failureRate, ramp.maxFailureRate],
    ["crash rate", health.crashRate, ramp.maxCrashRate],
  ] as const;
  for (const [name, { rate, reports }, max] of bounds) {
    if (rate !== null && reports >= ramp.minReports && rate > max) {
      return { kind: "halt", reason: `${name} ${percent(rate)} over ${reports} reports exceeds ${percent(max)}` };
    }
  }
  const next = ramp.step + 1;
  if (next >= ramp.steps.length) return { kind: "wait", reason: "at the last step" };
  const dueAt = ramp.stepStartedAt.getTime() + ramp.everyHours * 3_600_000;
  if (now.getTime() < dueAt) return { kind: "wait", reason: `step ${ramp.step + 1} lasts until ${new Date(dueAt).toISOString()}` };
  for (const [name, { reports }] of bounds) {
    if (reports < ramp.minReports) return { kind: "wait", reason: `${name}: ${reports} of ${ramp.minReports} reports` };
  }
  return { kind: "advance", to: next, done: next === ramp.steps.length - 1 };
}

/**
 * Checks a blockmap as electron-builder writes it beside an installer (gzip of JSON: `files`, each
 * with `sizes` of its blocks) against the installer's size; null when it fits, else the reason.
 */
export function blockmapProblem(gzipped: Buffer, installerSize: number): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(gunzipSync(gzipped, { maxOutputLength: 64 * 1024 * 1024 }).toString("utf8"));
  } catch {
    return "the blockmap is not gzip of JSON (electron-builder writes <installer>.blockmap)";
  }
  const files = (parsed as { files?: unknown }).files;
  if (!Array.isArray(files) || files.length === 0) return "the blockmap has no files";
  let total = 0;
  for (const file of files as { sizes?: unknown; checksums?: unknown }[]) {
    if (!Array.isArray(file.sizes) || !Array.isArray(file.checksums) || file.sizes.length !== file.checksums.length) return "each file of the blockmap needs as many sizes as checksums";
    for (const size of file.sizes) {
      if (!Number.isSafeInteger(size) || size <= 0) return "the blockmap's block sizes must be positive whole numbers";
      total += size;
    }
  }
  return total === installerSize ? null : `the blockmap's blocks add up to ${total} bytes, the installer has ${installerSize}`;
}
