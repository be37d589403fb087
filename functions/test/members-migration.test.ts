import { Timestamp } from "firebase-admin/firestore";
import request from "supertest";
import { json } from "./support/admin";
import { daysFromNow, putSubscription } from "./support/fixtures";
import { bearer, createUser, resetEmulators, testApp, testDeps, type TestUser } from "./support/harness";

/** `migrate members` (§25): businesses written before members had documents of their own. */
describe("migrate members", () => {
  beforeEach(resetEmulators);

  /** A business document in the shape before §25, as the service wrote it then. */
  async function legacyBusiness(id: string, owner: TestUser, member: TestUser, suspended: string) {
    const { db } = await testDeps();
    const at = (daysAgo: number) => Timestamp.fromMillis(Date.now() - daysAgo * 86_400_000);
    await db.doc(`businesses/${id}`).set({
      name: `${id} Co`,
      memberIds: [owner.uid, member.uid],
      roles: { [owner.uid]: "owner", [member.uid]: "admin" },
      members: {
        [owner.uid]: { joinedAt: at(30), seatAssignedAt: at(30), source: "owner" },
        // The SCIM User: a profile, a group, a seat since 10 days.
        [member.uid]: { joinedAt: at(20), seatAssignedAt: at(10), source: "scim", scim: { userName: member.email, externalId: "ext-1", displayName: "Ann", name: {}, emails: [], created: at(20), lastModified: at(20) } },
        // Suspended by SCIM: out of memberIds, kept in members.
        [suspended]: { joinedAt: at(15), source: "scim", suspended: true, managed: true, scim: { userName: `${suspended}@acme.test`, externalId: null, displayName: null, name: {}, emails: [], created: at(15), lastModified: at(15) } },
      },
      scimGroups: { g1: { displayName: "Engineers", externalId: null, memberIds: [member.uid, suspended], created: at(20), lastModified: at(20) } },
    });
  }

  it("moves members into documents of their own, once, and goes on where a stopped run left off", async () => {
    const { db } = await testDeps();
    const app = await testApp();
    const [owner, member] = [await createUser(), await createUser()];
    await legacyBusiness("a-legacy", owner, member, "gone-a");
    await legacyBusiness("b-legacy", owner, member, "gone-b");
    await putSubscription("b-legacy", { status: "active", seats: 5, currentPeriodEnd: daysFromNow(30), entitlements: ["pro"] });
    // A run stopped after the first business: the next goes on from the second.
    await db.doc("registry/membersMigration").set({ after: "a-legacy" });
    expect(await json("migrate", "members")).toEqual({ businessesRead: 1, businessesMigrated: 1, membersWritten: 3 });
    expect((await db.doc("businesses/a-legacy").get()).get("memberIds")).toEqual([owner.uid, member.uid]);
    expect((await db.doc("registry/membersMigration").get()).exists).toBe(false);
    expect(await json("migrate", "members")).toEqual({ businessesRead: 2, businessesMigrated: 1, membersWritten: 3 });
    // Nothing left to move: a run reads and changes nothing.
    expect(await json("migrate", "members")).toEqual({ businessesRead: 2, businessesMigrated: 0, membersWritten: 0 });

    const business = (await db.doc("businesses/b-legacy").get()).data()!;
    expect(Object.keys(business).sort()).toEqual(["name", "scimGroups"]);
    expect(business.scimGroups.g1).not.toHaveProperty("memberIds");
    const members = Object.fromEntries((await db.collection("businesses/b-legacy/members").get()).docs.map((doc) => [doc.id, doc.data()]));
    expect(Object.keys(members).sort()).toEqual([owner.uid, member.uid, "gone-b"].sort());
    expect(members[member.uid]).toMatchObject({ uid: member.uid, role: "admin", source: "scim", suspended: false, groups: ["g1"], scimUserName: member.email.toLowerCase(), scimExternalId: "ext-1" });
    expect(members["gone-b"]).toMatchObject({ suspended: true, managed: true, seatAssignedAt: null, groups: ["g1"] });

    // The service reads the new shape: the member sees both businesses with their seats, and the subscription reaches them.
    const me = (await request(app).get("/api/v1/users/me").set(bearer(member))).body;
    expect(me.businesses.map((entry: { id: string; role: string; seat: boolean }) => [entry.id, entry.role, entry.seat]).sort()).toEqual([
      ["a-legacy", "admin", true],
      ["b-legacy", "admin", true],
    ]);
    expect(me.entitlements.map((grant: { key: string }) => grant.key)).toContain("pro");
    const shown = await json("business", "show", "--id", "b-legacy");
    expect(shown).toMatchObject({ seatsPaid: 5, seatsUsed: 2, seatsHeld: 0 });
    const listed = await request(app).get("/api/v1/businesses/b-legacy/members").set(bearer(owner));
    expect(listed.body.items.map((item: { uid: string }) => item.uid)).toEqual([owner.uid, member.uid, "gone-b"]);
  });
});

/** `migrate seats` (§25): seats given before the seat shards, counted in none of them. */
describe("migrate seats", () => {
  beforeEach(resetEmulators);

  it("counts each seat given before the shards in its holder's home shard, once, so that the limit and a freed seat are exact", async () => {
    const { db } = await testDeps();
    const app = await testApp();
    const owner = await createUser();
    const created = await request(app).post("/api/v1/businesses").set(bearer(owner)).send({ name: "Older" });
    const businessId = created.body.id as string;
    await putSubscription(businessId, { status: "active", seats: 4, currentPeriodEnd: daysFromNow(30), entitlements: ["pro"] });
    // Three seat holders written as the service wrote them before the shards: no seatShard, counted nowhere.
    const at = Timestamp.fromMillis(Date.now() - 86_400_000);
    const holders = await Promise.all([createUser(), createUser(), createUser()]);
    for (const holder of holders) {
      const document = { uid: holder.uid, role: "member", joinedAt: at, seatAssignedAt: at, source: "invitation", suspended: false, managed: false, groups: [] };
      await db.doc(`businesses/${businessId}/members/${holder.uid}`).set(document);
      await db.doc(`users/${holder.uid}/memberships/${businessId}`).set(document);
    }
    // What the limit is kept by: the seat shards.
    const seatsUsed = async () => (await db.collection(`businesses/${businessId}/seatShards`).get()).docs.reduce((sum, doc) => sum + (Number(doc.get("used")) || 0), 0);
    // Only the owner's seat is counted: the limit would let three more in (the members list counts all four).
    expect(await seatsUsed()).toBe(1);
    expect((await json("business", "show", "--id", businessId)).seatsUsed).toBe(4);
    expect(await json("migrate", "seats")).toEqual({ businessesRead: 1, seatsCounted: 3 });
    expect(await seatsUsed()).toBe(4);
    // The shards are not shared out for the quantity: the seat balancer is asked to.
    expect((await db.doc(`subscriptions/${businessId}`).get()).get("seatsPending")).toBe(true);
    expect(await json("migrate", "seats")).toEqual({ businessesRead: 1, seatsCounted: 0 });
    expect(await seatsUsed()).toBe(4);
    // A seat freed now leaves the shard that counts it: exact.
    expect((await request(app).delete(`/api/v1/businesses/${businessId}/members/${holders[0].uid}`).set(bearer(owner))).status).toBe(204);
    expect(await seatsUsed()).toBe(3);
  });
});
