import type { z } from "zod";
import { businessStore } from "../accounts/business-store";
import type { ScimSettings } from "../accounts/business-records";
import { inBusinessTransaction, readBusiness, requireOwner, type MemberCaller } from "../businesses/membership";
import { auditLog, type Actor } from "../core/audit-log";
import type { Deps } from "../deps";
import { directoryJobStore } from "./directory-job-store";
import type { scimSettingsSchema } from "./schemas";

const NO_SETTINGS: ScimSettings = { roleGroups: {}, seatGroups: null };

/** GET /businesses/:id/scim/settings (owners). */
export async function getScimSettings(deps: Deps, caller: MemberCaller, businessId: string): Promise<ScimSettings> {
  return requireOwner(await readBusiness(deps, null, businessId, caller.uid), caller, businessId, "see its SCIM settings").scimSettings ?? NO_SETTINGS;
}

/**
 * PUT /businesses/:id/scim/settings (owners): stored whole, with a settle recorded in the same
 * transaction: every member's role and seat then follow the groups in the background, within
 * moments, a page at a time (directory-jobs.ts), whatever the business's size.
 */
export async function putScimSettings(deps: Deps, caller: MemberCaller, actor: Actor, businessId: string, input: z.output<typeof scimSettingsSchema>): Promise<ScimSettings> {
  const settings: ScimSettings = { roleGroups: input.roleGroups?.admin ? { admin: input.roleGroups.admin } : {}, seatGroups: input.seatGroups ?? null };
  const now = deps.clock();
  await inBusinessTransaction(
    deps,
    businessId,
    (tx, state) => {
      requireOwner(state, caller, businessId, "change its SCIM settings");
      businessStore(deps.db).setScimSettings(tx, businessId, settings);
      auditLog(deps.db).record(tx, actor, { action: "scim.settings.update", target: businessId, details: { ...settings } }, now);
      directoryJobStore(deps.db).addIn(tx, { businessId, kind: "settle" }, now);
    },
    { uid: caller.uid },
  );
  return settings;
}
