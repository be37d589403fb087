import fc from "fast-check";
import type { MemberRecord, ScimGroupRecord } from "../accounts/business-records";
import { ssoBlocks } from "../access/rules";
import { freeSeatCount } from "../access/rules";
import { managedUserId, managesAccount, pendingSeatInvitations, reconcileDirectory, seatForNewcomer } from "./rules";

const now = new Date("2026-06-15T12:00:00.000Z");
const at = (minutes: number) => new Date(now.getTime() - minutes * 60_000);

const member = (uid: string, joined: number, extra: Partial<MemberRecord> = {}): MemberRecord => ({
  uid,
  role: "member",
  joinedAt: at(joined),
  seat: false,
  seatAssignedAt: null,
  source: "scim",
  suspended: false,
  managed: true,
  scim: { userName: `${uid}@acme.test`, externalId: null, displayName: null, name: {}, emails: [], created: at(joined), lastModified: at(joined) },
  groups: [],
  ...extra,
});

const group = (displayName: string): ScimGroupRecord => ({ id: `g-${displayName}`, displayName, externalId: null, created: now, lastModified: now });
/** Members with the groups they are in (by the groups' display names). */
const inGroups = (members: MemberRecord[], groups: Record<string, string[]>) =>
  members.map((candidate) => ({ ...candidate, groups: Object.entries(groups).flatMap(([name, uids]) => (uids.includes(candidate.uid) ? [`g-${name}`] : [])) }));

const owner = member("owner", 100, { role: "owner", source: "owner", scim: null, seat: true, seatAssignedAt: at(100) });

describe("seatForNewcomer", () => {
  it("gives a seat while one is free, counting pending seat invitations", () => {
    const invitation = { id: "i", email: "x@acme.test", role: "member" as const, seat: true, invitedBy: "owner", invitedByName: null, createdAt: at(5), expiresAt: at(-60), tokenHash: "h" };
    expect(pendingSeatInvitations({ invitations: [invitation, { ...invitation, expiresAt: at(1) }, { ...invitation, seat: false }] }, now)).toBe(1);
    expect(seatForNewcomer(null, freeSeatCount(1, 0, 2), [])).toBe(true);
    expect(seatForNewcomer(null, freeSeatCount(1, 1, 2), [])).toBe(false);
    expect(seatForNewcomer(null, freeSeatCount(1, 0, null), [])).toBe(true);
  });

  it("with seat groups, only to someone in one of them (any case)", () => {
    const settings = { roleGroups: {}, seatGroups: ["Licensed"] };
    expect(seatForNewcomer(settings, 4, [])).toBe(false);
    expect(seatForNewcomer(settings, 4, ["licensed"])).toBe(true);
  });
});

describe("reconcileDirectory", () => {
  it("makes admins of an admin group's members and members of the rest, never touching owners or unmanaged members", () => {
    const invited = member("invited", 50, { scim: null, source: "invitation", role: "admin" });
    const ann = member("ann", 40, { role: "admin" });
    const bob = member("bob", 30);
    const directory = { settings: { roleGroups: { admin: ["Admins"] }, seatGroups: null }, groups: [group("admins")] };
    const changed = reconcileDirectory(directory, inGroups([owner, invited, ann, bob], { admins: ["bob", "owner"] }), 8, now);
    expect(changed.map((record) => [record.uid, record.role]).sort()).toEqual([
      ["ann", "member"],
      ["bob", "admin"],
    ]);
  });

  it("frees seats outside the seat groups first, then gives free seats in join order", () => {
    const ann = member("ann", 40, { seat: true, seatAssignedAt: at(40) });
    const bob = member("bob", 30);
    const cat = member("cat", 20);
    const directory = { settings: { roleGroups: {}, seatGroups: ["Licensed"] }, groups: [group("Licensed")] };
    // Two seats paid, owner and Ann hold them: none free until Ann's goes back.
    const changed = new Map(reconcileDirectory(directory, inGroups([owner, ann, bob, cat], { Licensed: ["bob", "cat"] }), 0, now).map((record) => [record.uid, record.seat]));
    // Ann's seat goes back; of the one free seat, Bob (who joined first) gets it.
    expect(Object.fromEntries(changed)).toEqual({ ann: false, bob: true });
  });

  it("never gives more seats than the paid quantity, whatever the groups (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ seat: fc.boolean(), suspended: fc.boolean(), inGroup: fc.boolean(), admin: fc.boolean() }), { maxLength: 12 }),
        fc.integer({ min: 1, max: 8 }),
        (people, seats) => {
          const members = inGroups([owner, ...people.map((person, index) => member(`u${index}`, 50 - index, { seat: person.seat && !person.suspended, seatAssignedAt: person.seat ? at(60) : null, suspended: person.suspended }))], {
            L: people.flatMap((person, index) => (person.inGroup ? [`u${index}`] : [])),
            A: people.flatMap((person, index) => (person.admin ? [`u${index}`] : [])),
          });
          const before = members.filter((record) => record.seat).length;
          const directory = { settings: { roleGroups: { admin: ["A"] }, seatGroups: ["L"] }, groups: [group("L"), group("A")] };
          const changed = new Map(reconcileDirectory(directory, members, freeSeatCount(before, 0, seats), now).map((record) => [record.uid, record]));
          const after = members.map((record) => changed.get(record.uid) ?? record);
          const held = after.filter((record) => record.seat).length;
          // Seats never grow past the paid quantity (they may stay above it when they already were).
          expect(held).toBeLessThanOrEqual(Math.max(seats, before));
          for (const record of after) {
            if (record.suspended) expect(changed.has(record.uid)).toBe(false);
            if (record.seat && record.uid !== "owner") expect(record.groups).toContain("g-L");
          }
          expect(changed.get("owner")).toBeUndefined();
        },
      ),
    );
  });
});

describe("ssoBlocks", () => {
  const sso = { providerId: "saml.acme", enforce: true };
  it("keeps members out of requests that did not come through an enforced provider, never owners", () => {
    expect(ssoBlocks(sso, "member", "password")).toBe(true);
    expect(ssoBlocks(sso, "admin", null)).toBe(true);
    expect(ssoBlocks(sso, "member", "saml.acme")).toBe(false);
    expect(ssoBlocks(sso, "owner", "password")).toBe(false);
    expect(ssoBlocks({ ...sso, enforce: false }, "member", "password")).toBe(false);
    expect(ssoBlocks(null, "member", undefined)).toBe(false);
  });
});

describe("managed accounts (§22)", () => {
  it("are named by the business that made them, so only that business manages them", () => {
    const acme = managedUserId("acme", "Ann@Acme.test");
    expect(acme).toMatch(/^scim_[A-Za-z0-9_-]{32}$/);
    expect(managedUserId("acme", "ann@acme.test")).toBe(acme);
    expect(managedUserId("rival", "ann@acme.test")).not.toBe(acme);
    expect(managedUserId("acme", "bob@acme.test")).not.toBe(acme);
    expect(managesAccount("acme", acme, "ann@acme.test")).toBe(true);
    expect(managesAccount("rival", acme, "ann@acme.test")).toBe(false);
    expect(managesAccount("acme", "a-password-account", "ann@acme.test")).toBe(false);
  });
});
