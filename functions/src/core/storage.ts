import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { getStorage } from "firebase-admin/storage";
import { withDeadlines } from "./deadline";

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
  /** Every object under a prefix with its creation time, a page at a time. */
  list(prefix: string): AsyncIterable<StoredObject>;
}

export interface StoredObject {
  path: string;
  createdAt: Date;
}

/** Uploads from this size on are resumable: a dropped connection resumes instead of starting over. */
const RESUMABLE_FROM_BYTES = 8 * 1024 * 1024;

export function bucketStore(bucket: Bucket, clock: () => Date): ObjectStore {
  return withDeadlines("Storage", {
    async signedReadUrl(path, { ttlSeconds, fileName }) {
      const expiresAt = new Date(clock().getTime() + ttlSeconds * 1000);
      const [url] = await bucket.file(path).getSignedUrl({
        version: "v4",
        action: "read",
        expires: expiresAt,
        ...(fileName ? { responseDisposition: contentDisposition(fileName) } : {}),
      });
      return { url, expiresAt };
    },
    async write(path, data, { contentType, metadata }) {
      await bucket.file(path).save(data, { resumable: false, contentType, metadata: { metadata } });
    },
    async writeStream(path, source, size, { contentType, metadata }) {
      const target = bucket.file(path).createWriteStream({ resumable: size > RESUMABLE_FROM_BYTES, contentType, metadata: { metadata } });
      await pipeline(source, target);
    },
    async *list(prefix) {
      let pageToken: string | undefined;
      do {
        const [files, next] = await bucket.getFiles({ prefix, maxResults: 1000, autoPaginate: false, pageToken });
        for (const file of files) yield { path: file.name, createdAt: new Date(file.metadata.timeCreated ?? 0) };
        pageToken = (next as { pageToken?: string } | null)?.pageToken;
      } while (pageToken);
    },
    async delete(path) {
      await bucket.file(path).delete({ ignoreNotFound: true });
    },
  });
}

function contentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}
