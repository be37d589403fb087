import fc from "fast-check";
import type { MemberRecord, ScimGroupRecord } from "../accounts/business-records";
import { ssoBlocks } from "../access/rules";
import { managedUserId, managesAccount, reconcileDirectory, wantsSeat } from "./rules";

const now = new Date("2026-06-15T12:00:00.000Z");
const at = (minutes: number) => new Date(now.getTime() - minutes * 60_000);

const member = (uid: string, joined: number, extra: Partial<MemberRecord> = {}): MemberRecord => ({
  uid,
  role: "member",
  joinedAt: at(joined),
  seat: false,
  seatAssignedAt: null,
  seatShard: null,
  waitingSince: null,
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

const owner = member("owner", 100, { role: "owner", source: "owner", scim: null, seat: true, seatAssignedAt: at(100), seatShard: 0 });

describe("wantsSeat", () => {
  it("is every newcomer without seat groups; with them, only someone in one of them (any case)", () => {
    expect(wantsSeat(null, [])).toBe(true);
    const settings = { roleGroups: {}, seatGroups: ["Licensed"] };
    expect(wantsSeat(settings, [])).toBe(false);
    expect(wantsSeat(settings, ["licensed"])).toBe(true);
  });
});

describe("reconcileDirectory", () => {
  it("makes admins of an admin group's members and members of the rest, never touching owners or unmanaged members", () => {
    const invited = member("invited", 50, { scim: null, source: "invitation", role: "admin" });
    const ann = member("ann", 40, { role: "admin" });
    const bob = member("bob", 30);
    const directory = { settings: { roleGroups: { admin: ["Admins"] }, seatGroups: null }, groups: [group("admins")] };
    const changed = reconcileDirectory(directory, inGroups([owner, invited, ann, bob], { admins: ["bob", "owner"] }), now);
    expect(changed.map((record) => [record.uid, record.role]).sort()).toEqual([
      ["ann", "member"],
      ["bob", "admin"],
    ]);
  });

  it("takes seats outside the seat groups (and their waits), and has members inside them without one wait from now", () => {
    const ann = member("ann", 40, { seat: true, seatAssignedAt: at(40), seatShard: 3 });
    const bob = member("bob", 30);
    const cat = member("cat", 20, { waitingSince: at(20) });
    const dan = member("dan", 10, { waitingSince: at(10) });
    const directory = { settings: { roleGroups: {}, seatGroups: ["Licensed"] }, groups: [group("Licensed")] };
    const changed = new Map(reconcileDirectory(directory, inGroups([owner, ann, bob, cat, dan], { Licensed: ["bob", "cat"] }), now).map((record) => [record.uid, record]));
    expect([...changed.keys()].sort()).toEqual(["ann", "bob", "dan"]);
    expect(changed.get("ann")).toMatchObject({ seat: false, seatAssignedAt: null, seatShard: null, waitingSince: null });
    // Bob waits from now; Cat keeps her place in the queue (unchanged); Dan, outside, stops waiting.
    expect(changed.get("bob")).toMatchObject({ seat: false, waitingSince: now });
    expect(changed.get("dan")).toMatchObject({ waitingSince: null });
  });

  it("never gives a seat, and leaves suspended members and owners alone, whatever the groups (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.record({ seat: fc.boolean(), suspended: fc.boolean(), inGroup: fc.boolean(), admin: fc.boolean() }), { maxLength: 12 }), (people) => {
        const members = inGroups([owner, ...people.map((person, index) => member(`u${index}`, 50 - index, { seat: person.seat && !person.suspended, seatAssignedAt: person.seat ? at(60) : null, seatShard: person.seat ? 0 : null, suspended: person.suspended }))], {
          L: people.flatMap((person, index) => (person.inGroup ? [`u${index}`] : [])),
          A: people.flatMap((person, index) => (person.admin ? [`u${index}`] : [])),
        });
        const directory = { settings: { roleGroups: { admin: ["A"] }, seatGroups: ["L"] }, groups: [group("L"), group("A")] };
        const changed = new Map(reconcileDirectory(directory, members, now).map((record) => [record.uid, record]));
        for (const record of members) {
          const after = changed.get(record.uid) ?? record;
          if (record.suspended || record.uid === "owner") expect(changed.has(record.uid)).toBe(false);
          if (!record.seat) expect(after.seat).toBe(false);
          if (after.seat && record.uid !== "owner") expect(after.groups).toContain("g-L");
          if (after.waitingSince !== null) expect(after.groups).toContain("g-L");
        }
      }),
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
