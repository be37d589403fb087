import { Metadata, MetaFile, Root, Snapshot, Targets, Timestamp, TargetFile, type Key } from "@tufjs/models";
import { canonicalize } from "@tufjs/canonical-json";
import type { TufSigner } from "../core/tuf-keys";
import { binDelegationJson, expiryFrom, ROOT_THRESHOLD, SPEC_VERSION } from "./rules";

/** A role's JSON as the package writes it (its type is not re-exported by the package index). */
type JSONObject = ReturnType<Snapshot["toJSON"]>;

/**
 * Each role's metadata, built with `@tufjs/models` and signed: root (offline, 2 of 3), targets
 * (offline, delegating every target to the bins), the bins, snapshot and timestamp (online).
 */

export interface RootKeys {
  root: Key[];
  targets: Key[];
  online: Key[];
}

const keyMap = (keys: Key[]) => Object.fromEntries(keys.map((key) => [key.keyID, key.toJSON()]));
const roleJson = (keys: Key[], threshold: number) => ({ keyids: keys.map((key) => key.keyID), threshold });

/**
 * `@tufjs/models` 5 serialises a snapshot's meta and a targets role's targets by spreading the
 * accumulator at every entry, which is quadratic: 200 ms for a snapshot of 1,025 entries, seconds
 * for a bin of a few thousand targets. These subclasses write the same JSON in linear time.
 */
const mapJson = <V extends { toJSON(): JSONObject }>(entries: Record<string, V>) => Object.fromEntries(Object.entries(entries).map(([name, value]) => [name, value.toJSON()]));

class LinearSnapshot extends Snapshot {
  toJSON(): JSONObject {
    return { _type: this.type, meta: mapJson(this.meta), spec_version: this.specVersion, version: this.version, expires: this.expires, ...this.unrecognizedFields };
  }
}

class LinearTargets extends Targets {
  toJSON(): JSONObject {
    return {
      _type: this.type,
      spec_version: this.specVersion,
      version: this.version,
      expires: this.expires,
      targets: mapJson(this.targets),
      ...this.unrecognizedFields,
      ...(this.delegations ? { delegations: this.delegations.toJSON() } : {}),
    };
  }
}

/** The targets of a bin file, read in linear time (the library's fromJSON is quadratic, as above). */
export function binTargets(json: string): TargetFile[] {
  const targets = (JSON.parse(json) as { signed: { targets: Record<string, JSONObject> } }).signed.targets;
  return Object.entries(targets).map(([path, target]) => TargetFile.fromJSON(path, target));
}

/**
 * Root and targets are built from their JSON (`fromJSON`): the package index does not export the
 * Role and Delegations classes their constructors take.
 */
export function rootMetadata(version: number, keys: RootKeys, now: Date): Metadata<Root> {
  const online = roleJson(keys.online, 1);
  return new Metadata(
    Root.fromJSON({
      _type: "root",
      spec_version: SPEC_VERSION,
      version,
      expires: expiryFrom(now, "root"),
      consistent_snapshot: true,
      keys: keyMap([...keys.root, ...keys.targets, ...keys.online]),
      roles: { root: roleJson(keys.root, ROOT_THRESHOLD), targets: roleJson(keys.targets, 1), snapshot: online, timestamp: online },
    }),
  );
}

/** The keys a root names for each role. */
export function keysOf(root: Root): RootKeys {
  const of = (role: string) => root.roles[role].keyIDs.map((id) => root.keys[id]);
  return { root: of("root"), targets: of("targets"), online: of("timestamp") };
}

/** `targets`: no target of its own; every target delegated by hash to the bins, signed by the online keys. */
export function targetsMetadata(version: number, online: Key[], now: Date): Metadata<Targets> {
  const ids = online.map((key) => key.keyID);
  return new Metadata(
    Targets.fromJSON({ _type: "targets", spec_version: SPEC_VERSION, version, expires: expiryFrom(now, "targets"), targets: {}, delegations: { keys: keyMap(online), succinct_roles: binDelegationJson(ids) } }),
  );
}

export function binMetadata(version: number, targets: TargetFile[], expires: string): Metadata<Targets> {
  const sorted = [...targets].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return new Metadata(new LinearTargets({ version, specVersion: SPEC_VERSION, expires, targets: Object.fromEntries(sorted.map((target) => [target.path, target])) }));
}

/** `snapshot`: the version of targets.json and of every bin. */
export function snapshotMetadata(version: number, versions: Record<string, number>, expires: string): Metadata<Snapshot> {
  return new Metadata(
    new LinearSnapshot({ version, specVersion: SPEC_VERSION, expires, meta: Object.fromEntries(Object.entries(versions).map(([role, roleVersion]) => [`${role}.json`, new MetaFile({ version: roleVersion })])) }),
  );
}

export function timestampMetadata(version: number, snapshotVersion: number, expires: string): Metadata<Timestamp> {
  return new Metadata(new Timestamp({ version, specVersion: SPEC_VERSION, expires, snapshotMeta: new MetaFile({ version: snapshotVersion }) }));
}

/** The file as served: the metadata signed by each signer, compact JSON; the role is serialised once. */
export function sealed(metadata: Metadata<Root | Targets | Snapshot | Timestamp>, signers: TufSigner[]): string {
  const signed = metadata.signed.toJSON();
  const bytes = Buffer.from(canonicalize(signed));
  return JSON.stringify({ signatures: signers.map((signer) => signer.sign(bytes).toJSON()), signed });
}
