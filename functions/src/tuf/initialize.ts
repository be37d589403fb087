import type { TargetFile } from "@tufjs/models";
import { catalogChanges } from "../core/catalog-changes";
import { withinDeadline } from "../core/deadline";
import type { TufSigner } from "../core/tuf-keys";
import { moduleStore, type ModuleRecord } from "../marketplace/module-store";
import { binMetadata, rootMetadata, sealed, snapshotMetadata, targetsMetadata, timestampMetadata, type RootKeys } from "./metadata";
import { TUF_TOPIC, versionsOf, writeUnnamedFiles, type TufDeps } from "./online-roles";
import { tufRepositoryStore, type MetadataFile, type RepositoryState } from "./repository-store";
import { binNames, binOf, expiryFrom, isListedTarget, ROOT_KEY_COUNT, targetFileOf } from "./rules";
import { pendingCount, statusOf, type RepositoryStatus } from "./status";

/** Making the TUF repository (§23): once, from the catalog's published versions. */

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
