import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { getStorage } from "firebase-admin/storage";
import { withDeadlines, withinDeadline } from "./deadline";

/** A Cloud Storage bucket, as the Admin SDK hands it out. */
export type Bucket = ReturnType<ReturnType<typeof getStorage>["bucket"]>;

export interface SignedUrl {
  url: string;
  expiresAt: Date;
}

export interface ObjectMetadata {
  contentType: string;
  /** Custom metadata stored with the object. */
  metadata?: Record<string, string>;
}

/**
 * Everything the service does with Cloud Storage, behind one interface: the sign flow writes
 * packages (and deletes them when a later step fails), downloads and the installer redirect hand
 * out short-lived signed read URLs.
 */
export interface ObjectStore {
  signedReadUrl(path: string, options: { ttlSeconds: number; fileName?: string }): Promise<SignedUrl>;
  write(path: string, data: Buffer, metadata: ObjectMetadata): Promise<void>;
  /** Streams an object of `size` bytes (large ones as a resumable upload) without holding it in memory. */
  writeStream(path: string, source: Readable, size: number, metadata: ObjectMetadata): Promise<void>;
  delete(path: string): Promise<void>;
  /**
   * An object's bytes, as a stream, checked against the object's CRC32C as they arrive unless
   * `checked` is false (for bytes that check themselves, as gzip's CRC-32 does: the client
   * library computes CRC32C in JavaScript, about 6 ms per MiB).
   */
  read(path: string, options?: { checked?: boolean }): Readable;
  /** Every object under a prefix with its creation time, a page at a time. */
  list(prefix: string): AsyncIterable<StoredObject>;
}

export interface StoredObject {
  path: string;
  createdAt: Date;
}

/** Uploads from this size on are resumable: a dropped connection resumes instead of starting over. */
const RESUMABLE_FROM_BYTES = 8 * 1024 * 1024;

/** A signed URL is handed out again while it has at least this much of its life left. */
export const MIN_REMAINING_URL_LIFE_MS = 10 * 60 * 1000;
const MAX_REUSED_URLS = 10_000;

export function bucketStore(bucket: Bucket, clock: () => Date): ObjectStore {
  // Signing is a signBlob call to IAM on Cloud Functions without a key file: a burst of downloads
  // of one object signs once, and every answer still has at least ten minutes (or two thirds of a
  // shorter lifetime) to go.
  const signed = new Map<string, SignedUrl>();
  const reusable = (url: SignedUrl | undefined, ttlSeconds: number): url is SignedUrl =>
    url !== undefined && url.expiresAt.getTime() - clock().getTime() >= Math.min(MIN_REMAINING_URL_LIFE_MS, (ttlSeconds * 1000 * 2) / 3);
  const writes: Omit<ObjectStore, "signedReadUrl" | "read"> = withDeadlines("Storage", {
    async write(path: string, data: Buffer, { contentType, metadata }: ObjectMetadata) {
      await bucket.file(path).save(data, { resumable: false, contentType, metadata: { metadata } });
    },
    async writeStream(path: string, source: Readable, size: number, { contentType, metadata }: ObjectMetadata) {
      const target = bucket.file(path).createWriteStream({ resumable: size > RESUMABLE_FROM_BYTES, contentType, metadata: { metadata } });
      await pipeline(source, target);
    },
    async *list(prefix: string) {
      let pageToken: string | undefined;
      do {
        const [files, next] = await bucket.getFiles({ prefix, maxResults: 1000, autoPaginate: false, pageToken });
        for (const file of files) yield { path: file.name, createdAt: new Date(file.metadata.timeCreated ?? 0) };
        pageToken = (next as { pageToken?: string } | null)?.pageToken;
      } while (pageToken);
    },
    async delete(path: string) {
      await bucket.file(path).delete({ ignoreNotFound: true });
    },
  });
  return {
    ...writes,
    read: (path, options) => bucket.file(path).createReadStream({ validation: options?.checked !== false }),
    async signedReadUrl(path, { ttlSeconds, fileName }) {
      const key = `${ttlSeconds}|${fileName ?? ""}|${path}`;
      const known = signed.get(key);
      if (reusable(known, ttlSeconds)) return known;
      const expiresAt = new Date(clock().getTime() + ttlSeconds * 1000);
      const [url] = await withinDeadline(
        "Storage (signedReadUrl)",
        bucket.file(path).getSignedUrl({
          version: "v4",
          action: "read",
          expires: expiresAt,
          ...(fileName ? { responseDisposition: contentDisposition(fileName) } : {}),
        }),
      );
      if (signed.size >= MAX_REUSED_URLS) signed.clear();
      signed.set(key, { url, expiresAt });
      return { url, expiresAt };
    },
  };
}

/**
 * Stores an object, then records it (writes what references it); when recording fails, the object
 * is deleted again unless a record points at it after all (a write abandoned at its deadline may
 * still have landed), and the recording's error is what the caller sees. An object whose deletion
 * fails too is left to the scheduled clean-up (cleanup/), which removes what nothing references.
 */
export async function storeThenRecord<T>(
  store: ObjectStore,
  path: string,
  steps: { store: () => Promise<void>; record: () => Promise<T>; recordedAnyway?: () => Promise<boolean> },
): Promise<T> {
  await steps.store();
  try {
    return await steps.record();
  } catch (error) {
    const kept = await (steps.recordedAnyway?.() ?? Promise.resolve(false)).catch(() => true);
    if (!kept) await store.delete(path).catch(() => {});
    throw error;
  }
}

function contentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}
