import { z } from "zod";
import { auditLog, operatorOf } from "../core/audit-log";
import { toIso } from "../core/documents";
import { ApiError } from "../core/errors";
import { parseInput } from "../core/validation";
import type { OperatorDeps } from "../deps";
import { revokePackagesWithHash } from "../revocations/service";
import { blocklistStore, type BlocklistRecord } from "./blocklist-store";

/**
 * Operators' blocklist (contract §14): SHA-256s of files or whole packages that are refused at sign.
 * Adding the hash of a published package also revokes every version stored under it.
 */

const sha256 = z.string().trim().toLowerCase().regex(/^[0-9a-f]{64}$/, "must be a SHA-256 in hex (64 characters)");
const addInput = z.strictObject({ sha256, reason: z.string().trim().min(1).max(500) });
const removeInput = z.strictObject({ sha256 });

const view = (record: BlocklistRecord) => ({ ...record, addedAt: toIso(record.addedAt) });

export async function addToBlocklist(deps: OperatorDeps, input: z.input<typeof addInput>) {
  const { sha256: hash, reason } = parseInput(addInput, input);
  const { db, clock } = deps;
  const actor = operatorOf(deps);
  const now = clock();
  const record: BlocklistRecord = { sha256: hash, reason, addedAt: now, addedBy: { kind: actor.kind, id: actor.id } };
  await auditLog(db).commit(actor, { action: "blocklist.add", target: hash, details: { reason } }, now, (batch) => blocklistStore(db).set(batch, record));
  const revoked = await revokePackagesWithHash(deps, hash, `Blocklisted: ${reason}`);
  return { ...view(record), revoked };
}

export async function removeFromBlocklist(deps: OperatorDeps, input: z.input<typeof removeInput>) {
  const { sha256: hash } = parseInput(removeInput, input);
  const { db, clock } = deps;
  const blocklist = blocklistStore(db);
  if (!(await blocklist.get(hash))) throw new ApiError("not_found", `${hash} is not on the blocklist.`);
  await auditLog(db).commit(operatorOf(deps), { action: "blocklist.remove", target: hash }, clock(), (batch) => blocklist.delete(batch, hash));
  return { sha256: hash, removed: true };
}

export async function listBlocklist({ db }: Pick<OperatorDeps, "db">) {
  return (await blocklistStore(db).list()).map(view);
}
