import { createHash, randomUUID } from "node:crypto";
import { Transform, type Readable } from "node:stream";
import type { Firestore } from "firebase-admin/firestore";
import type { z } from "zod";
import { isAlreadyExists, toIso } from "../core/documents";
import { memo } from "../core/memo";
import { ApiError } from "../core/errors";
import type { ObjectStore, SignedUrl } from "../core/storage";
import { parseInput } from "../core/validation";
import type { OperatorDeps } from "../deps";
import { releaseStore, type Release as StoredRelease, type ReleaseFilter } from "./release-store";
import { compareBySemverDescending, highestVersion } from "./rules";
import { publishReleaseInput, releaseIdInput, releaseListQuerySchema, type Release } from "./schemas";

/**
 * Every release, from memory for `ttlMs` after one read of the collection (at most 1,000
 * documents): what the public release endpoints filter, so a warm instance reads nothing.
 */
export interface ReleaseCatalog {
  all(): Promise<StoredRelease[]>;
}

export function releaseCatalog(db: Firestore, ttlMs: number): ReleaseCatalog {
  const cache = memo<StoredRelease[]>({ ttlMs, maxEntries: 1 });
  return { all: () => cache.get("releases", () => releaseStore(db).find({})) };
}

const matching = (filter: ReleaseFilter) => (release: StoredRelease) =>
  (["platform", "channel", "arch", "version"] as const).every((field) => !filter[field] || release[field] === filter[field]);

/** Published releases matching the filter, highest semver first. */
export async function listReleases(catalog: ReleaseCatalog, filter: ReleaseFilter): Promise<Release[]> {
  return (await catalog.all()).filter(matching(filter)).sort(compareBySemverDescending).map(toReleaseView);
}

/** A signed URL of the installer of the highest-semver release for a platform, arch and channel. */
export async function latestInstallerUrl(
  catalog: ReleaseCatalog,
  store: ObjectStore,
  filter: Required<Pick<ReleaseFilter, "platform" | "channel" | "arch">>,
  ttlSeconds: number,
): Promise<SignedUrl> {
  const latest = highestVersion((await catalog.all()).filter(matching(filter)));
  if (!latest) throw new ApiError("release_not_found", `No ${filter.channel} release for ${filter.platform} ${filter.arch}.`);
  return store.signedReadUrl(latest.storagePath, { ttlSeconds, fileName: latest.fileName });
}

export interface InstallerUpload {
  content: Readable;
  size: number;
  onProgress?: (sentBytes: number, totalBytes: number) => void;
}

/**
 * Operators: streams an installer to Storage (hashing it on the way), then writes its release; if
 * the release cannot be written the uploaded object is removed. One release per version,
 * platform, arch and channel, unless `replace`, which keeps the earlier notes unless new ones are
 * given (an empty string clears them) and deletes the earlier installer once the new one is in.
 */
export async function publishRelease({ db, store, clock }: OperatorDeps, input: z.input<typeof publishReleaseInput>, upload: InstallerUpload) {
  const { replace, notes, ...fields } = parseInput(publishReleaseInput, input);
  const releases = releaseStore(db);
  const [existing] = await releases.find({ version: fields.version, platform: fields.platform, arch: fields.arch, channel: fields.channel });
  if (existing && !replace) {
    throw new ApiError("release_exists", `Release ${existing.id} exists (${fields.version} ${fields.platform} ${fields.arch} ${fields.channel}); pass --replace to overwrite it.`);
  }
  const id = existing?.id ?? `${fields.platform}-${fields.arch}-${fields.channel}-${fields.version}`;
  const storagePath = `releases/${id}/${randomUUID()}/${fields.fileName}`;

  const sha256 = createHash("sha256");
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      sha256.update(chunk);
      size += chunk.length;
      upload.onProgress?.(size, upload.size);
      done(null, chunk);
    },
  });
  upload.content.pipe(meter);
  await store.writeStream(storagePath, meter, upload.size, { contentType: "application/octet-stream" });

  const release: StoredRelease = {
    id,
    ...fields,
    storagePath,
    size,
    sha256: sha256.digest("hex"),
    notes: (notes ?? existing?.notes) || null,
    publishedAt: clock(),
  };
  try {
    if (existing) await releases.replace(release);
    else await releases.create(release);
  } catch (error) {
    await store.delete(storagePath);
    if (isAlreadyExists(error)) throw new ApiError("release_exists", `Release ${id} was created meanwhile; pass --replace to overwrite it.`);
    throw error;
  }
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

function toReleaseView(release: StoredRelease): Release {
  return {
    id: release.id,
    version: release.version,
    platform: release.platform,
    arch: release.arch,
    channel: release.channel,
    fileName: release.fileName,
    size: release.size,
    sha256: release.sha256,
    notes: release.notes,
    publishedAt: toIso(release.publishedAt),
  };
}

/** Operators: `release list`, with the listing's own filter. */
export async function listReleasesFor({ db }: Pick<OperatorDeps, "db">, input: z.input<typeof releaseListQuerySchema>) {
  return listReleases({ all: () => releaseStore(db).find({}) }, parseInput(releaseListQuerySchema, input));
}
