import { createHash } from "node:crypto";
import { byJoinOrder, type MemberRecord, type ScimGroupRecord, type ScimSettings } from "../accounts/business-records";

/**
 * How SCIM and single sign-on decide roles and seats (§22), as pure functions of the business's
 * settings and groups and of the members a change touches: groups named in `roleGroups.admin`
 * make admins; with `seatGroups`, only their members hold seats (or wait for one); otherwise a
 * newcomer is to hold a seat. Owners are never demoted or unseated, nor are members SCIM does not
 * manage. Which seat, and whether one is free, is seats/ledger.ts's.
 */

/** The names, lowercased, of the SCIM groups a member is in. */
export const groupNamesOf = (groups: readonly ScimGroupRecord[], member: Pick<MemberRecord, "groups">) =>
  new Set(groups.filter((group) => member.groups.includes(group.id)).map((group) => group.displayName.toLowerCase()));

const named = (names: readonly string[] | undefined | null) => (names ? new Set(names.map((name) => name.toLowerCase())) : null);
const meets = (groups: Set<string>, wanted: Set<string>) => [...groups].some((group) => wanted.has(group));

/** Whether someone joining now (SCIM or SSO) is to hold a seat: when seat groups are set, only in one of them. */
export function wantsSeat(settings: ScimSettings | null, groups: readonly string[]): boolean {
  const seatGroups = named(settings?.seatGroups);
  return !seatGroups || meets(new Set(groups.map((group) => group.toLowerCase())), seatGroups);
}

/**
 * Of these members, those whose role or seat the groups and settings now call for otherwise,
 * changed: admin groups make admins; with seat groups, a member outside them gives up their seat
 * (and stops waiting), and one inside them without a seat waits for one (seats/ledger.ts gives
 * it, longest waiting first). Owners, suspended members and members SCIM does not manage stay as
 * they are.
 */
export function reconcileDirectory(directory: { settings: ScimSettings | null; groups: readonly ScimGroupRecord[] }, members: readonly MemberRecord[], now: Date): MemberRecord[] {
  const adminGroups = named(directory.settings?.roleGroups.admin);
  const seatGroups = named(directory.settings?.seatGroups);
  return members
    .filter((member) => member.scim !== null && member.role !== "owner" && !member.suspended)
    .sort(byJoinOrder)
    .flatMap((member) => {
      const groups = groupNamesOf(directory.groups, member);
      const role = adminGroups ? (meets(groups, adminGroups) ? "admin" : "member") : member.role;
      const inSeatGroup = seatGroups === null || meets(groups, seatGroups);
      let next: MemberRecord = role === member.role ? member : { ...member, role };
      if (seatGroups !== null && !inSeatGroup && (member.seat || member.waitingSince !== null)) next = { ...next, seat: false, seatAssignedAt: null, seatShard: null, waitingSince: null };
      if (seatGroups !== null && inSeatGroup && !member.seat && member.waitingSince === null) next = { ...next, waitingSince: now };
      return next === member ? [] : [next];
    });
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
