import type { Transaction } from "firebase-admin/firestore";
import type { BusinessRecord, MemberRecord } from "../accounts/business-records";
import { memberStore, type MemberPosition } from "../accounts/member-store";
import { inBusinessTransaction } from "../businesses/membership";
import { auditLog, type Actor, type AuditEvent } from "../core/audit-log";
import type { SubscriptionRecord } from "../accounts/subscription-store";
import { outboundEvent } from "../core/event-types";
import type { Deps } from "../deps";
import { project, ScimError, type ScimResource } from "./resources";
import { freeSeatCount } from "../access/rules";
import { pendingSeatInvitations, reconcileDirectory } from "./rules";

/**
 * SCIM Users and Groups of a business (§22, §25): what users.ts and groups.ts share. Every change
 * is one transaction on the members it touches (one document each), the business's document
 * (read: its settings and groups; written only when a group changes), the seat counts (read
 * when a seat may be given under a paid quantity) and the SCIM keys (read: a duplicate userName
 * has one winner under any concurrency); the audit entry of the change carries its
 * `business.member.*` events. Auth users are found or made before it, and disabled or enabled
 * after it (again on a retry, so a crash in between is mended by the provider's next sync).
 */

export type Query = { attributes?: string | string[]; excludedAttributes?: string | string[] };
export type Projected = { resource: Record<string, unknown>; version: string; location: string };

/** The most SCIM groups one business may have (they live in its document). */
export const MAX_GROUPS = 300;
/** The most members one request may move into or out of a group (one transaction writes them all). */
export const MAX_MEMBERS_MOVED = 400;

export const answer = (resource: ScimResource, query: Query): Projected => ({ resource: project(resource, query), version: String(resource.meta.version), location: String(resource.meta.location) });

export function present(business: BusinessRecord | null): BusinessRecord {
  // The token outlived its business (an operator deleted it): nothing to provision into.
  if (!business) throw new ScimError(401, null, "The SCIM token's business no longer exists.");
  return business;
}

export function assertVersion(resource: ScimResource, ifMatch: string | undefined): void {
  if (ifMatch === undefined || ifMatch.trim() === "*") return;
  const wanted = ifMatch.split(",").map((tag) => tag.trim());
  if (!wanted.includes(String(resource.meta.version))) throw new ScimError(412, null, `The resource has changed: its version is ${String(resource.meta.version)}.`);
}

/** A member before and after a change (null before: they join). */
export interface MemberChange {
  before: MemberRecord | null;
  after: MemberRecord;
}

const memberPath = (businessId: string, uid: string) => `/businesses/${businessId}/members/${uid}`;

/** The events of members changed by a SCIM request. */
export function memberEvents(businessId: string, changes: MemberChange[]): AuditEvent["emits"] {
  const owners = [{ kind: "business" as const, id: businessId }];
  return changes.flatMap(({ before: previous, after: member }) => {
    const data = { businessId, uid: member.uid, role: member.role, seat: member.seat, source: member.source, path: memberPath(businessId, member.uid) };
    if (!previous) return [outboundEvent("business.member.joined", owners, { ...data, ...(member.suspended ? { suspended: true } : {}) })];
    const changed = previous.role !== member.role || previous.seat !== member.seat || previous.suspended !== member.suspended;
    if (!changed) return [];
    return [
      outboundEvent("business.member.updated", owners, {
        ...data,
        ...(previous.suspended !== member.suspended ? { suspended: member.suspended } : {}),
        ...(previous.role !== member.role ? { previousRole: previous.role } : {}),
      }),
    ];
  });
}

/**
 * The seats free now, read in the transaction (so the limit is exact) only when the quantity
 * counts seats; null when it counts none.
 */
export async function freeSeatsIn(deps: Pick<Deps, "db">, tx: Transaction, business: BusinessRecord, subscription: SubscriptionRecord | null, now: Date): Promise<number | null> {
  const paid = subscription?.seats ?? null;
  if (paid === null) return null;
  return freeSeatCount(await memberStore(deps.db).seatsUsed(tx, business.id), pendingSeatInvitations(business, now), paid);
}

/** Members a settings change settles per transaction. */
const SETTLE_PAGE = 200;

/**
 * After a settings change, every member's role and seat follow the groups: the members in the
 * order they joined, a page per transaction (each reading the settings anew, so that a later
 * change wins), seats given in join order while any is free. Returns how many changed.
 */
export async function settleDirectory(deps: Deps, actor: Actor, businessId: string): Promise<number> {
  const members = memberStore(deps.db);
  let changed = 0;
  for (let after: MemberPosition | null = null; ; ) {
    const page = await members.page(businessId, after, SETTLE_PAGE);
    const uids = page.slice(0, SETTLE_PAGE).map((member) => member.uid);
    changed += await inBusinessTransaction(deps, businessId, async (tx, state) => {
      const business = present(state.business);
      const current = (await members.getMany(tx, businessId, uids)).filter((member): member is MemberRecord => member !== null);
      const now = deps.clock();
      const free = await freeSeatsIn(deps, tx, business, state.subscription, now);
      const reconciled = reconcileDirectory({ settings: business.scimSettings, groups: business.scimGroups }, current, free, now);
      if (reconciled.length === 0) return 0;
      const before = new Map(current.map((member) => [member.uid, member]));
      const changes = await settle(tx, deps, business, reconciled.map((member) => ({ before: before.get(member.uid)!, after: member })), free, now);
      auditLog(deps.db).record(tx, actor, { action: "scim.settings.apply", target: businessId, details: { membersChanged: changes.length }, emits: memberEvents(businessId, changes) }, now);
      return changes.length;
    });
    if (page.length <= SETTLE_PAGE) return changed;
    after = members.positionOf(page[SETTLE_PAGE - 1]);
  }
}

/**
 * Writes members after a change, with the roles and seats the groups and settings call for
 * (`free`: the seats free before it, null when the quantity counts none). With seat groups, a
 * seat the change frees goes to whoever waits for one in a seat group, in the order they joined:
 * those are read here, before any write of the transaction. Returns every change.
 */
export async function settle(tx: Transaction, deps: Deps, business: BusinessRecord, changes: MemberChange[], free: number | null, now: Date): Promise<MemberChange[]> {
  const members = memberStore(deps.db);
  const seatGroupIds = seatGroupIdsOf(business);
  const changed = new Set(changes.map(({ after }) => after.uid));
  const waiting =
    seatGroupIds.length > 0 && free !== null
      ? (await members.waitingForSeat(tx, business.id, seatGroupIds, Math.max(0, free) + changes.length)).filter((member) => !changed.has(member.uid)).map((member) => ({ before: member, after: member }))
      : [];
  const all = [...changes, ...waiting];
  const reconciled = new Map(reconcileDirectory({ settings: business.scimSettings, groups: business.scimGroups }, all.map(({ after }) => after), free, now).map((member) => [member.uid, member]));
  const settled = all.flatMap(({ before, after }) => {
    const final = reconciled.get(after.uid) ?? after;
    return changed.has(after.uid) || final !== after ? [{ before, after: final }] : [];
  });
  for (const { before, after } of settled) members.put(tx, business.id, before, after);
  return settled;
}

/** The ids of the business's groups that `seatGroups` names. */
const seatGroupIdsOf = (business: BusinessRecord) => {
  const names = new Set((business.scimSettings?.seatGroups ?? []).map((name) => name.toLowerCase()));
  return business.scimGroups.filter((group) => names.has(group.displayName.toLowerCase())).map((group) => group.id);
};
