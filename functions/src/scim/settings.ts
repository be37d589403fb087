import type { z } from "zod";
import { businessStore } from "../accounts/business-store";
import type { ScimSettings } from "../accounts/business-records";
import { inBusinessTransaction, readBusiness, requireOwner, type MemberCaller } from "../businesses/service";
import { auditLog, type Actor } from "../core/audit-log";
import type { Deps } from "../deps";
import { settleDirectory } from "./directory";
import type { scimSettingsSchema } from "./schemas";

const NO_SETTINGS: ScimSettings = { roleGroups: {}, seatGroups: null };

/** GET /businesses/:id/scim/settings (owners). */
export async function getScimSettings(deps: Deps, caller: MemberCaller, businessId: string): Promise<ScimSettings> {
  const { business } = await readBusiness(deps, null, businessId);
  return requireOwner(business, caller, businessId, "see its SCIM settings").scimSettings ?? NO_SETTINGS;
}

/** PUT /businesses/:id/scim/settings (owners): stored whole, and roles and seats follow the groups in the same transaction. */
export async function putScimSettings(deps: Deps, caller: MemberCaller, actor: Actor, businessId: string, input: z.output<typeof scimSettingsSchema>): Promise<ScimSettings> {
  const settings: ScimSettings = { roleGroups: input.roleGroups?.admin ? { admin: input.roleGroups.admin } : {}, seatGroups: input.seatGroups ?? null };
  const now = deps.clock();
  return inBusinessTransaction(deps, businessId, (tx, { business, subscription }) => {
    const owned = requireOwner(business, caller, businessId, "change its SCIM settings");
    businessStore(deps.db).setScimSettings(tx, businessId, settings);
    const { changed, emits } = settleDirectory(tx, deps, businessId, { ...owned, scimSettings: settings }, subscription, now);
    auditLog(deps.db).record(tx, actor, { action: "scim.settings.update", target: businessId, details: { ...settings, membersChanged: changed.length }, emits }, now);
    return settings;
  });
}
