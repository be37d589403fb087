import { z } from "zod";
import { moduleNotFound } from "../access/visibility";
import { outboundEvent } from "../core/event-types";
import { auditLog, operatorOf } from "../core/audit-log";
import { catalogChanges, moduleChange } from "../core/catalog-changes";
import { MODULE_ID, semverVersion, toIso } from "../core/documents";
import { ApiError } from "../core/errors";
import { readJoined, type JoinedChange } from "../core/joined-change";
import { parseInput } from "../core/validation";
import type { Deps, OperatorDeps } from "../deps";
import { readBusiness, requireMember, type MemberCaller } from "../businesses/membership";
import { moduleStore, type ModuleRecord, type VersionRecord } from "../marketplace/module-store";
import { latestOf, summaryOf, withEntry } from "../marketplace/versions";
import { ALL_VERSIONS, revocationListStore, type RevocationEntry, type RevocationList } from "./revocation-list-store";

/**
 * The kill switch (contract §14): an operator revokes one version of a module, or all of them; a
 * revoked version is never downloaded, confirmed, chosen as latest or compatible, and the desktop
 * app refuses to load it even offline, from the signed revocation list.
 */

const reason = z.string().trim().min(1).max(500);
const revokeInput = z.strictObject({ moduleId: z.string().regex(MODULE_ID, "not a module id"), version: semverVersion.optional(), reason });
const unrevokeInput = z.strictObject({ moduleId: z.string().regex(MODULE_ID, "not a module id"), version: semverVersion.optional() });

/** How another service's change joins a revocation (a moderation decision, §30). */
export interface RevocationOptions {
  joined?: JoinedChange;
  /** Lifting what is not revoked (any more) changes nothing instead of answering 404: a decision reversed after an operator lifted it by hand. */
  liftedAlready?: "ok";
}

/** Revokes a version, or (without one) every version of the module, published or not yet. */
export async function revokeModule(deps: OperatorDeps, input: z.input<typeof revokeInput>, options: RevocationOptions = {}) {
  const { moduleId, version, reason: why } = parseInput(revokeInput, input);
  return changeRevocation(deps, moduleId, version, { reason: why }, options);
}

/** Lifts the revocation of a version, or (without one) of the module and every one of its versions. */
export async function unrevokeModule(deps: OperatorDeps, input: z.input<typeof unrevokeInput>, options: RevocationOptions = {}) {
  const { moduleId, version } = parseInput(unrevokeInput, input);
  return changeRevocation(deps, moduleId, version, null, options);
}

/**
 * One transaction changes the versions, the module (its summary and latest), the revocation list
 * and its serial, the catalog's change feed and the audit log together (and a joined change).
 */
async function changeRevocation(deps: OperatorDeps, moduleId: string, version: string | undefined, revoke: { reason: string } | null, options: RevocationOptions) {
  const { db, clock } = deps;
  const modules = moduleStore(db);
  const list = revocationListStore(db);
  const now = clock();
  const result = await db.runTransaction(async (tx) => {
    const writeJoined = await readJoined(tx, options.joined);
    const revocations = await list.readIn(tx);
    const module = modules.readModule(await tx.get(modules.moduleRef(moduleId)));
    if (!module) throw moduleNotFound(moduleId);
    const versions = version ? [modules.readVersion(await tx.get(modules.versionRef(moduleId, version)))] : await modules.versionsIn(tx, moduleId);
    if (version && !versions[0]) throw new ApiError("version_not_found", `${moduleId} has no version ${version}.`);
    const records = versions as VersionRecord[];

    const revocation = revoke ? { reason: revoke.reason, revokedAt: now } : null;
    let changed: ModuleRecord = module;
    let entries = revocations.entries;
    if (version) {
      const [record] = records;
      if (!revoke && !record.revocation && !options.liftedAlready) throw new ApiError("not_found", `${moduleId}@${version} is not revoked.`);
      const updated: VersionRecord = { ...record, revocation };
      modules.setVersion(tx, updated);
      if (record.state === "published") changed = { ...module, versionSummary: withEntry(module.versionSummary, summaryOf(updated)) };
      entries = entries.filter((item) => !(item.moduleId === moduleId && item.version === version));
      if (revocation) entries.push({ moduleId, version, sha256: record.sha256, ...revocation, businessId: module.businessId });
    } else {
      if (!revoke && !module.revocation && !records.some((record) => record.revocation) && !options.liftedAlready) throw new ApiError("not_found", `Nothing of ${moduleId} is revoked.`);
      changed = { ...module, revocation };
      entries = entries.filter((item) => item.moduleId !== moduleId);
      if (revocation) {
        entries.push({ moduleId, version: ALL_VERSIONS, sha256: null, ...revocation, businessId: module.businessId });
      } else {
        // Lifting the module's revocation lifts every version's.
        let summary = module.versionSummary;
        for (const record of records.filter((item) => item.revocation)) {
          const updated = { ...record, revocation: null };
          modules.setVersion(tx, updated);
          if (record.state === "published") summary = withEntry(summary, summaryOf(updated));
        }
        changed = { ...changed, versionSummary: summary };
      }
    }
    changed = { ...changed, ...latestOf(changed.versionSummary, changed.revocation) };
    modules.setModule(tx, changed);
    const serial = list.write(tx, { serial: revocations.serial, entries }, now);
    catalogChanges(db).record(tx, moduleChange(moduleId));
    const target = version ? `${moduleId}@${version}` : moduleId;
    const revoked = outboundEvent("module.revoked", [{ kind: "publisher", id: module.publisherId }], { moduleId, version: version ?? null, revoked: revoke !== null, reason: revoke?.reason ?? null, path: "/revocations" });
    auditLog(db).record(tx, operatorOf(deps), { action: revoke ? "module.revoke" : "module.unrevoke", target, details: { reason: revoke?.reason, serial }, emits: [revoked] }, now);
    writeJoined(tx);
    return { moduleId, version: version ?? ALL_VERSIONS, revoked: revoke !== null, reason: revoke?.reason ?? null, latestVersion: changed.latestVersion, serial };
  });
  catalogChanges(db).applied(moduleChange(moduleId));
  return result;
}

/** Revokes every published version stored under this package hash (a blocklist addition). */
export async function revokePackagesWithHash(deps: OperatorDeps, sha256: string, why: string) {
  const matches = await moduleStore(deps.db).versionsWithSha256(sha256);
  const revoked: string[] = [];
  for (const record of matches.filter((item) => item.state === "published" && !item.revocation)) {
    await changeRevocation(deps, record.moduleId, record.version, { reason: why }, {});
    revoked.push(`${record.moduleId}@${record.version}`);
  }
  return revoked;
}

/** Operators: the whole list as it stands, each entry with the business of a private module (else null). */
export async function listRevocations({ db }: Pick<OperatorDeps, "db">) {
  const list = await revocationListStore(db).get();
  return { serial: list.serial, entries: (await entriesWithBusiness(db, list.entries)).map((item) => ({ ...entryView(item), businessId: item.businessId })) };
}

const entryView = ({ businessId: _businessId, ...item }: RevocationEntry) => ({ ...item, revokedAt: toIso(item.revokedAt) });

/** GET /businesses/:id/revocations (any member, §26): the business's private modules' revocations, signed as the public list is. */
export async function signedBusinessRevocationList(deps: Deps, caller: MemberCaller, businessId: string): Promise<{ list: string }> {
  requireMember(await readBusiness(deps, null, businessId, caller.uid), caller, businessId);
  return signedRevocationList(deps, businessId);
}

/** Lists are signed for whole hours: every instance signs the same bytes (Ed25519 is deterministic) within one. */
const SIGNING_PERIOD_MS = 3_600_000;

/** The list's entries with the business of each (entries written before §26's split name none: their modules say). */
async function entriesWithBusiness(db: Deps["db"] | OperatorDeps["db"], entries: RevocationEntry[]): Promise<(RevocationEntry & { businessId: string | null })[]> {
  const unknown = [...new Set(entries.filter((item) => item.businessId === undefined).map((item) => item.moduleId))];
  const modules = unknown.length > 0 ? await moduleStore(db).getModules(unknown) : [];
  const businessOf = new Map(unknown.map((moduleId, index) => [moduleId, modules[index]?.businessId ?? null]));
  return entries.map((item) => ({ ...item, businessId: item.businessId === undefined ? businessOf.get(item.moduleId)! : item.businessId }));
}

/**
 * A signed revocation list: a compact JWS (`typ: revocations+jwt`) over `{ serial, iat, exp,
 * entries }`, `iat` at the start of the current hour and `exp` the configured lifetime later, so a
 * list fetched at any time is valid for at least the lifetime less an hour. The public list holds
 * public modules' entries only; a business's (§26, for its members) only its private modules',
 * with `businessId` in the payload.
 */
export async function signedRevocationList({ db, signingKeys, clock, config }: Deps, businessId: string | null = null): Promise<{ list: string }> {
  const list: RevocationList = await revocationListStore(db).get();
  const iatMs = Math.floor(clock().getTime() / SIGNING_PERIOD_MS) * SIGNING_PERIOD_MS;
  const payload = {
    serial: list.serial,
    iat: iatMs / 1000,
    exp: (iatMs + config.revocationListLifetimeMs) / 1000,
    ...(businessId === null ? {} : { businessId }),
    entries: (await entriesWithBusiness(db, list.entries))
      .filter((item) => item.businessId === businessId)
      .sort((a, b) => a.moduleId.localeCompare(b.moduleId) || a.version.localeCompare(b.version))
      .map(entryView),
  };
  return { list: await signingKeys.sign(payload, { typ: "revocations+jwt" }) };
}
