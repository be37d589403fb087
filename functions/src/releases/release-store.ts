import { Timestamp, type DocumentSnapshot, type Firestore, type Query, type Transaction, type WriteBatch } from "firebase-admin/firestore";
import { z } from "zod";
import { ARCHES, CHANNELS, PLATFORMS, type RampSchedule } from "./rules";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, semverVersion, timestamp, oncePerDatabase } from "../core/documents";

/** `releases/{releaseId}`: desktop installer releases, written by operators, read by the service. */

export type Platform = (typeof PLATFORMS)[number];
export type Arch = (typeof ARCHES)[number];
export type Channel = (typeof CHANNELS)[number];

const releaseDocument = z.object({
  version: semverVersion,
  platform: z.enum(PLATFORMS),
  arch: z.enum(ARCHES),
  channel: z.enum(CHANNELS),
  fileName: z.string().min(1),
  storagePath: z.string().min(1),
  size: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** Base64 SHA-512 of the installer (what update feeds carry); missing on releases from before it. */
  sha512: z.string().min(1).optional(),
  notes: z.string().optional(),
  publishedAt: timestamp,
  /** Share of callers offered the release, 0-100; absent means 100. */
  rolloutPercentage: z.number().int().min(0).max(100).optional(),
  yankedAt: timestamp.optional(),
  yankReason: z.string().optional(),
  /** Why an automatic ramp halted the rollout (contract §19). */
  haltReason: z.string().optional(),
  /** The installer's electron-builder blockmap, for differential updates (§19). */
  blockmapPath: z.string().optional(),
  ramp: z
    .object({
      steps: z.array(z.number().int().min(0).max(100)).min(1),
      everyHours: z.number().positive(),
      maxFailureRate: z.number().min(0).max(1),
      maxCrashRate: z.number().min(0).max(1),
      minReports: z.number().int().min(0),
      step: z.number().int().min(0),
      stepStartedAt: timestamp,
      state: z.enum(["running", "halted", "done"]),
    })
    .optional(),
});

export interface ReleaseRecord {
  id: string;
  version: string;
  platform: Platform;
  arch: Arch;
  channel: Channel;
  fileName: string;
  storagePath: string;
  size: number;
  sha256: string;
  sha512: string | null;
  notes: string | null;
  publishedAt: Date;
  rolloutPercentage: number;
  yankedAt: Date | null;
  yankReason: string | null;
  haltReason: string | null;
  ramp: RampSchedule | null;
  blockmapPath: string | null;
}

export interface ReleaseFilter {
  platform?: Platform;
  channel?: Channel;
  arch?: Arch;
  version?: string;
}

export const releaseStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("releases");
  const read = (snapshot: DocumentSnapshot): ReleaseRecord | null => {
    const stored = readDocument(releaseDocument, snapshot);
    if (!stored) return null;
    return {
      id: snapshot.id,
      ...stored,
      sha512: stored.sha512 ?? null,
      notes: stored.notes ?? null,
      publishedAt: stored.publishedAt.toDate(),
      rolloutPercentage: stored.rolloutPercentage ?? 100,
      yankedAt: stored.yankedAt?.toDate() ?? null,
      yankReason: stored.yankReason ?? null,
      haltReason: stored.haltReason ?? null,
      blockmapPath: stored.blockmapPath ?? null,
      ramp: stored.ramp ? { ...stored.ramp, stepStartedAt: stored.ramp.stepStartedAt.toDate() } : null,
    };
  };
  const toDocument = ({ id: _id, sha512, notes, publishedAt, yankedAt, yankReason, haltReason, ramp, blockmapPath, ...release }: ReleaseRecord) =>
    releaseDocument.parse({
      ...release,
      ...(sha512 ? { sha512 } : {}),
      ...(notes ? { notes } : {}),
      publishedAt: Timestamp.fromDate(publishedAt),
      ...(yankedAt ? { yankedAt: Timestamp.fromDate(yankedAt) } : {}),
      ...(yankReason ? { yankReason } : {}),
      ...(haltReason ? { haltReason } : {}),
      ...(blockmapPath ? { blockmapPath } : {}),
      ...(ramp ? { ramp: { ...ramp, stepStartedAt: Timestamp.fromDate(ramp.stepStartedAt) } } : {}),
    });
  return withDeadlines("Firestore", {
    read,
    ref: (releaseId: string) => documentAt(collection, releaseId),
    async get(releaseId: string): Promise<ReleaseRecord | null> {
      return read(await documentAt(collection, releaseId).get());
    },
    /** Every release matching the filter (equality on each given field), in no particular order. */
    async find(filter: ReleaseFilter): Promise<ReleaseRecord[]> {
      let query: Query = collection;
      for (const field of ["platform", "channel", "arch", "version"] as const) {
        if (filter[field]) query = query.where(field, "==", filter[field]);
      }
      return (await query.get()).docs.map((snapshot) => read(snapshot)!);
    },
    /** Follows the whole collection (a Firestore listener); a malformed document ends it, as an error. */
    watch(onChange: (releases: ReleaseRecord[]) => void, onError: (error: Error) => void): () => void {
      const stop = collection.onSnapshot((snapshot) => {
        try {
          onChange(snapshot.docs.map((doc) => read(doc)!));
        } catch (error) {
          stop();
          onError(error as Error);
        }
      }, onError);
      return stop;
    },
    /** Adds a new release to a batch; the commit rejects (ALREADY_EXISTS) when its id is taken. */
    createIn(writer: WriteBatch, release: ReleaseRecord): void {
      writer.create(documentAt(collection, release.id), toDocument(release));
    },
    replaceIn(writer: WriteBatch | Transaction, release: ReleaseRecord): void {
      (writer as WriteBatch).set(documentAt(collection, release.id), toDocument(release));
    },
    async replace(release: ReleaseRecord): Promise<void> {
      await documentAt(collection, release.id).set(toDocument(release));
    },
    /** Where every release's installer is stored: one query of that field only. */
    async storagePaths(): Promise<Set<string>> {
      const docs = (await collection.select("storagePath", "blockmapPath").get()).docs;
      return new Set(docs.flatMap((doc) => [doc.get("storagePath") as string, ...(doc.get("blockmapPath") ? [doc.get("blockmapPath") as string] : [])]));
    },
    async delete(releaseId: string): Promise<void> {
      await documentAt(collection, releaseId).delete();
    },
  });
});
