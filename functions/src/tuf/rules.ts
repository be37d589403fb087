import { Targets, TargetFile } from "@tufjs/models";
import semver from "semver";
import { DAY_MS } from "../core/time";

/**
 * The TUF repository's rules (contract §23, PEP 458's split of roles), with no I/O: the roles and
 * their lifetimes, the succinct hash bins, the target of a module version and the file names of
 * consistent snapshots.
 */

export const SPEC_VERSION = "1.0.31";

/** 2^10 = 1,024 bins: at 500,000 targets a bin holds about 500 (≈ 120 KB), the snapshot lists 1,024 (≈ 30 KB). */
export const BIN_BIT_LENGTH = 10;
export const BIN_PREFIX = "bins";

export const ONLINE_ROLES = ["timestamp", "snapshot", "bins"] as const;
export const ROOT_THRESHOLD = 2;
export const ROOT_KEY_COUNT = 3;

/** How long each role's metadata is valid when signed. */
export const LIFETIME_MS = { root: 365 * DAY_MS, targets: 365 * DAY_MS, snapshot: 7 * DAY_MS, bins: 7 * DAY_MS, timestamp: DAY_MS } as const;
export type LifetimeRole = keyof typeof LIFETIME_MS;

/** A superseded versioned file stays served at least one timestamp period (the contract), and a day more. */
export const SUPERSEDED_KEPT_MS = 2 * DAY_MS;

/** TUF's date form: RFC 3339 in UTC, whole seconds. */
export const expiryFrom = (now: Date, role: LifetimeRole) => new Date(now.getTime() + LIFETIME_MS[role]).toISOString().replace(/\.\d{3}Z$/, "Z");

/** From this long before root or targets expire, `tuf status` says so and the sweep warns daily (§23). */
export const EXPIRY_WARNING_MS = 30 * DAY_MS;

/** The offline roles (renewed only by the operators' ceremony) that expire within 30 days, or have expired. */
export function expiryWarnings(offline: { root: { version: number; expires: string }; targets: { version: number; expires: string } }, now: Date): { role: "root" | "targets"; version: number; expires: string; daysLeft: number }[] {
  return (["root", "targets"] as const)
    .map((role) => ({ role, ...offline[role], left: new Date(offline[role].expires).getTime() - now.getTime() }))
    .filter(({ left }) => left <= EXPIRY_WARNING_MS)
    .map(({ role, version, expires, left }) => ({ role, version, expires, daysLeft: Math.floor(left / DAY_MS) }));
}

/** What `tuf status` and the daily warning say of an offline role's expiry. */
export const expiryWarningText = (warning: ReturnType<typeof expiryWarnings>[number]) =>
  warning.daysLeft < 0
    ? `${warning.role} (version ${warning.version}) expired at ${warning.expires}: clients refuse the repository until \`tuf rotate ${warning.role}\` signs a new one.`
    : `${warning.role} (version ${warning.version}) expires at ${warning.expires}, in ${warning.daysLeft} days: renew it with \`tuf rotate ${warning.role}\` (the offline keys' ceremony).`;

/** Online roles are re-signed when less than half their period is left (the scheduled re-sign). */
export const dueForResign = (expires: string, role: LifetimeRole, now: Date) => new Date(expires).getTime() - now.getTime() < LIFETIME_MS[role] / 2;

/** The succinct delegation of every target to the bins (TAP 15), signed by these keys, as targets.json holds it. */
export const binDelegationJson = (keyIds: string[]) => ({ keyids: keyIds, threshold: 1, bit_length: BIN_BIT_LENGTH, name_prefix: BIN_PREFIX });

/** The bins' succinct roles, read through a targets role (the package index does not export the class). */
const BINS = Targets.fromJSON({ _type: "targets", spec_version: SPEC_VERSION, version: 1, expires: "2000-01-01T00:00:00Z", targets: {}, delegations: { keys: {}, succinct_roles: binDelegationJson([]) } }).delegations!.succinctRoles!;
/** Every bin's role name, in order: `bins-000` … `bins-3ff`. */
export const binNames = (): string[] => [...BINS.getRoles()];
/** The bin a target path belongs to: the first bits of the SHA-256 of the path. */
export const binOf = (targetPath: string) => BINS.getRoleForTarget(targetPath);
export const isBinName = (role: string) => BINS.isDelegatedRole(role);

/** What the repository lists of a module version. */
export interface TargetSource {
  moduleId: string;
  version: string;
  publisherId: string;
  sha256: string;
  size: number;
}

export const targetPath = (moduleId: string, version: string) => `modules/${moduleId}/${version}.mpkg`;

export const targetFileOf = (source: TargetSource) =>
  new TargetFile({
    path: targetPath(source.moduleId, source.version),
    length: source.size,
    hashes: { sha256: source.sha256 },
    unrecognizedFields: { custom: { moduleId: source.moduleId, version: source.version, publisherId: source.publisherId } },
  });

/**
 * A version is a target while it is published and neither it nor its module is revoked; a
 * yanked version stays (installs may be restored).
 */
/** A published version, not revoked, of a public module: a business's private module (§26) is never in the public repository. */
export const isListedTarget = (version: { state: string; revocation: unknown }, module: { revocation: unknown; businessId: string | null } | null) =>
  version.state === "published" && !version.revocation && !module?.revocation && !module?.businessId;

/** A versioned metadata file: `<version>.<role>.json`. */
export const metadataFileName = (role: string, version: number) => `${version}.${role}.json`;

export type MetadataRequest = { kind: "timestamp" } | { kind: "versioned"; role: string; version: number };

/** What a file name under tuf/metadata/ asks for; null when it names nothing this repository serves. */
export function parseMetadataFileName(name: string): MetadataRequest | null {
  if (name === "timestamp.json") return { kind: "timestamp" };
  const match = /^([1-9][0-9]{0,9})\.(root|targets|snapshot|[a-z]+-[0-9a-f]{1,4})\.json$/.exec(name);
  if (!match) return null;
  const role = match[2];
  if (role.includes("-") && !isBinName(role)) return null;
  return { kind: "versioned", role, version: Number(match[1]) };
}

/** A target file as a client asks for it with consistent snapshots: `<sha256>.<version>.mpkg`. */
export function parseTargetFileName(name: string): { sha256: string; version: string } | null {
  const match = /^([0-9a-f]{64})\.(.+)\.mpkg$/.exec(name);
  return match && semver.valid(match[2]) === match[2] ? { sha256: match[1], version: match[2] } : null;
}
