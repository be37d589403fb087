import { Metadata, MetadataKind, type Root, type TargetFile } from "@tufjs/models";
import type { Transaction } from "firebase-admin/firestore";
import { catalogCache, catalogChanges } from "../core/catalog-changes";
import { withinDeadline } from "../core/deadline";
import { eventOutbox } from "../core/event-outbox";
import type { Deps } from "../deps";
import { moduleStore, type ModuleRecord, type VersionRecord } from "../marketplace/module-store";
import type { TufSigner } from "../core/tuf-keys";
import { binMetadata, binTargets, keysOf, rootMetadata, sealed, snapshotMetadata, targetsMetadata, timestampMetadata, type RootKeys } from "./metadata";
import { isRotating, tufRepositoryStore, type FreeVersions, type MetadataFile, type RepositoryState, type RoleStamp } from "./repository-store";
import { binNames, binOf, dueForResign, expiryFrom, expiryWarnings, expiryWarningText, isListedTarget, ROOT_KEY_COUNT, SUPERSEDED_KEPT_MS, targetFileOf, targetPath } from "./rules";

/**
 * The TUF repository of modules (contract §23): made once by `initializeRepository`, changed by
 * `applyTargetChanges` as versions are published and revoked, kept fresh by `resignOnlineRoles`,
 * and re-keyed by the rotations. Every change is one Firestore transaction over `registry/tuf`,
 * which writes new versions of the files it changes and never rewrites a served one.
 */

export type TufDeps = Pick<Deps, "db" | "clock" | "logger"> & { tufOnlineSigners: TufSigner[] };

/** The catalog-change topic of the repository: instances keep metadata in memory under it. */
export const TUF_TOPIC = "tuf";

/**
 * Bins written per transaction or batch: a commit holds at most 10 MiB, and a bin at 50,000
 * modules × 10 versions is up to 140 KiB (npm run bench -- --tuf), so 32 of them stay under 5 MiB.
 */
const BINS_PER_COMMIT = 32;

const parseRoot = (json: string) => Metadata.fromJSON(MetadataKind.Root, JSON.parse(json)) as Metadata<Root>;
const versionsOf = (bins: Record<string, RoleStamp>) => Object.fromEntries(Object.entries(bins).map(([name, bin]) => [name, bin.version]));

export class TufNotReadyError extends Error {}

/** The online signer the repository names now, from those this instance holds (TUF_ONLINE_KEY). */
function onlineSignerFor(state: RepositoryState, signers: TufSigner[]): TufSigner {
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
const nextVersionsWanted = (state: RepositoryState, bins: Iterable<string>, snapshot: boolean) => [
  ...[...bins].map((name) => ({ role: name, version: state.bins[name].version + 1 })),
  ...(snapshot ? [{ role: "snapshot", version: state.snapshot.version + 1 }] : []),
];

/**
 * New versions of the given bins (with their targets), and a new snapshot and timestamp; with no
 * bins, a new snapshot only when `snapshot` asks for one, and a new timestamp. Each new file takes
 * the version `free` found for it (the next one, unless an abandoned file holds it).
 */
function nextOnlineRoles(state: RepositoryState, bins: Map<string, TargetFile[]>, options: { snapshot: boolean }, signer: TufSigner, now: Date, free: FreeVersions): OnlineChange {
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
function writeChange(deps: TufDeps, tx: Transaction, change: OnlineChange, now: Date): void {
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
async function writeUnnamedFiles(deps: TufDeps, files: MetadataFile[], now: Date, options: { beforeFirstState: boolean }): Promise<void> {
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

// ---------------------------------------------------------------------------------------------
// Initialising

export interface OfflineSigners {
  /** At least ROOT_THRESHOLD of the root keys. */
  root: TufSigner[];
  targets: TufSigner;
}

/** Every version that is a target now, read from the catalog (at initialisation only). */
async function currentTargets(deps: TufDeps): Promise<TargetFile[]> {
  const modules = moduleStore(deps.db);
  const versions = (await modules.publishedVersions()).filter((version) => !version.revocation);
  const ids = [...new Set(versions.map((version) => version.moduleId))];
  const owners = new Map((await modules.getModules(ids)).filter((module): module is ModuleRecord => module !== null).map((module) => [module.id, module]));
  return versions
    .filter((version) => owners.has(version.moduleId) && isListedTarget(version, owners.get(version.moduleId)!))
    .map((version) => targetFileOf({ ...version, publisherId: owners.get(version.moduleId)!.publisherId }));
}

/**
 * The first root, targets, every bin (with the catalog's current targets), snapshot and
 * timestamp; the state is written last, in a transaction that finds none, so a repository is
 * served only whole. Null when there is one already.
 */
export async function initializeRepository(deps: TufDeps, keys: { root: TufSigner[]; targets: TufSigner; online: TufSigner }): Promise<RepositoryStatus | null> {
  if (keys.root.length !== ROOT_KEY_COUNT) throw new Error(`A root needs ${ROOT_KEY_COUNT} keys.`);
  const store = tufRepositoryStore(deps.db);
  if (await store.state()) return null;
  const now = deps.clock();
  const byBin = new Map<string, TargetFile[]>(binNames().map((name) => [name, []]));
  for (const target of await currentTargets(deps)) byBin.get(binOf(target.path))!.push(target);
  const rootKeys: RootKeys = { root: keys.root.map((signer) => signer.key), targets: [keys.targets.key], online: [keys.online.key] };
  const binExpires = expiryFrom(now, "bins");
  const files: MetadataFile[] = [
    { role: "root", version: 1, json: sealed(rootMetadata(1, rootKeys, now), keys.root) },
    { role: "targets", version: 1, json: sealed(targetsMetadata(1, rootKeys.online, now), [keys.targets]) },
    ...[...byBin].map(([name, targets]) => ({ role: name, version: 1, json: sealed(binMetadata(1, targets, binExpires), [keys.online]) })),
  ];
  const bins = Object.fromEntries(binNames().map((name) => [name, { version: 1, expires: binExpires }]));
  const snapshot = { version: 1, expires: expiryFrom(now, "snapshot") };
  files.push({ role: "snapshot", version: 1, json: sealed(snapshotMetadata(1, { targets: 1, ...versionsOf(bins) }, snapshot.expires), [keys.online]) });
  const timestamp = { version: 1, expires: expiryFrom(now, "timestamp") };
  const state: RepositoryState = {
    root: { version: 1, expires: expiryFrom(now, "root") },
    targets: { version: 1, expires: expiryFrom(now, "targets") },
    snapshot,
    timestamp: { ...timestamp, json: sealed(timestampMetadata(1, 1, timestamp.expires), [keys.online]) },
    bins,
    onlineKeyId: keys.online.keyId,
    rotatingSince: null,
  };
  await writeUnnamedFiles(deps, files, now, { beforeFirstState: true });
  const created = await withinDeadline(
    "Firestore (tuf init)",
    deps.db.runTransaction(async (tx) => {
      if (await store.stateIn(tx)) return false;
      store.putState(tx, state, now);
      catalogChanges(deps.db).record(tx, [TUF_TOPIC]);
      return true;
    }),
  );
  if (!created) return null;
  catalogChanges(deps.db).applied([TUF_TOPIC]);
  return statusOf(state, await pendingCount(deps), now);
}

// ---------------------------------------------------------------------------------------------
// Following the catalog

/**
 * Brings the targets of the versions these outbox events name (publish, revoke, unrevoke) to what
 * the catalog says now, in one transaction: the bins that changed get new versions, with a new
 * snapshot and timestamp; when nothing changed (a repeat, an event another instance applied
 * already) nothing new is written. Then the events are marked done. The transaction reads what
 * is true now, not the events, so taking an event twice is harmless, and it leaves the event
 * documents to the webhooks' fan-out, which updates them at the same moment (both in one
 * transaction stalled each other for seconds). Events wait (stay pending) while the repository
 * is not initialised or a rotation is under way.
 */
export async function applyTargetChanges(deps: TufDeps, eventIds: string[]): Promise<{ applied: number; changedBins: number }> {
  const outbox = eventOutbox(deps.db);
  const modules = moduleStore(deps.db);
  const store = tufRepositoryStore(deps.db);
  const events = (await withinDeadline("Firestore (tuf)", deps.db.getAll(...eventIds.map((id) => outbox.ref(id))))).map((snapshot) => outbox.read(snapshot)).filter((event) => event?.tufPending);
  if (events.length === 0) return { applied: 0, changedBins: 0 };
  const result = await withinDeadline(
    "Firestore (tuf)",
    deps.db.runTransaction(async (tx) => {
      const state = await store.stateIn(tx);
      const now = deps.clock();
      if (!state || isRotating(state, now)) return { applied: 0, changedBins: 0 };
      const signer = onlineSignerFor(state, deps.tufOnlineSigners);
      // What the catalog says now about every version the events name, by bin and path.
      const wanted = new Map<string, Map<string, TargetFile | null>>();
      const byModule = new Map<string, Set<string> | "all">();
      for (const event of events) {
        const moduleId = String(event!.data.moduleId);
        const version = event!.data.version;
        const known = byModule.get(moduleId);
        if (typeof version !== "string") byModule.set(moduleId, "all");
        else if (known !== "all") byModule.set(moduleId, (known ?? new Set()).add(version));
      }
      for (const [moduleId, versions] of byModule) {
        const module = modules.readModule(await tx.get(modules.moduleRef(moduleId)));
        const records: (VersionRecord | null)[] =
          versions === "all" ? await modules.versionsIn(tx, moduleId) : (await tx.getAll(...[...versions].map((version) => modules.versionRef(moduleId, version)))).map((snapshot) => modules.readVersion(snapshot));
        for (const record of records) {
          if (!record) continue;
          const path = targetPath(moduleId, record.version);
          const bin = binOf(path);
          if (!wanted.has(bin)) wanted.set(bin, new Map());
          wanted.get(bin)!.set(path, module && isListedTarget(record, module) ? targetFileOf({ ...record, publisherId: module.publisherId }) : null);
        }
      }
      const touched = [...wanted.keys()];
      const current = await store.filesIn(tx, touched.map((name) => ({ role: name, version: state.bins[name].version })));
      const changed = new Map<string, TargetFile[]>();
      touched.forEach((name, index) => {
        const targets = new Map(binTargets(current[index]!).map((target) => [target.path, target]));
        let differs = false;
        for (const [path, target] of wanted.get(name)!) {
          const before = targets.get(path);
          if (target && !(before && before.equals(target))) {
            targets.set(path, target);
            differs = true;
          } else if (!target && before) {
            targets.delete(path);
            differs = true;
          }
        }
        if (differs) changed.set(name, [...targets.values()]);
      });
      if (changed.size > 0) {
        const free = await store.freeVersionsIn(tx, nextVersionsWanted(state, changed.keys(), true));
        writeChange(deps, tx, nextOnlineRoles(state, changed, { snapshot: true }, signer, now, free), now);
      }
      return { applied: events.length, changedBins: changed.size };
    }),
  );
  if (result.changedBins > 0) catalogChanges(deps.db).applied([TUF_TOPIC]);
  if (result.applied > 0) await withinDeadline("Firestore (tuf)", outbox.markTufApplied(events.map((event) => event!.id)));
  return result;
}

async function pendingCount(deps: Pick<TufDeps, "db">): Promise<number> {
  return eventOutbox(deps.db).tufPendingCount();
}

// ---------------------------------------------------------------------------------------------
// Re-signing

/**
 * Re-signs the online roles: with `all`, timestamp, snapshot and every bin, each with a new
 * version and a fresh expiry (`tuf resign`); otherwise only what expires within half its period
 * (the scheduled re-sign). Bins go 32 to a transaction, each one a consistent repository.
 */
export async function resignOnlineRoles(deps: TufDeps, options: { all: boolean }): Promise<{ bins: number; snapshot: boolean; timestamp: boolean } | null> {
  const store = tufRepositoryStore(deps.db);
  const done = new Set<string>();
  const outcome = { bins: 0, snapshot: false, timestamp: false };
  for (;;) {
    const step = await withinDeadline(
      "Firestore (tuf resign)",
      deps.db.runTransaction(async (tx) => {
        const state = await store.stateIn(tx);
        if (!state) return null;
        const now = deps.clock();
        if (isRotating(state, now)) throw new TufNotReadyError("A key rotation is under way: re-sign when it is done.");
        const signer = onlineSignerFor(state, deps.tufOnlineSigners);
        const chunk = Object.entries(state.bins)
          .filter(([name, bin]) => !done.has(name) && (options.all || dueForResign(bin.expires, "bins", now)))
          .slice(0, BINS_PER_COMMIT)
          .map(([name]) => name);
        const first = done.size === 0;
        const snapshot = chunk.length > 0 || (first && (options.all || dueForResign(state.snapshot.expires, "snapshot", now)));
        const timestamp = snapshot || (first && (options.all || dueForResign(state.timestamp.expires, "timestamp", now)));
        if (!timestamp) return { chunk, snapshot, timestamp };
        const current = await store.filesIn(tx, chunk.map((name) => ({ role: name, version: state.bins[name].version })));
        const bins = new Map(chunk.map((name, index) => [name, binTargets(current[index]!)]));
        const free = await store.freeVersionsIn(tx, nextVersionsWanted(state, chunk, snapshot));
        writeChange(deps, tx, nextOnlineRoles(state, bins, { snapshot }, signer, now, free), now);
        return { chunk, snapshot, timestamp };
      }),
    );
    if (!step) return null;
    if (step.timestamp) catalogChanges(deps.db).applied([TUF_TOPIC]);
    step.chunk.forEach((name) => done.add(name));
    outcome.bins += step.chunk.length;
    outcome.snapshot ||= step.snapshot;
    outcome.timestamp ||= step.timestamp;
    if (step.chunk.length === 0) return outcome;
  }
}

// ---------------------------------------------------------------------------------------------
// Rotating keys (the operators' ceremony)

/** The current root, and the root signers given that it names: at least its threshold of them. */
async function currentRoot(deps: TufDeps, rootSigners: TufSigner[]) {
  const store = tufRepositoryStore(deps.db);
  const state = await store.state();
  if (!state) throw new Error("The TUF repository is not initialised: run `tuf init` first.");
  const root = parseRoot((await store.file("root", state.root.version))!);
  const named = rootSigners.filter((signer) => root.signed.roles.root.keyIDs.includes(signer.keyId));
  if (named.length < root.signed.roles.root.threshold) {
    throw new Error(`The root keys given include ${named.length} of the current root's (${root.signed.roles.root.threshold} needed): pass the current root keys' folder.`);
  }
  return { state, root, rootKeys: keysOf(root.signed), named };
}

export type RotatedRole = "root" | "targets" | "online";

/**
 * A new root version that names new keys for `role`, signed by the current root keys (at least
 * their threshold) and, for a new root, by the new ones too, so that clients walk from the old
 * root to the new. A new targets key re-signs targets; a new online key re-signs targets (its
 * delegation), every bin, snapshot and timestamp, while changes wait.
 */
export async function rotateKeys(
  deps: TufDeps,
  role: RotatedRole,
  keys: { currentRoot: TufSigner[]; targets?: TufSigner; next: TufSigner[] },
): Promise<RepositoryStatus> {
  const store = tufRepositoryStore(deps.db);
  const { state, rootKeys, named } = await currentRoot(deps, keys.currentRoot);
  const now = deps.clock();
  const nextKeys: RootKeys = {
    root: role === "root" ? keys.next.map((signer) => signer.key) : rootKeys.root,
    targets: role === "targets" ? keys.next.map((signer) => signer.key) : rootKeys.targets,
    online: role === "online" ? keys.next.map((signer) => signer.key) : rootKeys.online,
  };
  if (role === "root" && keys.next.length !== ROOT_KEY_COUNT) throw new Error(`A root needs ${ROOT_KEY_COUNT} keys.`);
  if (role !== "root" && keys.next.length !== 1) throw new Error("A new targets or online role takes one key.");
  const rootVersion = state.root.version + 1;
  const rootFile: MetadataFile = { role: "root", version: rootVersion, json: sealed(rootMetadata(rootVersion, nextKeys, now), role === "root" ? [...named, ...keys.next] : named) };
  const root = { version: rootVersion, expires: expiryFrom(now, "root") };

  if (role === "root") {
    await deps.db.runTransaction(async (tx) => {
      const latest = await store.stateIn(tx);
      if (latest?.root.version !== state.root.version) throw new Error("The root changed meanwhile: run the rotation again.");
      store.writeFile(tx, rootFile, now);
      store.putState(tx, { ...latest, root }, now);
      catalogChanges(deps.db).record(tx, [TUF_TOPIC]);
    });
  } else {
    const targetsSigner = role === "targets" ? keys.next[0] : keys.targets;
    if (!targetsSigner || !nextKeys.targets.some((key) => key.keyID === targetsSigner.keyId)) throw new Error("Pass the targets key the root names (--keys holds targets.pem).");
    const online = role === "online" ? keys.next[0] : onlineSignerFor(state, deps.tufOnlineSigners);
    const targetsVersion = state.targets.version + 1;
    const targetsFile: MetadataFile = { role: "targets", version: targetsVersion, json: sealed(targetsMetadata(targetsVersion, nextKeys.online, now), [targetsSigner]) };
    // While the online key changes, every bin is re-signed: changes wait, and resume after.
    if (role === "online") {
      await deps.db.runTransaction(async (tx) => {
        const latest = await store.stateIn(tx);
        if (!latest || isRotating(latest, now)) throw new Error("A rotation is under way already.");
        store.putState(tx, { ...latest, rotatingSince: now }, now);
      });
    }
    try {
      const locked = (await store.state())!;
      const bins = new Map<string, TargetFile[]>();
      if (role === "online") {
        for (const [name, bin] of Object.entries(locked.bins)) bins.set(name, binTargets((await store.file(name, bin.version))!));
      }
      // Versions no file holds yet: an earlier rotation that failed may have left some ahead of the state.
      const free = await store.freeVersionsIn(null, nextVersionsWanted(locked, bins.keys(), true));
      const change = nextOnlineRoles({ ...locked, targets: { version: targetsVersion, expires: expiryFrom(now, "targets") } }, bins, { snapshot: true }, online, now, free);
      // The re-signed bins first.
      await writeUnnamedFiles(deps, change.files.filter((file) => file.role !== "snapshot"), now, { beforeFirstState: false });
      await deps.db.runTransaction(async (tx) => {
        const latest = await store.stateIn(tx);
        if (latest?.root.version !== state.root.version || latest.snapshot.version !== locked.snapshot.version) throw new Error("The repository changed meanwhile: run the rotation again.");
        for (const file of [rootFile, targetsFile, ...change.files.filter((file) => file.role === "snapshot")]) store.writeFile(tx, file, now);
        for (const file of [{ role: "targets", version: state.targets.version }, ...change.retired]) store.retireFile(tx, file.role, file.version, now, SUPERSEDED_KEPT_MS);
        for (const file of change.abandoned) store.abandonFile(tx, file.role, file.version, now);
        store.putState(tx, { ...change.state, root, onlineKeyId: online.keyId, rotatingSince: null }, now);
        catalogChanges(deps.db).record(tx, [TUF_TOPIC]);
      });
    } catch (error) {
      if (role === "online") await store.unlock();
      throw error;
    }
  }
  catalogChanges(deps.db).applied([TUF_TOPIC]);
  return repositoryStatus(deps);
}

// ---------------------------------------------------------------------------------------------
// Status

export interface RepositoryStatus {
  root: RoleStamp;
  targets: RoleStamp;
  snapshot: RoleStamp;
  timestamp: RoleStamp;
  bins: { count: number; lowestVersion: number; highestVersion: number; firstExpires: string };
  onlineKeyId: string;
  rotating: boolean;
  /** Changes recorded in the outbox that the repository has not taken yet. */
  pendingChanges: number;
  /** Root or targets expiring within 30 days (or expired): renew them with `tuf rotate`. */
  warnings: string[];
}

function statusOf(state: RepositoryState, pending: number, now: Date): RepositoryStatus {
  const bins = Object.values(state.bins);
  return {
    root: state.root,
    targets: state.targets,
    snapshot: state.snapshot,
    timestamp: { version: state.timestamp.version, expires: state.timestamp.expires },
    bins: {
      count: bins.length,
      lowestVersion: Math.min(...bins.map((bin) => bin.version)),
      highestVersion: Math.max(...bins.map((bin) => bin.version)),
      firstExpires: bins.map((bin) => bin.expires).sort()[0],
    },
    onlineKeyId: state.onlineKeyId,
    rotating: state.rotatingSince !== null,
    pendingChanges: pending,
    warnings: expiryWarnings(state, now).map(expiryWarningText),
  };
}

export async function repositoryStatus(deps: Pick<TufDeps, "db" | "clock">): Promise<RepositoryStatus> {
  const state = await tufRepositoryStore(deps.db).state();
  if (!state) throw new Error("The TUF repository is not initialised: run `tuf init` first.");
  return statusOf(state, await pendingCount(deps), deps.clock());
}

// ---------------------------------------------------------------------------------------------
// Serving

/**
 * The files under tuf/metadata/, kept in this instance's memory under the repository's catalog
 * topic: a versioned file never changes once written, and `timestamp.json` and any file not yet
 * written are read again once a change moved the topic (within the feed's 2 s on every
 * instance, at once on the one that made it) and never kept longer than `ttlMs`.
 */
export function metadataReader(deps: Pick<Deps, "db">, ttlMs: number) {
  const store = tufRepositoryStore(deps.db);
  const files = catalogCache<string | null>(deps.db, { ttlMs, maxEntries: 512 });
  const states = catalogCache<RepositoryState | null>(deps.db, { ttlMs, maxEntries: 1 });
  const state = () => states.get("state", TUF_TOPIC, () => store.state());
  return {
    timestamp: async () => (await state())?.timestamp.json ?? null,
    // Only what a committed state names (its version or an older one) is served, and so cached as immutable.
    versioned: async (role: string, version: number) => {
      const current = await state();
      return current ? files.get(`${version}.${role}`, TUF_TOPIC, () => store.servedFile(current, role, version)) : null;
    },
  };
}
