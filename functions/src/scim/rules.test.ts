import fc from "fast-check";
import type { BusinessRecord, MemberRecord, ScimGroupRecord } from "../accounts/business-records";
import { ssoBlocks } from "../access/rules";
import { managedUserId, managesAccount, reconcileDirectory, seatForNewcomer } from "./rules";

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
  ...extra,
});

const group = (displayName: string, memberIds: string[]): ScimGroupRecord => ({ id: `g-${displayName}`, displayName, externalId: null, memberIds, created: now, lastModified: now });

const business = (members: MemberRecord[], extra: Partial<BusinessRecord> = {}): BusinessRecord => ({
  id: "acme",
  name: "Acme",
  memberIds: members.filter((candidate) => !candidate.suspended).map((candidate) => candidate.uid),
  roles: Object.fromEntries(members.map((candidate) => [candidate.uid, candidate.role])),
  members,
  invitations: [],
  invitationsSent: [],
  stripeCustomerId: null,
  sso: null,
  domains: [],
  scimSettings: null,
  scimGroups: [],
  ...extra,
});

const owner = member("owner", 100, { role: "owner", source: "owner", scim: null, seat: true, seatAssignedAt: at(100) });

describe("seatForNewcomer", () => {
  it("gives a seat while one is free, counting pending seat invitations", () => {
    const invitation = { id: "i", email: "x@acme.test", role: "member" as const, seat: true, invitedBy: "owner", invitedByName: null, createdAt: at(5), expiresAt: at(-60), tokenHash: "h" };
    expect(seatForNewcomer(business([owner]), { seats: 2 }, [], now)).toBe(true);
    expect(seatForNewcomer(business([owner], { invitations: [invitation] }), { seats: 2 }, [], now)).toBe(false);
    expect(seatForNewcomer(business([owner]), { seats: null }, [], now)).toBe(true);
    expect(seatForNewcomer(business([owner]), null, [], now)).toBe(true);
  });

  it("with seat groups, only to someone in one of them (any case)", () => {
    const settings = { roleGroups: {}, seatGroups: ["Licensed"] };
    expect(seatForNewcomer(business([owner], { scimSettings: settings }), { seats: 5 }, [], now)).toBe(false);
    expect(seatForNewcomer(business([owner], { scimSettings: settings }), { seats: 5 }, ["licensed"], now)).toBe(true);
  });
});

describe("reconcileDirectory", () => {
  it("makes admins of an admin group's members and members of the rest, never touching owners or unmanaged members", () => {
    const invited = member("invited", 50, { scim: null, source: "invitation", role: "admin" });
    const ann = member("ann", 40, { role: "admin" });
    const bob = member("bob", 30);
    const state = business([owner, invited, ann, bob], { scimSettings: { roleGroups: { admin: ["Admins"] }, seatGroups: null }, scimGroups: [group("admins", ["bob", "owner"])] });
    const changed = reconcileDirectory(state, { seats: 10 }, now);
    expect(changed.map((record) => [record.uid, record.role]).sort()).toEqual([
      ["ann", "member"],
      ["bob", "admin"],
    ]);
  });

  it("frees seats outside the seat groups first, then gives free seats in join order", () => {
    const ann = member("ann", 40, { seat: true, seatAssignedAt: at(40) });
    const bob = member("bob", 30);
    const cat = member("cat", 20);
    const state = business([owner, ann, bob, cat], { scimSettings: { roleGroups: {}, seatGroups: ["Licensed"] }, scimGroups: [group("Licensed", ["bob", "cat"])] });
    const changed = new Map(reconcileDirectory(state, { seats: 2 }, now).map((record) => [record.uid, record.seat]));
    // Ann's seat goes back; of the one free seat, Bob (who joined first) gets it.
    expect(Object.fromEntries(changed)).toEqual({ ann: false, bob: true });
  });

  it("never gives more seats than the paid quantity, whatever the groups (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ seat: fc.boolean(), suspended: fc.boolean(), inGroup: fc.boolean(), admin: fc.boolean() }), { maxLength: 12 }),
        fc.integer({ min: 1, max: 8 }),
        (people, seats) => {
          const members = [owner, ...people.map((person, index) => member(`u${index}`, 50 - index, { seat: person.seat && !person.suspended, seatAssignedAt: person.seat ? at(60) : null, suspended: person.suspended }))];
          const state = business(members, {
            scimSettings: { roleGroups: { admin: ["A"] }, seatGroups: ["L"] },
            scimGroups: [group("L", people.flatMap((person, index) => (person.inGroup ? [`u${index}`] : []))), group("A", people.flatMap((person, index) => (person.admin ? [`u${index}`] : [])))],
          });
          const changed = new Map(reconcileDirectory(state, { seats }, now).map((record) => [record.uid, record]));
          const after = members.map((record) => changed.get(record.uid) ?? record);
          const held = after.filter((record) => record.seat).length;
          const before = members.filter((record) => record.seat).length;
          // Seats never grow past the paid quantity (they may stay above it when they already were).
          expect(held).toBeLessThanOrEqual(Math.max(seats, before));
          for (const record of after) {
            if (record.suspended) expect(changed.has(record.uid)).toBe(false);
            if (record.seat && record.uid !== "owner") expect(state.scimGroups[0].memberIds).toContain(record.uid);
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
