import { createHash } from "node:crypto";
import { outboundEvent } from "../core/event-types";
import { OPERATORS } from "../core/event-outbox";
import { Transform, type Readable } from "node:stream";
import type { Firestore } from "firebase-admin/firestore";
import type { z } from "zod";
import { auditLog, operatorOf, type AuditEvent } from "../core/audit-log";
import { isAlreadyExists, toIso } from "../core/documents";
import { keptListener } from "../core/listeners";
import { ApiError, invalidRequest } from "../core/errors";
import { storeThenRecord, type ObjectStore, type SignedUrl } from "../core/storage";
import { installerPath } from "../core/storage-paths";
import { parseInput } from "../core/validation";
import type { Deps, OperatorDeps } from "../deps";
import { releaseStore, type ReleaseRecord, type ReleaseFilter } from "./release-store";
import { healthStore } from "./health-store";
import { blockmapProblem, compareBySemverDescending, healthRates, offeredRelease, rampDecision, type RampSchedule } from "./rules";
import { publishReleaseInput, rampInput, releaseIdInput, releaseListQuerySchema, rolloutInput, yankInput, type healthReportSchema, type Release } from "./schemas";

/**
 * Every release (at most 1,000 documents), in memory: what the public release endpoints filter,
 * so a warm instance reads nothing per request. A Firestore listener on the collection keeps it
 * current, so a rollout change or a yank shows within the listener's delay (well under the 2 s of
 * §13). Until its first snapshot, or while a failed listener waits to be tried again, every call
 * reads the collection (concurrent calls share one read). With `ttlMs` 0 every call reads.
 */
export interface ReleaseCatalog {
  all(): Promise<ReleaseRecord[]>;
}

export function releaseCatalog(db: Firestore, ttlMs: number): ReleaseCatalog {
  // Built on first use: declaring the routes touches no backend.
  const releases = () => releaseStore(db);
  let current: ReleaseRecord[] | null = null;
  const listener = keptListener(
    (failed) => releases().watch((latest) => (current = latest), failed),
    () => (current = null),
  );
  let reading: Promise<ReleaseRecord[]> | null = null;
  const readThrough = () => {
    reading ??= releases()
      .find({})
      .finally(() => (reading = null));
    return reading;
  };
  return {
    all: () => {
      if (ttlMs <= 0) return releases().find({});
      listener.ensure();
      return current ? Promise.resolve(current) : readThrough();
    },
  };
}

const matching = (filter: ReleaseFilter) => (release: ReleaseRecord) =>
  (["platform", "channel", "arch", "version"] as const).every((field) => !filter[field] || release[field] === filter[field]);

/** Published releases matching the filter that are not yanked, highest semver first. */
export async function listReleases(catalog: ReleaseCatalog, filter: ReleaseFilter): Promise<Release[]> {
  return (await catalog.all())
    .filter((release) => !release.yankedAt && matching(filter)(release))
    .sort(compareBySemverDescending)
    .map(toReleaseView);
}

/**
 * A signed URL of the installer offered, without a staging id, for a platform, arch and channel:
 * the highest-semver release that is not yanked and not halted (rules.ts).
 */
export async function latestInstallerUrl(
  catalog: ReleaseCatalog,
  store: ObjectStore,
  filter: Required<Pick<ReleaseFilter, "platform" | "channel" | "arch">>,
  ttlSeconds: number,
): Promise<SignedUrl> {
  const offered = offeredRelease((await catalog.all()).filter(matching(filter)), undefined);
  if (!offered) throw new ApiError("release_not_found", `No ${filter.channel} release for ${filter.platform} ${filter.arch}.`);
  return store.signedReadUrl(offered.storagePath, { ttlSeconds, fileName: offered.fileName });
}

/**
 * The release offered to an update client (rules.ts), read afresh so that a halt or a yank takes
 * effect on the next request; only releases with a SHA-512 can be offered (feeds carry it).
 */
export async function offeredUpdate(
  db: Firestore,
  target: Required<Pick<ReleaseFilter, "platform" | "arch" | "channel">>,
  stagingId: string | undefined,
): Promise<ReleaseRecord & { sha512: string }> {
  const candidates = (await releaseStore(db).find(target)).filter((release): release is ReleaseRecord & { sha512: string } => release.sha512 !== null);
  const offered = offeredRelease(candidates, stagingId);
  if (!offered) throw new ApiError("release_not_found", `No ${target.channel} release for ${target.platform} ${target.arch} is offered.`);
  return offered;
}

/**
 * A signed URL of one release's installer: the stable address feeds point at, read afresh so a
 * yank takes effect on the next request.
 */
export async function releaseInstallerUrl({ db, store, config }: Deps, releaseId: string): Promise<SignedUrl> {
  const release = await releaseStore(db).get(releaseId);
  if (!release) throw new ApiError("release_not_found", `No release '${releaseId}'.`);
  if (release.yankedAt) throw new ApiError("release_yanked", `Release '${releaseId}' was withdrawn${release.yankReason ? `: ${release.yankReason}` : "."}`);
  return store.signedReadUrl(release.storagePath, { ttlSeconds: config.signedUrlTtlSeconds, fileName: release.fileName });
}

export interface InstallerUpload {
  content: Readable;
  size: number;
  /** The `.blockmap` electron-builder wrote beside the installer, for differential updates (§19). */
  blockmap?: Buffer;
  onProgress?: (sentBytes: number, totalBytes: number) => void;
}

/**
 * Operators: streams an installer to Storage (hashing it on the way), then writes its release; if
 * the release cannot be written the uploaded object is removed. One release per version,
 * platform, arch and channel, unless `replace`, which keeps the earlier notes unless new ones are
 * given (an empty string clears them) and deletes the earlier installer once the new one is in.
 */
export async function publishRelease(deps: OperatorDeps, input: z.input<typeof publishReleaseInput>, upload: InstallerUpload) {
  const { db, store, clock } = deps;
  const { replace, notes, rollout, ...fields } = parseInput(publishReleaseInput, input);
  const releases = releaseStore(db);
  const [existing] = await releases.find({ version: fields.version, platform: fields.platform, arch: fields.arch, channel: fields.channel });
  if (existing && !replace) {
    throw new ApiError("release_exists", `Release ${existing.id} exists (${fields.version} ${fields.platform} ${fields.arch} ${fields.channel}); pass --replace to overwrite it.`);
  }
  const id = existing?.id ?? `${fields.platform}-${fields.arch}-${fields.channel}-${fields.version}`;
  const storagePath = installerPath(id, fields.fileName);
  const blockmapProblemFound = upload.blockmap ? blockmapProblem(upload.blockmap, upload.size) : null;
  if (blockmapProblemFound) throw invalidRequest(`Not the installer's blockmap: ${blockmapProblemFound}.`, [{ path: "blockmap", message: blockmapProblemFound }]);
  const blockmapPath = upload.blockmap ? `${storagePath}.blockmap` : null;

  const sha256 = createHash("sha256");
  const sha512 = createHash("sha512");
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      sha256.update(chunk);
      sha512.update(chunk);
      size += chunk.length;
      upload.onProgress?.(size, upload.size);
      done(null, chunk);
    },
  });
  upload.content.pipe(meter);
  const release = await storeThenRecord(store, storagePath, {
    store: async () => {
      if (upload.blockmap && blockmapPath) await store.write(blockmapPath, upload.blockmap, { contentType: "application/octet-stream" });
      await store.writeStream(storagePath, meter, upload.size, { contentType: "application/octet-stream" });
    },
    // The hashes and size are known once the stream has been stored.
    record: async () => {
      const stored: ReleaseRecord = {
        id,
        ...fields,
        storagePath,
        size,
        sha256: sha256.digest("hex"),
        sha512: sha512.digest("base64"),
        notes: (notes ?? existing?.notes) || null,
        publishedAt: clock(),
        rolloutPercentage: rollout,
        yankedAt: null,
        yankReason: null,
        haltReason: null,
        ramp: null,
        blockmapPath,
      };
      const published = outboundEvent("release.published", [OPERATORS], { releaseId: id, version: stored.version, platform: stored.platform, arch: stored.arch, channel: stored.channel, path: `/releases/${id}/download` });
      const event = { action: "release.publish", target: id, details: { sha256: stored.sha256, size, rollout, replaced: Boolean(existing) }, emits: [published] };
      await auditLog(db).commit(operatorOf(deps), event, stored.publishedAt, (batch) => (existing ? releases.replaceIn(batch, stored) : releases.createIn(batch, stored)));
      return stored;
    },
  }).catch((error: unknown) => {
    throw isAlreadyExists(error) ? new ApiError("release_exists", `Release ${id} was created meanwhile; pass --replace to overwrite it.`) : error;
  });
  if (existing && existing.storagePath !== storagePath) await store.delete(existing.storagePath);
  return toReleaseView(release);
}

/** Operators: removes a release, the document first, so the API never points at a missing installer. */
export async function removeRelease({ db, store }: OperatorDeps, input: z.input<typeof releaseIdInput>) {
  const { releaseId } = parseInput(releaseIdInput, input);
  const releases = releaseStore(db);
  const release = await releases.get(releaseId);
  if (!release) throw new ApiError("release_not_found", `No release '${releaseId}'.`);
  await releases.delete(releaseId);
  await store.delete(release.storagePath);
  return { id: releaseId, version: release.version, platform: release.platform, arch: release.arch, channel: release.channel };
}

function toReleaseView(release: ReleaseRecord): Release {
  return {
    id: release.id,
    version: release.version,
    platform: release.platform,
    arch: release.arch,
    channel: release.channel,
    fileName: release.fileName,
    size: release.size,
    sha256: release.sha256,
    sha512: release.sha512,
    notes: release.notes,
    publishedAt: toIso(release.publishedAt),
    rolloutPercentage: release.rolloutPercentage,
  };
}

async function existingRelease(db: Firestore, releaseId: string): Promise<ReleaseRecord> {
  const release = await releaseStore(db).get(releaseId);
  if (!release) throw new ApiError("release_not_found", `No release '${releaseId}'.`);
  return release;
}

/** Operators: the share of callers a release is offered to (0 halts the rollout); takes effect on the next request. */
export async function setRollout(deps: OperatorDeps, input: z.input<typeof rolloutInput>) {
  const { releaseId, percentage } = parseInput(rolloutInput, input);
  const release = { ...(await existingRelease(deps.db, releaseId)), rolloutPercentage: percentage, haltReason: null };
  const path = `/releases/${releaseId}/download`;
  const emits = [percentage === 0 ? outboundEvent("release.halted", [OPERATORS], { releaseId, reason: null, path }) : outboundEvent("release.ramped", [OPERATORS], { releaseId, rollout: percentage, path })];
  await replaceAudited(deps, release, { action: percentage === 0 ? "release.halt" : "release.rollout", target: releaseId, details: { percentage }, emits });
  return toReleaseView(release);
}

/** Operators: withdraws a release: out of the list, the redirects and the feeds; its own download answers 410. */
export async function yankRelease(deps: OperatorDeps, input: z.input<typeof yankInput>) {
  const { releaseId, reason } = parseInput(yankInput, input);
  const release = { ...(await existingRelease(deps.db, releaseId)), yankedAt: deps.clock(), yankReason: reason ?? null };
  await replaceAudited(deps, release, { action: "release.yank", target: releaseId, details: { reason }, emits: [outboundEvent("release.yanked", [OPERATORS], { releaseId, yanked: true, path: `/releases/${releaseId}/download` })] });
  return { ...toReleaseView(release), yankedAt: toIso(release.yankedAt), yankReason: release.yankReason };
}

export async function unyankRelease(deps: OperatorDeps, input: z.input<typeof releaseIdInput>) {
  const { releaseId } = parseInput(releaseIdInput, input);
  const release = { ...(await existingRelease(deps.db, releaseId)), yankedAt: null, yankReason: null };
  await replaceAudited(deps, release, { action: "release.unyank", target: releaseId, emits: [outboundEvent("release.yanked", [OPERATORS], { releaseId, yanked: false, path: `/releases/${releaseId}/download` })] });
  return toReleaseView(release);
}

/** Writes a changed release with its audit entry, in one batch. */
function replaceAudited(deps: OperatorDeps, release: ReleaseRecord, event: AuditEvent): Promise<void> {
  return auditLog(deps.db).commit(operatorOf(deps), event, deps.clock(), (batch) => releaseStore(deps.db).replaceIn(batch, release));
}

/**
 * Operators: computes the SHA-512 of every release stored without one (releases published before
 * it was recorded). Idempotent: releases that have it are left alone.
 */
export async function backfillSha512({ db, store }: OperatorDeps) {
  const releases = releaseStore(db);
  const updated: string[] = [];
  for (const release of await releases.find({})) {
    if (release.sha512) continue;
    const hash = createHash("sha512");
    for await (const chunk of store.read(release.storagePath)) hash.update(chunk as Buffer);
    await releases.replace({ ...release, sha512: hash.digest("base64") });
    updated.push(release.id);
  }
  return { updated };
}

/** Operators: `release list`, with the listing's own filter. */
export async function listReleasesFor({ db }: Pick<OperatorDeps, "db">, input: z.input<typeof releaseListQuerySchema>) {
  return listReleases({ all: () => releaseStore(db).find({}) }, parseInput(releaseListQuerySchema, input));
}

/**
 * POST /updates/reports: how an update went on one installed app (contract §19), counted once per
 * release, staging id and event; a repeat is accepted and changes nothing.
 */
export async function reportHealth(deps: Pick<Deps, "db" | "clock">, catalog: ReleaseCatalog, report: z.output<typeof healthReportSchema>): Promise<{ counted: boolean }> {
  if (!(await catalog.all()).some((release) => release.id === report.releaseId)) {
    throw new ApiError("release_not_found", `No release '${report.releaseId}'.`);
  }
  const counted = await healthStore(deps.db).record({ ...report, error: report.error ?? null, at: deps.clock() });
  return { counted };
}

/** Operators: a release's reports per event and its failure and crash rates, with the reports behind each. */
export async function releaseHealth({ db }: Pick<OperatorDeps, "db">, input: z.input<typeof releaseIdInput>) {
  const { releaseId } = parseInput(releaseIdInput, input);
  if (!(await releaseStore(db).get(releaseId))) throw new ApiError("release_not_found", `No release '${releaseId}'.`);
  const counts = await healthStore(db).counts(releaseId);
  return { releaseId, counts, ...healthRates(counts) };
}

/**
 * Operators: an automatic ramp (contract §19): the rollout moves to the first step now, and each
 * tick (tickRamps) advances it when the step has lasted and is healthy, or halts it.
 */
export async function setRamp(deps: OperatorDeps, input: z.input<typeof rampInput>) {
  const { releaseId, steps, every, maxFailureRate, maxCrashRate, minReports } = parseInput(rampInput, input);
  const now = deps.clock();
  const ramp: RampSchedule = { steps, everyHours: every, maxFailureRate, maxCrashRate, minReports, step: 0, stepStartedAt: now, state: steps.length === 1 ? "done" : "running" };
  const release = { ...(await existingRelease(deps.db, releaseId)), rolloutPercentage: steps[0], haltReason: null, ramp };
  await replaceAudited(deps, release, { action: "release.ramp", target: releaseId, details: { steps, everyHours: every, maxFailureRate, maxCrashRate, minReports } });
  return releaseStatus(deps, { releaseId });
}

/** Operators: stops a release's ramp, keeping its rollout where it is. */
export async function stopRamp(deps: OperatorDeps, input: z.input<typeof releaseIdInput>) {
  const { releaseId } = parseInput(releaseIdInput, input);
  const release = { ...(await existingRelease(deps.db, releaseId)), ramp: null };
  await replaceAudited(deps, release, { action: "release.ramp.off", target: releaseId, details: { percentage: release.rolloutPercentage } });
  return releaseStatus(deps, { releaseId });
}

/**
 * One tick of every running ramp (the `releaseRamps` schedule and `release tick` run this): each
 * release is decided in a transaction on its document, so two ticks at once make one move.
 */
export async function tickRamps(deps: OperatorDeps) {
  const { db, clock } = deps;
  const releases = releaseStore(db);
  const running = (await releases.find({})).filter((release) => release.ramp?.state === "running");
  const moves: { releaseId: string; outcome: string; percentage: number; reason?: string }[] = [];
  for (const { id } of running) {
    const outcome = await db.runTransaction(async (tx) => {
      const release = releases.read(await tx.get(releases.ref(id)));
      if (!release?.ramp || release.ramp.state !== "running") return null;
      const health = healthRates(await healthStore(db).countsIn(tx, id));
      const now = clock();
      const decision = rampDecision(release.ramp, health, now);
      if (decision.kind === "wait") return { releaseId: id, outcome: "wait", percentage: release.rolloutPercentage, reason: decision.reason };
      const changed: ReleaseRecord =
        decision.kind === "halt"
          ? { ...release, rolloutPercentage: 0, haltReason: decision.reason, ramp: { ...release.ramp, state: "halted" } }
          : { ...release, rolloutPercentage: release.ramp.steps[decision.to], ramp: { ...release.ramp, step: decision.to, stepStartedAt: now, state: decision.done ? "done" : "running" } };
      releases.replaceIn(tx, changed);
      const action = decision.kind === "halt" ? "release.ramp.halt" : "release.ramp.advance";
      const path = `/releases/${id}/download`;
      const emits = [
        decision.kind === "halt"
          ? outboundEvent("release.halted", [OPERATORS], { releaseId: id, reason: decision.reason, path })
          : outboundEvent("release.ramped", [OPERATORS], { releaseId: id, rollout: changed.rolloutPercentage, path }),
      ];
      auditLog(db).record(tx, operatorOf(deps), { action, target: id, details: { percentage: changed.rolloutPercentage, ...(decision.kind === "halt" ? { reason: decision.reason } : { step: decision.to }), ...health }, emits }, now);
      return { releaseId: id, outcome: decision.kind, percentage: changed.rolloutPercentage, ...(decision.kind === "halt" ? { reason: decision.reason } : {}) };
    });
    if (outcome) moves.push(outcome);
  }
  return moves;
}

/** Operators: a release's rollout, its ramp (current step, when the next is due) and its health. */
export async function releaseStatus({ db }: Pick<OperatorDeps, "db">, input: z.input<typeof releaseIdInput>) {
  const { releaseId } = parseInput(releaseIdInput, input);
  const release = await existingRelease(db, releaseId);
  const counts = await healthStore(db).counts(releaseId);
  const ramp = release.ramp;
  return {
    releaseId,
    version: release.version,
    rolloutPercentage: release.rolloutPercentage,
    haltReason: release.haltReason,
    ramp: ramp
      ? {
          state: ramp.state,
          steps: ramp.steps,
          step: `${ramp.step + 1} of ${ramp.steps.length} (${ramp.steps[ramp.step]}%)`,
          stepStartedAt: toIso(ramp.stepStartedAt),
          nextStepDueAt: ramp.state === "running" && ramp.step + 1 < ramp.steps.length ? toIso(new Date(ramp.stepStartedAt.getTime() + ramp.everyHours * 3_600_000)) : null,
          everyHours: ramp.everyHours,
          maxFailureRate: ramp.maxFailureRate,
          maxCrashRate: ramp.maxCrashRate,
          minReports: ramp.minReports,
        }
      : null,
    counts,
    ...healthRates(counts),
  };
}

/**
 * GET /updates/electron/:platform/:arch/files/:version/:file (§19): a fresh signed URL of a
 * release's installer, or of its blockmap (the installer's name + `.blockmap`), by the version and
 * file name the feed names, so that electron-updater finds an installed version's blockmap by
 * writing that version into the new one's address.
 */
export async function releaseFileUrl({ store, config }: Pick<Deps, "store" | "config">, catalog: ReleaseCatalog, file: { platform: string; arch: string; version: string; name: string }): Promise<SignedUrl> {
  const matching = (await catalog.all()).filter((release) => release.platform === file.platform && release.arch === file.arch && release.version === file.version);
  const release = matching.find((candidate) => !candidate.yankedAt) ?? matching[0];
  const notFound = () => new ApiError("release_not_found", `No ${file.platform} ${file.arch} release ${file.version} has a file '${file.name}'.`);
  if (!release) throw notFound();
  if (release.yankedAt) throw new ApiError("release_yanked", `Release ${release.id} was withdrawn${release.yankReason ? `: ${release.yankReason}` : ""}.`);
  if (file.name === release.fileName) return store.signedReadUrl(release.storagePath, { ttlSeconds: config.signedUrlTtlSeconds, fileName: release.fileName });
  if (file.name === `${release.fileName}.blockmap` && release.blockmapPath) return store.signedReadUrl(release.blockmapPath, { ttlSeconds: config.signedUrlTtlSeconds });
  throw notFound();
}
