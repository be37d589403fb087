import type { TargetFile } from "@tufjs/models";
import { catalogChanges } from "../core/catalog-changes";
import type { TufSigner } from "../core/tuf-keys";
import { binTargets, keysOf, rootMetadata, sealed, targetsMetadata, type RootKeys } from "./metadata";
import { nextOnlineRoles, nextVersionsWanted, onlineSignerFor, parseRoot, TUF_TOPIC, writeUnnamedFiles, type TufDeps } from "./online-roles";
import { isRotating, tufRepositoryStore, type MetadataFile } from "./repository-store";
import { expiryFrom, ROOT_KEY_COUNT, SUPERSEDED_KEPT_MS } from "./rules";
import { repositoryStatus, type RepositoryStatus } from "./status";

/** Rotating the TUF repository's keys (§23): the operators' ceremony. */

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
