import { Timestamp, type DocumentReference, type Firestore, type Transaction, type WriteBatch } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, timestamp, oncePerDatabase } from "../core/documents";

/**
 * The TUF repository (contract §23) in Firestore.
 * - `registry/tuf`: where the repository stands: each role's current version and expiry, the
 *   current `timestamp.json` (the only file that is not versioned), and the online key's id.
 *   Every change reads and writes it in one transaction, so versions only grow.
 * - `tufMetadata/{role}.{version}`: every versioned file exactly as served (`json`), created
 *   once and never overwritten (a second writer of a version fails); `expireAt` (a TTL policy)
 *   removes one two days after it was superseded. Root versions are kept for ever: clients walk
 *   the chain from their first root. A file is served only once the state names its version (or
 *   a later one); a file written ahead of a state that never came (an aborted rotation) is
 *   `abandoned` by the change that takes the next free version, and never served.
 */

const stamp = z.object({ version: z.number().int().positive(), expires: z.string() });
const stateDocument = z.object({
  root: stamp,
  targets: stamp,
  snapshot: stamp,
  timestamp: stamp.extend({ json: z.string() }),
  /**
   * JSON of `{ [bin]: [version, expiry] }`: one string rather than a map of 1,024 entries, which
   * Firestore would index field by field at every change (thousands of index entries a write).
   */
  bins: z.string(),
  onlineKeyId: z.string(),
  /** Set while an online-key rotation re-signs every bin: changes wait. */
  rotatingSince: timestamp.nullable().optional(),
  updatedAt: timestamp,
});

export type RoleStamp = z.output<typeof stamp>;
export interface RepositoryState {
  root: RoleStamp;
  targets: RoleStamp;
  snapshot: RoleStamp;
  timestamp: RoleStamp & { json: string };
  bins: Record<string, RoleStamp>;
  onlineKeyId: string;
  rotatingSince: Date | null;
}

/** A rotation that has not finished in this long died with its process: changes go on. */
const ROTATION_LOCK_MS = 10 * 60_000;
export const isRotating = (state: RepositoryState, now: Date) => state.rotatingSince !== null && now.getTime() - state.rotatingSince.getTime() < ROTATION_LOCK_MS;

/** The version each role's next file takes, and the files written ahead of a state that never came, skipped over. */
export interface FreeVersions {
  versions: Map<string, number>;
  skipped: { role: string; version: number }[];
}

export interface MetadataFile {
  role: string;
  version: number;
  json: string;
}

const metadataDocument = z.object({ role: z.string(), version: z.number().int().positive(), json: z.string(), abandoned: z.boolean().optional() });

/** The version of a role the state names now: what may be served of it is that version and older ones. */
export function namedVersion(state: RepositoryState, role: string): number | null {
  if (role === "root" || role === "targets" || role === "snapshot") return state[role].version;
  return state.bins[role]?.version ?? null;
}

export const tufRepositoryStore = oncePerDatabase((db: Firestore) => {
  const stateRef = documentAt(db.collection("registry"), "tuf");
  const warningRef = documentAt(db.collection("registry"), "tufExpiryWarning");
  const files = db.collection("tufMetadata");
  const fileRef = (role: string, version: number) => documentAt(files, `${role}.${version}`);
  const readState = (data: z.output<typeof stateDocument> | null): RepositoryState | null =>
    data && {
      root: data.root,
      targets: data.targets,
      snapshot: data.snapshot,
      timestamp: data.timestamp,
      bins: Object.fromEntries(Object.entries(JSON.parse(data.bins) as Record<string, [number, string]>).map(([name, [version, expires]]) => [name, { version, expires }])),
      onlineKeyId: data.onlineKeyId,
      rotatingSince: data.rotatingSince?.toDate() ?? null,
    };
  return {
    stateRef,
    ...withDeadlines("Firestore", {
      async state(): Promise<RepositoryState | null> {
        return readState(readDocument(stateDocument, await stateRef.get()));
      },
      /** A versioned file's JSON, whether or not a state names it yet (the operators' tools and the repository's own reads). */
      async file(role: string, version: number): Promise<string | null> {
        return readDocument(metadataDocument, await fileRef(role, version).get())?.json ?? null;
      },
      /** A versioned file as served: only if `state` names its version or a later one, and it was not abandoned. */
      async servedFile(state: RepositoryState, role: string, version: number): Promise<string | null> {
        const named = namedVersion(state, role);
        if (named === null || version > named) return null;
        const stored = readDocument(metadataDocument, await fileRef(role, version).get());
        return stored && !stored.abandoned ? stored.json : null;
      },
    }),
    async stateIn(tx: Transaction): Promise<RepositoryState | null> {
      return readState(readDocument(stateDocument, await tx.get(stateRef)));
    },
    async filesIn(tx: Transaction, wanted: { role: string; version: number }[]): Promise<(string | null)[]> {
      if (wanted.length === 0) return [];
      const snapshots = await tx.getAll(...wanted.map((file) => fileRef(file.role, file.version)));
      return snapshots.map((snapshot) => readDocument(metadataDocument, snapshot)?.json ?? null);
    },
    /**
     * The first version from `version` on that no file holds yet, for each role asked, read in the
     * transaction (or, with none, as they are now); the versions skipped (files written ahead of a state that never came) are
     * returned to be abandoned.
     */
    async freeVersionsIn(tx: Transaction | null, wanted: { role: string; version: number }[]): Promise<FreeVersions> {
      const versions = new Map(wanted.map((file) => [file.role, file.version]));
      const skipped: { role: string; version: number }[] = [];
      let asking = wanted;
      while (asking.length > 0) {
        const refs = asking.map((file) => fileRef(file.role, file.version));
        const snapshots = tx ? await tx.getAll(...refs) : await db.getAll(...refs);
        asking = asking.filter((_, index) => snapshots[index].exists).map((file) => ({ role: file.role, version: file.version + 1 }));
        for (const file of asking) {
          skipped.push({ role: file.role, version: file.version - 1 });
          versions.set(file.role, file.version);
        }
      }
      return { versions, skipped };
    },
    /** A new versioned file. Created, never overwritten: a second writer of the version fails (ALREADY_EXISTS). */
    writeFile(writer: Transaction | WriteBatch, file: MetadataFile, at: Date): void {
      (writer as WriteBatch).create(fileRef(file.role, file.version), { ...file, createdAt: Timestamp.fromDate(at) });
    },
    /** A file of a repository that has no state yet (initialisation): nothing was ever served, so what an aborted one left is written over. */
    writeUnservedFile(writer: WriteBatch, file: MetadataFile, at: Date): void {
      writer.set(fileRef(file.role, file.version), { ...file, createdAt: Timestamp.fromDate(at) });
    },
    /** A file written ahead of a state that never came: never to be served. */
    abandonFile(writer: Transaction | WriteBatch, role: string, version: number, at: Date): void {
      (writer as WriteBatch).update(fileRef(role, version), { abandoned: true, expireAt: Timestamp.fromMillis(at.getTime() + 2 * 24 * 3_600_000) });
    },
    /** A file that a newer version superseded at `at`: removed once `keptMs` passed. */
    retireFile(writer: Transaction | WriteBatch, role: string, version: number, at: Date, keptMs: number): void {
      (writer as WriteBatch).update(fileRef(role, version), { expireAt: Timestamp.fromMillis(at.getTime() + keptMs) });
    },
    putState(writer: Transaction | WriteBatch, state: RepositoryState, at: Date): void {
      (writer as WriteBatch).set(stateRef, {
        root: state.root,
        targets: state.targets,
        snapshot: state.snapshot,
        timestamp: state.timestamp,
        bins: JSON.stringify(Object.fromEntries(Object.entries(state.bins).map(([name, bin]) => [name, [bin.version, bin.expires]]))),
        onlineKeyId: state.onlineKeyId,
        rotatingSince: state.rotatingSince ? Timestamp.fromDate(state.rotatingSince) : null,
        updatedAt: Timestamp.fromDate(at),
      });
    },
    /** The UTC day (YYYY-MM-DD) the operators were last warned of an expiry (`registry/tufExpiryWarning`). */
    async warnedDayIn(tx: Transaction): Promise<string | null> {
      const snapshot = await tx.get(warningRef);
      return (snapshot.get("day") as string | undefined) ?? null;
    },
    setWarnedDayIn(tx: Transaction, day: string, at: Date): void {
      tx.set(warningRef, { day, at: Timestamp.fromDate(at) });
    },
    /** Ends a rotation that failed: changes go on with the keys the repository still names. */
    async unlock(): Promise<void> {
      await stateRef.update({ rotatingSince: null });
    },
    fileRef: (role: string, version: number): DocumentReference => fileRef(role, version),
  };
});
