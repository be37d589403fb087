import type { Firestore, Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, oncePerDatabase } from "../core/documents";
import { CONTENT_RULES, type PackageContent, type PackageImage } from "./package-content";

/**
 * `modules/{moduleId}/versions/{version}/content/{readme|changelog|icon|image-<n>}`: what a
 * version's page shows, one document each (a rendered README may come near Firestore's 1 MiB),
 * written in the sign transaction with the version itself, so a version never has another
 * package's content.
 */

const htmlDocument = z.object({ html: z.string() });
const iconDocument = z.object({ png: z.instanceof(Uint8Array) });
const imageDocument = z.object({ type: z.string(), bytes: z.instanceof(Uint8Array) });

export interface VersionContent {
  readmeHtml: string | null;
  changelogHtml: string | null;
}

export const contentStore = oncePerDatabase((db: Firestore) => {
  const contentOf = (moduleId: string, version: string) => documentAt(documentAt(db.collection("modules"), moduleId).collection("versions"), version).collection("content");
  return withDeadlines("Firestore", {
    /** Replaces a version's content: what the package lacks is deleted. */
    write(tx: Transaction, moduleId: string, version: string, content: PackageContent): void {
      const docs = contentOf(moduleId, version);
      const put = (id: string, data: object | null) => (data ? tx.set(documentAt(docs, id), data) : tx.delete(documentAt(docs, id)));
      put("readme", content.readmeHtml === null ? null : { html: content.readmeHtml });
      put("changelog", content.changelogHtml === null ? null : { html: content.changelogHtml });
      put("icon", content.icon && { png: content.icon });
      for (let index = 0; index < CONTENT_RULES.images.maxCount; index += 1) {
        const image = content.images[index];
        put(`image-${index}`, image ? { type: image.type, bytes: image.bytes } : null);
      }
    },
    /** The rendered README and CHANGELOG of a version, in one batched read. */
    async documents(moduleId: string, version: string): Promise<VersionContent> {
      const docs = contentOf(moduleId, version);
      const [readme, changelog] = await db.getAll(documentAt(docs, "readme"), documentAt(docs, "changelog"));
      return { readmeHtml: readDocument(htmlDocument, readme)?.html ?? null, changelogHtml: readDocument(htmlDocument, changelog)?.html ?? null };
    },
    /** The n-th image a version's README shows, or null. */
    async image(moduleId: string, version: string, index: number): Promise<PackageImage | null> {
      const stored = readDocument(imageDocument, await documentAt(contentOf(moduleId, version), `image-${index}`).get());
      return stored && { type: stored.type, bytes: Buffer.from(stored.bytes) };
    },
    async icon(moduleId: string, version: string): Promise<Buffer | null> {
      const stored = readDocument(iconDocument, await documentAt(contentOf(moduleId, version), "icon").get());
      return stored && Buffer.from(stored.png);
    },
  });
});
