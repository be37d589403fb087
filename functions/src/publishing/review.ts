import { z } from "zod";
import { outboundEvent } from "../core/event-types";
import { auditLog, operatorOf } from "../core/audit-log";
import { MODULE_ID, semverVersion, toIso } from "../core/documents";
import { ApiError } from "../core/errors";
import { parseInput } from "../core/validation";
import type { OperatorDeps } from "../deps";
import { moduleStore, type VersionRecord } from "../marketplace/module-store";

/**
 * Operators' review of quarantined versions (contract §14): approve (then the publisher may
 * publish it) or reject (its package is deleted; the publisher sees the reason).
 */

const versionInput = { moduleId: z.string().regex(MODULE_ID, "not a module id"), version: semverVersion };
const approveInput = z.strictObject({ ...versionInput, note: z.string().trim().min(1).max(500).optional() });
const rejectInput = z.strictObject({ ...versionInput, reason: z.string().trim().min(1).max(500) });

/** Quarantined versions, oldest first, with what the checks found. */
export async function listQuarantined({ db }: Pick<OperatorDeps, "db">) {
  const versions = await moduleStore(db).versionsInReview("quarantined");
  return versions
    .sort((a, b) => a.signedAt.getTime() - b.signedAt.getTime())
    .map((record) => ({ moduleId: record.moduleId, version: record.version, signedAt: toIso(record.signedAt), sha256: record.sha256, findings: record.review.findings }));
}

export async function approveVersion(deps: OperatorDeps, input: z.input<typeof approveInput>) {
  const { moduleId, version, note } = parseInput(approveInput, input);
  const record = await decide(deps, moduleId, version, "approved", { note });
  return { moduleId, version, state: record.review.state, note: note ?? null };
}

/** Rejects a quarantined version and deletes its package; again on a rejected one, retries the deletion. */
export async function rejectVersion(deps: OperatorDeps, input: z.input<typeof rejectInput>) {
  const { moduleId, version, reason } = parseInput(rejectInput, input);
  const record = await decide(deps, moduleId, version, "rejected", { reason });
  await deps.store.delete(record.storagePath);
  return { moduleId, version, state: record.review.state, reason: record.review.reason ?? reason, packageDeleted: true };
}

async function decide(deps: OperatorDeps, moduleId: string, version: string, state: "approved" | "rejected", why: { note?: string; reason?: string }): Promise<VersionRecord> {
  const { db, clock } = deps;
  const modules = moduleStore(db);
  const actor = operatorOf(deps);
  const now = clock();
  return db.runTransaction(async (tx) => {
    const record = modules.readVersion(await tx.get(modules.versionRef(moduleId, version)));
    if (!record) throw new ApiError("version_not_found", `${moduleId} has no version ${version}.`);
    if (state === "rejected" && record.review.state === "rejected") return record;
    if (record.review.state !== "quarantined") {
      throw new ApiError("not_under_review", `${moduleId}@${version} is not quarantined (its review is '${record.review.state}').`);
    }
    const decided: VersionRecord = {
      ...record,
      review: { ...record.review, state, ...why, decidedAt: now, decidedBy: { kind: actor.kind, id: actor.id } },
    };
    modules.setVersion(tx, decided);
    // A module's id begins with its publisher's (§4).
    const owners = [{ kind: "publisher" as const, id: moduleId.split(".")[0] }];
    const path = "/developers/modules";
    const emits = [
      state === "approved"
        ? outboundEvent("module.version.approved", owners, { moduleId, version, path })
        : outboundEvent("module.version.rejected", owners, { moduleId, version, reason: why.reason ?? "", path }),
    ];
    auditLog(db).record(tx, actor, { action: state === "approved" ? "review.approve" : "review.reject", target: `${moduleId}@${version}`, details: why, emits }, now);
    return decided;
  });
}
