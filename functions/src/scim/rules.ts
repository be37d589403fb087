import { createHash } from "node:crypto";
import { byJoinOrder, type BusinessRecord, type MemberRecord, type ScimGroupRecord, type ScimSettings } from "../accounts/business-records";

/**
 * How SCIM and single sign-on decide roles and seats (§22), as pure functions of the business's
 * settings and groups and of the members a change touches: groups named in `roleGroups.admin`
 * make admins; with `seatGroups`, only their members hold seats; otherwise a newcomer gets a seat
 * when one is free. Owners are never demoted or unseated, nor are members SCIM does not manage.
 */

/** Seat invitations still pending: they hold a seat for whoever accepts. */
export const pendingSeatInvitations = (business: Pick<BusinessRecord, "invitations">, now: Date) =>
  business.invitations.filter((invitation) => invitation.seat && invitation.expiresAt > now).length;

/** The names, lowercased, of the SCIM groups a member is in. */
export const groupNamesOf = (groups: readonly ScimGroupRecord[], member: Pick<MemberRecord, "groups">) =>
  new Set(groups.filter((group) => member.groups.includes(group.id)).map((group) => group.displayName.toLowerCase()));

const named = (names: readonly string[] | undefined | null) => (names ? new Set(names.map((name) => name.toLowerCase())) : null);
const meets = (groups: Set<string>, wanted: Set<string>) => [...groups].some((group) => wanted.has(group));

/** Whether someone joining now (SCIM or SSO) gets a seat: in a seat group when seat groups are set, and a seat free (`free` null: the quantity counts none). */
export function seatForNewcomer(settings: ScimSettings | null, free: number | null, groups: readonly string[]): boolean {
  const seatGroups = named(settings?.seatGroups);
  if (seatGroups && !meets(new Set(groups.map((group) => group.toLowerCase())), seatGroups)) return false;
  return free === null || free > 0;
}

/**
 * Of these members, those whose role or seat the groups and settings now call for otherwise,
 * changed; seats are taken before they are given, and given in the order members joined while
 * any is free (`free`: the seats free before the change, null when the quantity counts none).
 */
export function reconcileDirectory(directory: { settings: ScimSettings | null; groups: readonly ScimGroupRecord[] }, members: readonly MemberRecord[], free: number | null, now: Date): MemberRecord[] {
  const adminGroups = named(directory.settings?.roleGroups.admin);
  const seatGroups = named(directory.settings?.seatGroups);
  const managed = members
    .filter((member) => member.scim !== null && member.role !== "owner" && !member.suspended)
    .sort(byJoinOrder);
  const changed = new Map<string, MemberRecord>();
  let seatsLeft = free;
  for (const member of managed) {
    const groups = groupNamesOf(directory.groups, member);
    const role = adminGroups ? (meets(groups, adminGroups) ? "admin" : "member") : member.role;
    const losesSeat = seatGroups !== null && member.seat && !meets(groups, seatGroups);
    if (losesSeat && seatsLeft !== null) seatsLeft += 1;
    if (role !== member.role || losesSeat) changed.set(member.uid, { ...member, role, ...(losesSeat ? { seat: false, seatAssignedAt: null } : {}) });
  }
  if (seatGroups) {
    for (const member of managed) {
      const latest = changed.get(member.uid) ?? member;
      if (latest.seat || !meets(groupNamesOf(directory.groups, member), seatGroups)) continue;
      if (seatsLeft !== null && seatsLeft <= 0) break;
      changed.set(member.uid, { ...latest, seat: true, seatAssignedAt: now });
      if (seatsLeft !== null) seatsLeft -= 1;
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
