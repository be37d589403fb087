import type { Express } from "express";
import request from "supertest";
import { startLocalDns, type LocalDns } from "../../tools/local-stack/dns-server";
import { runDeployedFunctions, type DeployedFunctions } from "../src/local-functions";
import { setSubscription } from "../src/subscriptions/service";
import { bearer, createUser, eventually, operatorDeps, otherInstanceApp, resetEmulators, testApp, testDeps, type TestUser } from "./support/harness";

/**
 * §25's seats without a business-wide lock: seats given from shards (exact across instances),
 * waiters seated in the background after a raise, the newest seats taken back after a cut, and a
 * freed seat passed to the longest waiting member in the same change.
 */

const api = "/api/v1";
const scim = `${api}/scim/v2`;
const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

let dns: LocalDns;
/** The seat balancer as deployed: the `seatBalance` trigger on each pending subscription, `seatSweep` here every half second. */
let balancer: DeployedFunctions | undefined;
const startBalancer = async () => {
  const { db, logger } = await testDeps();
  return runDeployedFunctions(db, { triggers: ["seatBalance"], schedules: { seatSweep: 500 }, warn: logger.warn });
};
beforeAll(async () => {
  dns = await startLocalDns();
});
afterAll(() => dns.stop());
beforeEach(resetEmulators);
afterEach(async () => {
  await balancer?.stop();
  balancer = undefined;
});

const periodEnd = () => new Date(Date.now() + 30 * 86_400_000).toISOString();
/** The operator sets the paid quantity, as Stripe's events do (both leave the seats pending for the balancer). */
const setSeats = async (businessId: string, seats: number) => setSubscription(await operatorDeps(), { business: businessId, status: "active", plan: "team", periodEnd: periodEnd(), seats, entitlements: ["pro"] });

async function setup(seats: number) {
  const app = await testApp({ config: { dnsResolvers: [dns.address] } });
  const owner = await createUser({ displayName: "Olivia Owner", email: "olivia@acme.test" });
  const businessId = (await request(app).post(`${api}/businesses`).set(bearer(owner)).send({ name: "Acme" })).body.id as string;
  await setSeats(businessId, seats);
  const token = await request(app).post(`${api}/businesses/${businessId}/scim/tokens`).set(bearer(owner)).send({ name: "Okta" });
  const added = await request(app).post(`${api}/businesses/${businessId}/domains`).set(bearer(owner)).send({ domain: "acme.test" });
  dns.set(added.body.txtName, "TXT", [added.body.txtValue]);
  expect((await request(app).post(`${api}/businesses/${businessId}/domains/acme.test/verify`).set(bearer(owner))).status).toBe(200);
  return { app, owner, businessId, auth: { Authorization: `Bearer ${token.body.token}` } };
}

const provision = (app: Express, auth: Record<string, string>, email: string) =>
  request(app).post(`${scim}/Users`).set(auth).set("Content-Type", "application/scim+json").send(JSON.stringify({ schemas: [USER], userName: email, active: true }));

async function seatsOf(app: Express, owner: TestUser, businessId: string) {
  const items: Array<{ uid: string; seat: boolean }> = [];
  for (let cursor: string | null = null; ; ) {
    const page: request.Response = await request(app).get(`${api}/businesses/${businessId}/members`).query({ limit: 100, ...(cursor ? { cursor } : {}) }).set(bearer(owner));
    expect(page.status).toBe(200);
    items.push(...page.body.items);
    cursor = page.body.nextCursor;
    if (!cursor) break;
  }
  return { holders: items.filter((member) => member.seat).map((member) => member.uid), used: (await request(app).get(`${api}/businesses/${businessId}`).set(bearer(owner))).body.subscription.seatsUsed as number };
}

describe("seats without a business-wide lock (§25)", () => {
  it("seats the longest waiting after a raise, in the background; takes the newest back after a cut", async () => {
    const { app, owner, businessId, auth } = await setup(1);
    // The owner holds the one seat: everyone SCIM provisions waits, in the order they came.
    const waiting: string[] = [];
    for (const name of ["ann", "bob", "cat", "dan", "eve"]) {
      const created = await provision(app, auth, `${name}@acme.test`);
      expect(created.status).toBe(201);
      waiting.push(created.body.id);
    }
    expect((await seatsOf(app, owner, businessId)).holders).toEqual([owner.uid]);

    balancer = await startBalancer();
    await setSeats(businessId, 4);
    await eventually(async () => expect((await seatsOf(app, owner, businessId)).holders.sort()).toEqual([owner.uid, ...waiting.slice(0, 3)].sort()), 10_000);
    const pending = async () => (await (await testDeps()).db.doc(`subscriptions/${businessId}`).get()).get("seatsPending");
    await eventually(async () => expect(await pending()).toBeUndefined(), 5_000);
    expect((await seatsOf(app, owner, businessId)).used).toBe(4);

    // Cut to 2: the newest seats go back (the three seated together, so by uid, §17), and they wait again: one of them stays.
    await setSeats(businessId, 2);
    await eventually(async () => expect((await seatsOf(app, owner, businessId)).holders).toHaveLength(2), 10_000);
    const kept = (await seatsOf(app, owner, businessId)).holders.filter((uid) => uid !== owner.uid);
    expect(kept).toEqual([[...waiting.slice(0, 3)].sort().at(-1)]);
    expect((await seatsOf(app, owner, businessId)).used).toBe(2);
    // A full business refuses a seat to the product's PATCH (§17), whatever shard the member's lies in.
    const refused = await request(app).patch(`${api}/businesses/${businessId}/members/${waiting[4]}`).set(bearer(owner)).send({ seat: true });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("no_seat_available");
  });

  it("passes a freed seat to the longest waiting member in the same change: SCIM DELETE, suspension, removal", async () => {
    const { app, owner, businessId, auth } = await setup(2);
    const ids: string[] = [];
    for (const name of ["ann", "bob", "cat", "dan"]) ids.push((await provision(app, auth, `${name}@acme.test`)).body.id);
    const [ann, bob, cat, dan] = ids;
    // Owner and Ann hold the two seats; Bob, Cat and Dan wait, in that order.
    expect((await seatsOf(app, owner, businessId)).holders.sort()).toEqual([owner.uid, ann].sort());

    expect((await request(app).delete(`${scim}/Users/${ann}`).set(auth)).status).toBe(204);
    expect((await seatsOf(app, owner, businessId)).holders.sort()).toEqual([owner.uid, bob].sort());

    const suspended = await request(app).patch(`${scim}/Users/${bob}`).set(auth).send({ schemas: [PATCH], Operations: [{ op: "replace", value: { active: false } }] });
    expect(suspended.status).toBe(200);
    expect((await seatsOf(app, owner, businessId)).holders.sort()).toEqual([owner.uid, cat].sort());

    expect((await request(app).delete(`${api}/businesses/${businessId}/members/${cat}`).set(bearer(owner))).status).toBe(204);
    const after = await seatsOf(app, owner, businessId);
    expect(after.holders.sort()).toEqual([owner.uid, dan].sort());
    expect(after.used).toBe(2);
  });

  it("gives exactly the paid seats to SCIM clients spread over two instances, none of them refused with 503", async () => {
    const { app, owner, businessId, auth } = await setup(25);
    balancer = await startBalancer();
    // The shares are worked out once the balancer has seen the quantity: seats then come from one shard each.
    await eventually(async () => expect((await (await testDeps()).db.doc(`subscriptions/${businessId}`).get()).get("seatsPending")).toBeUndefined(), 5_000);
    const other = await otherInstanceApp({ config: { dnsResolvers: [dns.address] } });
    const answers = await Promise.all(Array.from({ length: 60 }, (_, index) => provision(index % 2 === 0 ? app : other, auth, `user${index}@acme.test`)));
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 201));
    const { holders, used } = await seatsOf(app, owner, businessId);
    expect(holders).toHaveLength(25);
    expect(used).toBe(25);
  });
});
