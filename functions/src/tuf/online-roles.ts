import { Metadata, MetadataKind, type Root, type TargetFile } from "@tufjs/models";
import type { Transaction } from "firebase-admin/firestore";
import { catalogChanges } from "../core/catalog-changes";
import { withinDeadline } from "../core/deadline";
import type { TufSigner } from "../core/tuf-keys";
import type { Deps } from "../deps";
import { binMetadata, sealed, snapshotMetadata, timestampMetadata } from "./metadata";
import { tufRepositoryStore, type FreeVersions, type MetadataFile, type RepositoryState, type RoleStamp } from "./repository-store";
import { expiryFrom, SUPERSEDED_KEPT_MS } from "./rules";

/**
 * The TUF repository of modules (contract §23): what every change shares. The repository is made
 * once (initialize.ts), changed as versions are published and revoked and kept fresh (changes.ts),
 * re-keyed by the operators' rotations (rotation.ts), reported (status.ts) and served
 * (serving.ts). Every change is one Firestore transaction over `registry/tuf`, which writes new
 * versions of the files it changes and never rewrites a served one.
 */

export type TufDeps = Pick<Deps, "db" | "clock" | "logger"> & { tufOnlineSigners: TufSigner[] };

/** The catalog-change topic of the repository: instances keep metadata in memory under it. */
export const TUF_TOPIC = "tuf";

/**
 * Bins written per transaction or batch: a commit holds at most 10 MiB, and a bin at 50,000
 * modules × 10 versions is up to 140 KiB (npm run bench -- --tuf), so 32 of them stay under 5 MiB.
 */
export const BINS_PER_COMMIT = 32;

export const parseRoot = (json: string) => Metadata.fromJSON(MetadataKind.Root, JSON.parse(json)) as Metadata<Root>;
export const versionsOf = (bins: Record<string, RoleStamp>) => Object.fromEntries(Object.entries(bins).map(([name, bin]) => [name, bin.version]));

export class TufNotReadyError extends Error {}

/** The online signer the repository names now, from those this instance holds (TUF_ONLINE_KEY). */
export function onlineSignerFor(state: RepositoryState, signers: TufSigner[]): TufSigner {
  const signer = signers.find((candidate) => candidate.keyId === state.onlineKeyId);
  if (!signer) throw new TufNotReadyError(`TUF_ONLINE_KEY holds no key with the id the repository names (${state.onlineKeyId.slice(0, 16)}…): changes wait until it does.`);
  return signer;
}

interface OnlineChange {
  files: MetadataFile[];
  retired: { role: string; version: number }[];
  abandoned: { role: string; version: number }[];
  state: RepositoryState;
}

/** The roles a change writes new versions of, from the version after the state's (nextOnlineRoles takes the free ones). */
export const nextVersionsWanted = (state: RepositoryState, bins: Iterable<string>, snapshot: boolean) => [
  ...[...bins].map((name) => ({ role: name, version: state.bins[name].version + 1 })),
  ...(snapshot ? [{ role: "snapshot", version: state.snapshot.version + 1 }] : []),
];

/**
 * New versions of the given bins (with their targets), and a new snapshot and timestamp; with no
 * bins, a new snapshot only when `snapshot` asks for one, and a new timestamp. Each new file takes
 * the version `free` found for it (the next one, unless an abandoned file holds it).
 */
export function nextOnlineRoles(state: RepositoryState, bins: Map<string, TargetFile[]>, options: { snapshot: boolean }, signer: TufSigner, now: Date, free: FreeVersions): OnlineChange {
  const files: MetadataFile[] = [];
  const retired: { role: string; version: number }[] = [];
  const nextBins = { ...state.bins };
  const versionOf = (role: string, current: number) => free.versions.get(role) ?? current + 1;
  for (const [name, targets] of bins) {
    const bin = { version: versionOf(name, state.bins[name].version), expires: expiryFrom(now, "bins") };
    files.push({ role: name, version: bin.version, json: sealed(binMetadata(bin.version, targets, bin.expires), [signer]) });
    retired.push({ role: name, version: state.bins[name].version });
    nextBins[name] = bin;
  }
  let snapshot = state.snapshot;
  if (bins.size > 0 || options.snapshot) {
    snapshot = { version: versionOf("snapshot", state.snapshot.version), expires: expiryFrom(now, "snapshot") };
    files.push({ role: "snapshot", version: snapshot.version, json: sealed(snapshotMetadata(snapshot.version, { targets: state.targets.version, ...versionsOf(nextBins) }, snapshot.expires), [signer]) });
    retired.push({ role: "snapshot", version: state.snapshot.version });
  }
  const timestamp = { version: state.timestamp.version + 1, expires: expiryFrom(now, "timestamp") };
  const json = sealed(timestampMetadata(timestamp.version, snapshot.version, timestamp.expires), [signer]);
  return { files, retired, abandoned: free.skipped, state: { ...state, bins: nextBins, snapshot, timestamp: { ...timestamp, json } } };
}

/** Writes a change read in `tx`: the new files, the superseded ones' expiry, the abandoned ones, the state, the catalog-change entry. */
export function writeChange(deps: TufDeps, tx: Transaction, change: OnlineChange, now: Date): void {
  const store = tufRepositoryStore(deps.db);
  for (const file of change.files) store.writeFile(tx, file, now);
  for (const file of change.retired) store.retireFile(tx, file.role, file.version, now, SUPERSEDED_KEPT_MS);
  for (const file of change.abandoned) store.abandonFile(tx, file.role, file.version, now);
  store.putState(tx, change.state, now);
  catalogChanges(deps.db).record(tx, [TUF_TOPIC]);
}

/**
 * Writes files under versions nothing names yet (the state names them after), a commit's worth at
 * a time. `before the first state`: at initialisation, where no file was ever served, what an
 * aborted initialisation left is written over; otherwise each file is created, never overwritten.
 */
export async function writeUnnamedFiles(deps: TufDeps, files: MetadataFile[], now: Date, options: { beforeFirstState: boolean }): Promise<void> {
  const store = tufRepositoryStore(deps.db);
  for (let start = 0; start < files.length; start += BINS_PER_COMMIT) {
    const batch = deps.db.batch();
    for (const file of files.slice(start, start + BINS_PER_COMMIT)) {
      if (options.beforeFirstState) store.writeUnservedFile(batch, file, now);
      else store.writeFile(batch, file, now);
    }
    await withinDeadline("Firestore (tuf)", batch.commit());
  }
}
