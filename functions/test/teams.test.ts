import request from "supertest";
import type { Express } from "express";
import { startLocalStripe, type LocalStripe } from "../../tools/local-stack/stripe-server";
import { daysFromNow, countDocuments, putSubscription } from "./support/fixtures";
import { bearer, createUser, expectProblem, otherInstanceApp, resetEmulators, sendRetryingUnavailable, testApp, testDeps, type TestUser } from "./support/harness";
import { signed, subscriptionEvent } from "./support/stripe-events";

/** Contract §17: businesses that manage their own members, seats, invitations and billing. */

const api = "/api/v1";

async function verifiedUser(displayName?: string): Promise<TestUser> {
  const user = await createUser({ displayName });
  await (await testDeps()).auth.updateUser(user.uid, { emailVerified: true });
  return user;
}

async function newBusiness(app: Express, owner: TestUser, name = "Acme") {
  const response = await request(app).post(`${api}/businesses`).set(bearer(owner)).send({ name });
  expect(response.status).toBe(201);
  return response.body.id as string;
}

async function invite(app: Express, by: TestUser, businessId: string, body: Record<string, unknown>) {
  return request(app).post(`${api}/businesses/${businessId}/invitations`).set(bearer(by)).send(body);
}

const tokenOf = (acceptUrl: string) => acceptUrl.split("/invitations/")[1];

/** Invites and accepts: the invitee joins with the given role and seat. */
async function join(app: Express, by: TestUser, businessId: string, who: TestUser, body: Record<string, unknown> = {}) {
  const invited = await invite(app, by, businessId, { email: who.email, ...body });
  expect(invited.status).toBe(201);
  const accepted = await request(app).post(`${api}/invitations/accept`).set(bearer(who)).send({ token: tokenOf(invited.body.acceptUrl) });
  expect(accepted.status).toBe(200);
}

const entitlementKeysOf = async (app: Express, user: TestUser) =>
  ((await request(app).get(`${api}/users/me`).set(bearer(user))).body.entitlements as { key: string; source: string }[]).filter((grant) => grant.source === "subscription").map((grant) => grant.key);

const auditActions = async (businessId: string) => {
  const { db } = await testDeps();
  const entries = await db.collection("auditLog").where("target", "==", businessId).get();
  return entries.docs.map((doc) => doc.get("action") as string).sort();
};

describe("businesses, members and seats (§17)", () => {
  beforeEach(resetEmulators);

  it("lets a user create a business they own, with a seat, and hides it from everyone else", async () => {
    const app = await testApp();
    const owner = await verifiedUser("Olive Owner");
    const stranger = await verifiedUser();
    const create = await request(app).post(`${api}/businesses`).set(bearer(owner)).send({ name: "  Acme  " });
    expect(create.status).toBe(201);
    expect(create.body).toEqual({ id: expect.any(String), name: "Acme", role: "owner" });
    const id = create.body.id;
    const business = await request(app).get(`${api}/businesses/${id}`).set(bearer(owner));
    expect(business.body).toEqual({
      id,
      name: "Acme",
      role: "owner",
      seat: true,
      billingAccount: false,
      subscription: { businessId: id, status: "none", plan: null, seats: null, currentPeriodEnd: null, cancelAtPeriodEnd: false, entitlements: [], seatsUsed: 1 },
    });
    expectProblem(await request(app).get(`${api}/businesses/${id}`).set(bearer(stranger)), 404, "business_not_found");
    expectProblem(await request(app).get(`${api}/businesses/${id}/members`).set(bearer(stranger)), 404, "business_not_found");
    expectProblem(await request(app).get(`${api}/businesses/nope`).set(bearer(owner)), 404, "business_not_found");
    const me = await request(app).get(`${api}/users/me`).set(bearer(owner));
    expect(me.body.businesses).toEqual([{ id, name: "Acme", role: "owner", seat: true, entitled: false, ssoRequired: false }]);
    expect(await auditActions(id)).toEqual(["business.create"]);
  });

  it("refuses bad bodies with 400 and changes nothing", async () => {
    const app = await testApp();
    const owner = await verifiedUser();
    for (const body of [{}, { name: "" }, { name: "x".repeat(201) }, { name: "A", extra: 1 }, { name: 5 }]) {
      expectProblem(await request(app).post(`${api}/businesses`).set(bearer(owner)).send(body), 400, "invalid_request");
    }
    expect(await countDocuments("businesses")).toBe(0);
    const id = await newBusiness(app, owner);
    for (const body of [{ email: "not-an-email" }, { email: "a@b.example", role: "owner" }, { email: "a@b.example", seat: "yes" }, { email: "a@b.example", x: 1 }]) {
      expectProblem(await invite(app, owner, id, body), 400, "invalid_request");
    }
    expectProblem(await request(app).patch(`${api}/businesses/${id}/members/${owner.uid}`).set(bearer(owner)).send({}), 400, "invalid_request");
    expect(await countDocuments("mail")).toBe(0);
    expectProblem(await request(app).post(`${api}/businesses`).send({ name: "A" }), 401, "unauthenticated");
  });

  it("lets a user own at most 10 businesses", async () => {
    const app = await testApp();
    const owner = await verifiedUser();
    for (let i = 0; i < 10; i += 1) await newBusiness(app, owner, `B${i}`);
    expectProblem(await request(app).post(`${api}/businesses`).set(bearer(owner)).send({ name: "Eleventh" }), 409, "business_limit_reached");
  });

  it("invites by email: a mail document, a public preview, one acceptance by the verified address", async () => {
    const app = await testApp();
    const owner = await verifiedUser("Olive Owner");
    const colleague = await verifiedUser("Carl Colleague");
    const id = await newBusiness(app, owner);
    const invited = await invite(app, owner, id, { email: colleague.email.toUpperCase(), role: "admin" });
    expect(invited.status).toBe(201);
    expect(invited.body).toEqual({ id: expect.any(String), email: colleague.email, role: "admin", seat: true, expiresAt: expect.any(String), acceptUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:5001\/invitations\/inv_[0-9A-Za-z]{43}$/) });
    expect(Date.parse(invited.body.expiresAt) - Date.now()).toBeGreaterThan(7 * 86_400_000 - 60_000);
    const token = tokenOf(invited.body.acceptUrl);

    const { db } = await testDeps();
    const mail = (await db.collection("mail").get()).docs.map((doc) => doc.data());
    expect(mail).toEqual([{ to: colleague.email, message: { subject: expect.stringContaining("Acme"), text: expect.stringContaining(invited.body.acceptUrl), html: expect.stringContaining(invited.body.acceptUrl) }, createdAt: expect.anything() }]);
    // The token is kept only as its hash.
    expect(JSON.stringify((await db.collection("businesses").get()).docs.map((doc) => doc.data()))).not.toContain(token);
    expect((await db.collection("invitationTokens").get()).docs.map((doc) => doc.id)).not.toContain(token);

    const preview = await request(app).get(`${api}/invitations/${token}`);
    expect(preview.status).toBe(200);
    expect(preview.body).toEqual({ businessName: "Acme", invitedBy: "Olive Owner", role: "admin", seat: true, expiresAt: invited.body.expiresAt, emailHint: `u***@example.test` });
    const listed = await request(app).get(`${api}/businesses/${id}/invitations`).set(bearer(owner));
    expect(listed.body.items).toEqual([{ id: invited.body.id, email: colleague.email, role: "admin", seat: true, expiresAt: invited.body.expiresAt, invitedBy: "Olive Owner", createdAt: expect.any(String) }]);

    const accepted = await request(app).post(`${api}/invitations/accept`).set(bearer(colleague)).send({ token });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({ businessId: id, role: "admin", seat: true });
    expectProblem(await request(app).post(`${api}/invitations/accept`).set(bearer(colleague)).send({ token }), 404, "invitation_not_found");
    expectProblem(await request(app).get(`${api}/invitations/${token}`), 404, "invitation_not_found");
    expect((await request(app).get(`${api}/businesses/${id}/invitations`).set(bearer(owner))).body.items).toEqual([]);

    const members = await request(app).get(`${api}/businesses/${id}/members`).set(bearer(colleague));
    expect(members.status).toBe(200);
    expect(members.body.items.map((member: { email: string; role: string; seat: boolean }) => [member.email, member.role, member.seat])).toEqual([
      [owner.email, "owner", true],
      [colleague.email, "admin", true],
    ]);
    expect(await auditActions(id)).toEqual(["business.create", "business.invitation.accept", "business.invitation.create"]);
  });

  it("accepts only from the invited, verified address; unknown, revoked, replaced and declined tokens are the same 404", async () => {
    const app = await testApp();
    const owner = await verifiedUser();
    const invitee = await createUser();
    const other = await verifiedUser();
    const id = await newBusiness(app, owner);
    const first = await invite(app, owner, id, { email: invitee.email });
    const token = tokenOf(first.body.acceptUrl);
    expectProblem(await request(app).post(`${api}/invitations/accept`).set(bearer(other)).send({ token }), 403, "invitation_email_mismatch");
    expectProblem(await request(app).post(`${api}/invitations/accept`).set(bearer(invitee)).send({ token }), 403, "email_not_verified");

    const second = await invite(app, owner, id, { email: invitee.email, seat: false });
    expectProblem(await request(app).get(`${api}/invitations/${token}`), 404, "invitation_not_found");
    const replacement = tokenOf(second.body.acceptUrl);
    expect((await request(app).get(`${api}/invitations/${replacement}`)).body.seat).toBe(false);
    expect((await request(app).post(`${api}/invitations/decline`).set(bearer(other)).send({ token: replacement })).status).toBe(204);
    expectProblem(await request(app).post(`${api}/invitations/accept`).set(bearer(invitee)).send({ token: replacement }), 404, "invitation_not_found");

    const third = await invite(app, owner, id, { email: other.email });
    expect((await request(app).delete(`${api}/businesses/${id}/invitations/${third.body.id}`).set(bearer(owner))).status).toBe(204);
    expectProblem(await request(app).post(`${api}/invitations/accept`).set(bearer(other)).send({ token: tokenOf(third.body.acceptUrl) }), 404, "invitation_not_found");
    expectProblem(await request(app).delete(`${api}/businesses/${id}/invitations/${third.body.id}`).set(bearer(owner)), 404, "invitation_not_found");
    for (const bad of ["inv_short", "x".repeat(90), "inv_" + "A".repeat(43), "__x__", "inv_é"]) {
      expectProblem(await request(app).get(`${api}/invitations/${encodeURIComponent(bad)}`), 404, "invitation_not_found");
    }
    expectProblem(await invite(app, owner, id, { email: owner.email }), 409, "already_member");
  });

  it("sends at most 50 invitations per business in 24 hours", async () => {
    const app = await testApp();
    const owner = await verifiedUser();
    const id = await newBusiness(app, owner);
    for (let i = 0; i < 50; i += 1) expect((await invite(app, owner, id, { email: `person${i}@example.test`, seat: false })).status).toBe(201);
    const refused = await invite(app, owner, id, { email: "one-more@example.test", seat: false });
    expectProblem(refused, 429, "rate_limited");
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(86_000);
    expect(await countDocuments("mail")).toBe(50);
  });

  it("holds the seat limit: no third seat of two, no entitlement without a seat, on any instance at the next request", async () => {
    const app = await testApp();
    const owner = await verifiedUser();
    const colleague = await verifiedUser();
    const third = await verifiedUser();
    const id = await newBusiness(app, owner);
    await putSubscription(id, { status: "active", seats: 2, currentPeriodEnd: daysFromNow(30), entitlements: ["pro"] });
    await join(app, owner, id, colleague);
    expectProblem(await invite(app, owner, id, { email: third.email }), 409, "no_seat_available");
    await join(app, owner, id, third, { seat: false });
    expectProblem(await request(app).patch(`${api}/businesses/${id}/members/${third.uid}`).set(bearer(owner)).send({ seat: true }), 409, "no_seat_available");

    const other = await otherInstanceApp();
    expect(await entitlementKeysOf(other, colleague)).toEqual(["pro"]);
    expect(await entitlementKeysOf(other, third)).toEqual([]);
    const freed = await request(app).patch(`${api}/businesses/${id}/members/${colleague.uid}`).set(bearer(owner)).send({ seat: false });
    expect(freed.body).toMatchObject({ uid: colleague.uid, seat: false, entitled: false, seatAssignedAt: null });
    expect(await entitlementKeysOf(other, colleague)).toEqual([]);
    const given = await request(app).patch(`${api}/businesses/${id}/members/${third.uid}`).set(bearer(owner)).send({ seat: true });
    expect(given.body).toMatchObject({ uid: third.uid, seat: true, entitled: true });
    expect(await entitlementKeysOf(other, third)).toEqual(["pro"]);
    expect((await request(other).get(`${api}/businesses/${id}`).set(bearer(third))).body.subscription).toMatchObject({ seats: 2, seatsUsed: 2 });
  });

  it("holds the newest seats when the paid quantity drops below the seats in use, deleting nothing", async () => {
    const app = await testApp();
    const owner = await verifiedUser();
    const early = await verifiedUser();
    const late = await verifiedUser();
    const id = await newBusiness(app, owner);
    await putSubscription(id, { status: "active", seats: 3, currentPeriodEnd: daysFromNow(30), entitlements: ["pro"] });
    await join(app, owner, id, early);
    await join(app, owner, id, late);
    await putSubscription(id, { status: "active", seats: 2, currentPeriodEnd: daysFromNow(30), entitlements: ["pro"] });
    const members = (await request(app).get(`${api}/businesses/${id}/members`).set(bearer(owner))).body.items;
    expect(members.map((member: { uid: string; seat: boolean; entitled: boolean }) => [member.uid, member.seat, member.entitled])).toEqual([
      [owner.uid, true, true],
      [early.uid, true, true],
      [late.uid, true, false],
    ]);
    expect(await entitlementKeysOf(app, late)).toEqual([]);
    expect((await request(app).get(`${api}/users/me`).set(bearer(late))).body.businesses).toEqual([{ id, name: "Acme", role: "member", seat: true, entitled: false, ssoRequired: false }]);
    // Someone frees a seat: the held one draws again.
    expect((await request(app).delete(`${api}/businesses/${id}/members/${early.uid}`).set(bearer(early))).status).toBe(204);
    expect(await entitlementKeysOf(app, late)).toEqual(["pro"]);
  });

  it("keeps an owner, lets only owners make owners, and only owners and admins manage members", async () => {
    const app = await testApp();
    const owner = await verifiedUser();
    const admin = await verifiedUser();
    const member = await verifiedUser();
    const id = await newBusiness(app, owner);
    await join(app, owner, id, admin, { role: "admin" });
    await join(app, owner, id, member, { seat: false });
    const patch = (by: TestUser, uid: string, body: object) => request(app).patch(`${api}/businesses/${id}/members/${uid}`).set(bearer(by)).send(body);
    expectProblem(await patch(owner, owner.uid, { role: "admin" }), 409, "last_owner");
    expectProblem(await request(app).delete(`${api}/businesses/${id}/members/${owner.uid}`).set(bearer(owner)), 409, "last_owner");
    expectProblem(await patch(admin, member.uid, { role: "owner" }), 403, "not_business_admin");
    expectProblem(await patch(admin, owner.uid, { role: "member" }), 403, "not_business_admin");
    expectProblem(await request(app).delete(`${api}/businesses/${id}/members/${owner.uid}`).set(bearer(admin)), 403, "not_business_admin");
    expectProblem(await patch(member, admin.uid, { seat: false }), 403, "not_business_admin");
    expectProblem(await request(app).get(`${api}/businesses/${id}/members`).set(bearer(member)), 403, "not_business_admin");
    expectProblem(await invite(app, member, id, { email: "x@example.test" }), 403, "not_business_admin");
    expectProblem(await patch(owner, "nobody", { seat: true }), 404, "membership_not_found");
    expect((await patch(admin, member.uid, { role: "admin", seat: true })).body).toMatchObject({ role: "admin", seat: true });
    expect((await patch(owner, admin.uid, { role: "owner" })).body).toMatchObject({ role: "owner" });
    // Two owners now: either may step down.
    expect((await request(app).delete(`${api}/businesses/${id}/members/${owner.uid}`).set(bearer(owner))).status).toBe(204);
    expectProblem(await request(app).get(`${api}/businesses/${id}`).set(bearer(owner)), 404, "business_not_found");
    const page1 = await request(app).get(`${api}/businesses/${id}/members?limit=1`).set(bearer(admin));
    const page2 = await request(app).get(`${api}/businesses/${id}/members?limit=1&cursor=${page1.body.nextCursor}`).set(bearer(admin));
    expect([...page1.body.items, ...page2.body.items].map((item: { uid: string }) => item.uid)).toEqual([admin.uid, member.uid]);
    expect(page2.body.nextCursor).toBeNull();
    expectProblem(await request(app).get(`${api}/businesses/${id}/members?cursor=forged`).set(bearer(admin)), 400, "invalid_request");
    expect(await auditActions(id)).toEqual(expect.arrayContaining(["business.member.change", "business.member.leave"]));
  });

  it("gives the last free seat once when two admins race for it, and one seat to one of two racing acceptances", async () => {
    const app = await testApp();
    const owner = await verifiedUser();
    const admin = await verifiedUser();
    const [a, b] = [await verifiedUser(), await verifiedUser()];
    const id = await newBusiness(app, owner);
    await join(app, owner, id, admin, { role: "admin", seat: false });
    await join(app, owner, id, a, { seat: false });
    await join(app, owner, id, b, { seat: false });
    await putSubscription(id, { status: "active", seats: 2, currentPeriodEnd: daysFromNow(30), entitlements: ["pro"] });
    const other = await otherInstanceApp();
    const raced = await Promise.all([
      request(app).patch(`${api}/businesses/${id}/members/${a.uid}`).set(bearer(owner)).send({ seat: true }),
      request(other).patch(`${api}/businesses/${id}/members/${b.uid}`).set(bearer(admin)).send({ seat: true }),
    ]);
    expect(raced.map((response) => response.status).sort()).toEqual([200, 409]);
    expect(raced.find((response) => response.status === 409)!.body.code).toBe("no_seat_available");
    expect((await request(app).get(`${api}/businesses/${id}`).set(bearer(owner))).body.subscription.seatsUsed).toBe(2);

    // Two seat invitations made before the quantity dropped, accepted at once for one free seat.
    const business = await newBusiness(app, owner, "Globex");
    const [c, d] = [await verifiedUser(), await verifiedUser()];
    const tokens = [];
    for (const invitee of [c, d]) tokens.push(tokenOf((await invite(app, owner, business, { email: invitee.email })).body.acceptUrl));
    await putSubscription(business, { status: "active", seats: 2, currentPeriodEnd: daysFromNow(30), entitlements: ["pro"] });
    const accepts = await Promise.all([
      request(app).post(`${api}/invitations/accept`).set(bearer(c)).send({ token: tokens[0] }),
      request(other).post(`${api}/invitations/accept`).set(bearer(d)).send({ token: tokens[1] }),
    ]);
    expect(accepts.map((response) => response.status).sort()).toEqual([200, 409]);
    const members = (await request(app).get(`${api}/businesses/${business}/members`).set(bearer(owner))).body.items;
    expect(members.filter((member: { seat: boolean }) => member.seat)).toHaveLength(2);
  });

  it("keeps seats exact when 20 acceptances race for 5 free seats on two instances (§25)", async () => {
    const app = await testApp();
    const other = await otherInstanceApp();
    const owner = await verifiedUser();
    const id = await newBusiness(app, owner, "Racing Co");
    const invitees = await Promise.all(Array.from({ length: 20 }, () => verifiedUser()));
    const tokens: string[] = [];
    for (const invitee of invitees) tokens.push(tokenOf((await invite(app, owner, id, { email: invitee.email })).body.acceptUrl));
    // The owner holds one seat of six.
    await putSubscription(id, { status: "active", seats: 6, currentPeriodEnd: daysFromNow(30), entitlements: ["pro"] });
    // Two instances' transactions on the seat counts may answer 503 "retry later" under the emulator's locks: retried as a client would.
    const accepts = await sendRetryingUnavailable(invitees.length, (index) => request(index % 2 ? other : app).post(`${api}/invitations/accept`).set(bearer(invitees[index])).send({ token: tokens[index] }));
    expect(accepts.filter((response) => response.status === 200)).toHaveLength(5);
    expect(accepts.filter((response) => response.status === 409).map((response) => response.body.code)).toEqual(Array(15).fill("no_seat_available"));
    expect((await request(app).get(`${api}/businesses/${id}`).set(bearer(owner))).body.subscription.seatsUsed).toBe(6);
    const members = (await request(app).get(`${api}/businesses/${id}/members?limit=100`).set(bearer(owner))).body.items as { seat: boolean; entitled: boolean }[];
    expect(members.map((member) => [member.seat, member.entitled])).toEqual(Array(6).fill([true, true]));
  });
});

describe("self-serve billing (§17)", () => {
  let stripe: LocalStripe;
  beforeAll(async () => {
    stripe = await startLocalStripe({ prices: [{ id: "price_team", lookupKey: "team", entitlements: "pro" }] });
  });
  afterAll(() => stripe.stop());
  beforeEach(async () => {
    await resetEmulators();
    stripe.requests.length = 0;
    stripe.failNext(0, "disconnect");
  });

  const billingApp = async (overrides: { stripeSecretKey?: string } = {}) => {
    const port = Number(new URL(stripe.url).port);
    return testApp({ config: { billing: { stripeSecretKey: "sk_test_local", apiBase: { protocol: "http", host: "127.0.0.1", port }, plans: new Map([["team", "team"]]), ...overrides } } });
  };

  it("opens a Checkout Session from what the business needs, and answers its URL", async () => {
    const app = await billingApp();
    const owner = await verifiedUser();
    const colleague = await verifiedUser();
    const id = await newBusiness(app, owner);
    await join(app, owner, id, colleague);
    const checkout = await request(app).post(`${api}/businesses/${id}/billing/checkout`).set(bearer(owner)).send({ plan: "team", seats: 5 });
    expect(checkout.status).toBe(200);
    const created = stripe.requests.find((call) => call.path === "/v1/checkout/sessions")!;
    expect(checkout.body).toEqual({ url: expect.stringMatching(new RegExp(`^${stripe.url}/checkout/cs_test_`)) });
    expect(created.authorization).toBe("Bearer sk_test_local");
    expect(created.params).toEqual({
      mode: "subscription",
      line_items: [{ price: "price_team", quantity: "5", adjustable_quantity: { enabled: "true", minimum: "2", maximum: "10000" } }],
      subscription_data: { metadata: { businessId: id } },
      metadata: { businessId: id },
      client_reference_id: id,
      customer_email: owner.email,
      success_url: `http://127.0.0.1:5001/account?business=${id}&checkout=success`,
      cancel_url: `http://127.0.0.1:5001/account?business=${id}&checkout=canceled`,
    });
    expect(stripe.requests.find((call) => call.path === "/v1/prices")!.params).toMatchObject({ lookup_keys: ["team"] });
    expectProblem(await request(app).post(`${api}/businesses/${id}/billing/checkout`).set(bearer(owner)).send({ plan: "team", seats: 1 }), 400, "invalid_request");
    expectProblem(await request(app).post(`${api}/businesses/${id}/billing/checkout`).set(bearer(owner)).send({ plan: "gold", seats: 5 }), 400, "invalid_request");
    // A caller's plan name is looked up as data, never as a property of the plans' prototype.
    for (const plan of ["__proto__", "constructor", "toString", "hasOwnProperty"]) {
      expectProblem(await request(app).post(`${api}/businesses/${id}/billing/checkout`).set(bearer(owner)).send({ plan, seats: 5 }), 400, "invalid_request");
    }
    expectProblem(await request(app).post(`${api}/businesses/${id}/billing/checkout`).set(bearer(colleague)).send({ plan: "team", seats: 5 }), 403, "not_business_admin");
  });

  it("records the customer from the webhook, then opens the Billing Portal for it; a live subscription is not bought twice", async () => {
    const app = await billingApp();
    const owner = await verifiedUser();
    const id = await newBusiness(app, owner);
    expectProblem(await request(app).post(`${api}/businesses/${id}/billing/portal`).set(bearer(owner)), 409, "no_billing_account");
    const { payload, header } = signed(subscriptionEvent({ businessId: id, customer: "cus_acme", quantity: 3 }));
    expect((await request(app).post(`${api}/billing/stripe/webhook`).set({ "Content-Type": "application/json", "Stripe-Signature": header }).send(payload)).status).toBe(200);
    const portal = await request(app).post(`${api}/businesses/${id}/billing/portal`).set(bearer(owner));
    expect(portal.status).toBe(200);
    expect(portal.body.url).toMatch(new RegExp(`^${stripe.url}/portal/bps_`));
    expect(stripe.requests.at(-1)!.params).toEqual({ customer: "cus_acme", return_url: `http://127.0.0.1:5001/account?business=${id}` });
    expectProblem(await request(app).post(`${api}/businesses/${id}/billing/checkout`).set(bearer(owner)).send({ plan: "team", seats: 5 }), 409, "subscription_exists");
    expect((await request(app).get(`${api}/businesses/${id}`).set(bearer(owner))).body.subscription).toMatchObject({ status: "active", seats: 3, seatsUsed: 1 });
  });

  it("answers 502 billing_unavailable when Stripe fails or is out of reach, and 503 when billing is not configured", async () => {
    const app = await billingApp();
    const owner = await verifiedUser();
    const id = await newBusiness(app, owner);
    const checkout = () => request(app).post(`${api}/businesses/${id}/billing/checkout`).set(bearer(owner)).send({ plan: "team", seats: 2 });
    stripe.failNext(2, { status: 500 });
    expectProblem(await checkout(), 502, "billing_unavailable");
    stripe.failNext(2, "disconnect");
    expectProblem(await checkout(), 502, "billing_unavailable");
    const unreachable = await testApp({ config: { billing: { stripeSecretKey: "sk_test_local", apiBase: { protocol: "http", host: "127.0.0.1", port: 9 }, plans: new Map([["team", "price_team"]]) } } });
    expectProblem(await request(unreachable).post(`${api}/businesses/${id}/billing/checkout`).set(bearer(owner)).send({ plan: "team", seats: 2 }), 502, "billing_unavailable");
    const unconfigured = await billingApp({ stripeSecretKey: "" });
    expectProblem(await request(unconfigured).post(`${api}/businesses/${id}/billing/checkout`).set(bearer(owner)).send({ plan: "team", seats: 2 }), 503, "billing_not_configured");
    expect(await countDocuments("subscriptions")).toBe(0);
  });
});
