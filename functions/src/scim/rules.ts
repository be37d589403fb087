import { createHash } from "node:crypto";
import { seatHolders, type BusinessRecord, type MemberRecord } from "../accounts/business-records";

/**
 * How SCIM and single sign-on decide roles and seats (§22), as pure functions of the business
 * document: groups named in `roleGroups.admin` make admins; with `seatGroups`, only their members
 * hold seats; otherwise a newcomer gets a seat when one is free. Owners are never demoted or
 * unseated, nor are members SCIM does not manage.
 */

/** Seats the paid quantity still has, after seat holders and pending seat invitations; null when it counts none. */
export function freeSeatCount(business: Pick<BusinessRecord, "members" | "invitations">, paidSeats: number | null, now: Date): number | null {
  if (paidSeats === null) return null;
  const pending = business.invitations.filter((invitation) => invitation.seat && invitation.expiresAt > now).length;
  return paidSeats - seatHolders(business).length - pending;
}

/** The names, lowercased, of the SCIM groups a member is in. */
export const groupNamesOf = (business: Pick<BusinessRecord, "scimGroups">, uid: string) =>
  new Set(business.scimGroups.filter((group) => group.memberIds.includes(uid)).map((group) => group.displayName.toLowerCase()));

const named = (names: readonly string[] | undefined | null) => (names ? new Set(names.map((name) => name.toLowerCase())) : null);
const meets = (groups: Set<string>, wanted: Set<string>) => [...groups].some((group) => wanted.has(group));

/** Whether someone joining now (SCIM or SSO) gets a seat: in a seat group when seat groups are set, and a seat free. */
export function seatForNewcomer(business: BusinessRecord, subscription: { seats: number | null } | null, groups: readonly string[], now: Date): boolean {
  const seatGroups = named(business.scimSettings?.seatGroups);
  if (seatGroups && !meets(new Set(groups.map((group) => group.toLowerCase())), seatGroups)) return false;
  const free = freeSeatCount(business, subscription?.seats ?? null, now);
  return free === null || free > 0;
}

/**
 * The members whose role or seat the groups and settings now call for otherwise, changed; seats
 * are taken before they are given, and given in the order members joined while any is free.
 */
export function reconcileDirectory(business: BusinessRecord, subscription: { seats: number | null } | null, now: Date): MemberRecord[] {
  const adminGroups = named(business.scimSettings?.roleGroups.admin);
  const seatGroups = named(business.scimSettings?.seatGroups);
  const managed = business.members
    .filter((member) => member.scim !== null && member.role !== "owner" && !member.suspended)
    .sort((a, b) => (a.joinedAt?.getTime() ?? 0) - (b.joinedAt?.getTime() ?? 0) || (a.uid < b.uid ? -1 : 1));
  const changed = new Map<string, MemberRecord>();
  for (const member of managed) {
    const groups = groupNamesOf(business, member.uid);
    const role = adminGroups ? (meets(groups, adminGroups) ? "admin" : "member") : member.role;
    const losesSeat = seatGroups !== null && member.seat && !meets(groups, seatGroups);
    if (role !== member.role || losesSeat) changed.set(member.uid, { ...member, role, ...(losesSeat ? { seat: false, seatAssignedAt: null } : {}) });
  }
  if (seatGroups) {
    const current = (uid: string) => changed.get(uid) ?? business.members.find((member) => member.uid === uid)!;
    let free = freeSeatCount({ members: business.members.map((member) => current(member.uid)), invitations: business.invitations }, subscription?.seats ?? null, now);
    for (const member of managed) {
      const latest = current(member.uid);
      if (latest.seat || !meets(groupNamesOf(business, member.uid), seatGroups)) continue;
      if (free !== null && free <= 0) break;
      changed.set(member.uid, { ...latest, seat: true, seatAssignedAt: now });
      if (free !== null) free -= 1;
    }
  }
  return [...changed.values()];
}

/**
 * The uid of the account a business's SCIM makes for an email (a *managed* user). Derived, not
 * random, so that it says which business made it: a retry after a lost answer finds the account
 * it made and still manages it, while another business that links the same person never does,
 * and so never disables or enables an account it did not make.
 */
export const managedUserId = (businessId: string, email: string) => `scim_${createHash("sha256").update(`${businessId}\n${email.toLowerCase()}`).digest("base64url").slice(0, 32)}`;

/** Whether a business's SCIM manages (disables and enables) the account it links or made. */
export const managesAccount = (businessId: string, uid: string, email: string) => uid === managedUserId(businessId, email);
