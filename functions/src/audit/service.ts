import { z } from "zod";
import { moduleNotFound } from "../access/visibility";
import { assertInCredentialScope, assertOwnsModule, type PublisherCredential } from "../access/policy";
import { auditLog, type AuditRecord } from "../core/audit-log";
import { toIso } from "../core/documents";
import { parseInput } from "../core/validation";
import type { Deps, OperatorDeps } from "../deps";
import { actingOwner } from "../publishing/publisher";
import { moduleStore } from "../marketplace/module-store";

/** Reading the audit log: owners read their modules' entries, operators everything. */

export const auditEntryView = (entry: AuditRecord) => ({ ...entry, at: toIso(entry.at) });

/** One page of a module's entries (its versions' too), newest first, for its owner. */
export async function moduleAuditPage({ db, cursors }: Deps, developer: { id: string; publisherId: string }, credential: PublisherCredential, moduleId: string, page: { limit: number; cursor?: string }) {
  assertInCredentialScope(moduleId, credential);
  const [module, owner] = await Promise.all([moduleStore(db).getModule(moduleId), actingOwner(db, developer, moduleId)]);
  if (!module) throw moduleNotFound(moduleId);
  assertOwnsModule(moduleId, module, owner.id);
  const found = await auditLog(db).page({ subject: moduleId, limit: page.limit, after: page.cursor ? cursors.decode(page.cursor) : undefined });
  return { items: found.entries.map(auditEntryView), nextCursor: found.more && found.last ? cursors.encode(found.last) : null };
}

const auditListInput = z.strictObject({
  target: z.string().min(1).max(300).optional(),
  since: z.coerce.date().optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

/** Operators: the newest entries, of one target (a module's include its versions') and since a date when given. */
export async function listAudit({ db }: Pick<OperatorDeps, "db">, input: z.input<typeof auditListInput>) {
  const { target, since, limit } = parseInput(auditListInput, input);
  const found = await auditLog(db).page({ subject: target, since, limit });
  return found.entries.map(auditEntryView);
}
