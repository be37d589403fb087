import type { Express } from "express";
import request from "supertest";
import { verifyActivationCertificate } from "../../docs/examples/verify-activation-certificate";
import type { LocalStripe } from "../../tools/local-stack/stripe-server";
import { appsWithLocalStripe } from "./support/local-stripe";
import { revokeModule } from "../src/revocations/service";
import { putBusiness } from "./support/fixtures";
import { bearer, createDeveloper, createUser, declareTrader, expectProblem, operatorDeps, publishModule, resetEmulators, testApp, testDeps, type TestDeveloper, type TestUser } from "./support/harness";

const api = "/api/v1";
const DAY_MS = 24 * 3600 * 1000;

/**
 * Perpetual fallback licences (§27) end to end: the local Stripe stand-in bills the subscription
 * (calendar months and years, each invoice naming the period it pays for) and sends its events to
 * the real webhook; downloads, confirmations, update checks and `/users/me` agree on what stays
 * the buyer's, on this instance and another. Versions published after a purchase are published
 * through an app whose clock is a day ahead, so that "after" never shares a second with the
 * subscription's start.
 */
describe("perpetual fallback (§27)", () => {
  let stripe: LocalStripe;
  let app: Express;
  let other: Express;
  let tomorrow: Express;

  const local = appsWithLocalStripe();
  const stripeConfig = () => local.stripeConfig();
  beforeAll(async () => {
    ({ stripe, app, other } = local);
    tomorrow = await testApp({ config: stripeConfig(), clock: () => new Date(Date.now() + DAY_MS) });
  });
  beforeEach(async () => {
    await resetEmulators();
    stripe.requests.length = 0;
    stripe.events.length = 0;
  });

  const submit = async (url: string) => {
    const answer = await fetch(url, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: "", redirect: "manual" });
    expect(answer.status).toBe(303);
  };
  const stripeCall = async (method: string, path: string, body?: string) => {
    const answer = await fetch(`${stripe.url}${path}`, { method, headers: { Authorization: "Bearer sk_test_local", "Content-Type": "application/x-www-form-urlencoded" }, body });
    expect(answer.status).toBe(200);
    return (await answer.json()) as Record<string, unknown>;
  };

  /** A publisher selling `moduleId` 1.0.0 on `pricing`; the price's answer is checked to carry its fallback. */
  async function sellingModule(publisherId: string, moduleId: string, pricing: Record<string, unknown>): Promise<TestDeveloper> {
    const developer = await createDeveloper(publisherId);
    const opened = await request(app).post(`${api}/developers/payouts/account`).set(bearer(developer));
    await submit(`${opened.body.onboardingUrl}/complete`);
    await declareTrader(developer, app);
    await publishModule(developer, { id: moduleId, name: "Charts Pro", version: "1.0.0", summary: "Charts for paying customers." });
    const priced = await request(app).put(`${api}/developers/modules/${moduleId}/pricing`).set(bearer(developer)).send(pricing);
    expect(priced.status).toBe(200);
    expect(priced.body.fallback).toBe(pricing.fallback ?? "none");
    return developer;
  }

  /** Buys through Checkout; answers the subscription's id. */
  async function subscribe(buyer: TestUser, moduleId: string, body: Record<string, unknown> = {}): Promise<string> {
    const checkout = await request(app).post(`${api}/modules/${moduleId}/checkout`).set(bearer(buyer)).send(body);
    expect(checkout.status).toBe(200);
    await submit(`${checkout.body.url}/pay`);
    return String(stripe.events.filter((event) => event.type === "customer.subscription.created").at(-1)!.data.object.id);
  }

  /** Pays `count` more periods of a subscription, as Stripe renews it; answers their invoices. */
  async function renew(subscriptionId: string, count: number) {
    const invoices: Record<string, unknown>[] = [];
    for (let index = 0; index < count; index += 1) invoices.push(await stripe.renew(subscriptionId));
    return invoices;
  }

  const cancel = (subscriptionId: string) => stripeCall("DELETE", `/v1/subscriptions/${subscriptionId}`);
  const refundInvoice = (invoice: Record<string, unknown>) => stripeCall("POST", "/v1/refunds", `payment_intent=${invoice.payment_intent}`);
  const download = (who: TestUser, moduleId: string, version?: string, instance = app) => request(instance).get(`${api}/modules/download/${moduleId}`).query(version ? { version } : {}).set(bearer(who));
  const purchaseOf = async (who: TestUser) => (await request(app).get(`${api}/users/me`).set(bearer(who))).body.purchases[0];

  async function publishLater(developer: TestDeveloper, moduleId: string, ...versions: string[]) {
    for (const version of versions) await publishModule(developer, { id: moduleId, name: "Charts Pro", version, summary: "Charts for paying customers." }, [], tomorrow);
  }

  it("keeps a lapsed yearly subscriber the year's version and its bug fixes; a newer minor version is fallback_only in downloads, confirms and update checks alike", async () => {
    const developer = await sellingModule("acme", "acme.charts", { model: "subscription", amount: 12_000, interval: "year", fallback: "perpetual" });
    expect(stripe.requests.find((call) => call.path === "/v1/prices")!.params.metadata).toEqual({ moduleId: "acme.charts", fallback: "perpetual" });
    expect((await request(other).get(`${api}/modules/acme.charts`)).body.price).toMatchObject({ interval: "year", fallback: "perpetual" });
    const buyer = await createUser();
    const subscriptionId = await subscribe(buyer, "acme.charts");
    // The year is paid: its start is earned at once, and nothing changes while the subscription runs.
    const earned = await purchaseOf(buyer);
    // While the subscription grants, /users/me says what would stay, not fallbackUntil (§27 "Edges").
    expect(earned).toMatchObject({ status: "active", fallbackIfEnded: { fallbackUntil: expect.any(String), fallbackVersion: "1.0.0" } });
    expect(earned).not.toHaveProperty("fallbackUntil");
    await publishLater(developer, "acme.charts", "1.0.1", "1.1.0");
    expect((await download(buyer, "acme.charts")).body.version).toBe("1.1.0");

    await cancel(subscriptionId);
    for (const instance of [app, other]) {
      expect((await download(buyer, "acme.charts", undefined, instance)).body.version).toBe("1.0.1");
      expect((await download(buyer, "acme.charts", "1.0.0", instance)).status).toBe(200);
      const refused = expectProblem(await download(buyer, "acme.charts", "1.1.0", instance), 403, "fallback_only");
      expect(refused.fallbackVersion).toBe("1.0.1");
    }
    const profile = (await request(other).get(`${api}/users/me`).set(bearer(buyer))).body;
    expect(profile.purchases).toEqual([{ id: subscriptionId, moduleId: "acme.charts", model: "subscription", status: "canceled", currentPeriodEnd: expect.any(String), fallbackUntil: earned.fallbackIfEnded.fallbackUntil, fallbackVersion: "1.0.1" }]);
    expect(profile.entitlements).toEqual([{ key: "module:acme.charts", source: "fallback", purchaseId: subscriptionId, maxVersion: "1.0.1" }]);

    // A certificate of a fallback names its newest version and is bound by the lifetime alone.
    const confirmed = await request(app).post(`${api}/modules/confirm`).set(bearer(buyer)).send({ moduleId: "acme.charts", deviceId: "pc-1" });
    expect(confirmed.body.version).toBe("1.0.1");
    const claims = await verifyActivationCertificate(confirmed.body.certificate, (await request(app).get(`${api}/signing-keys`)).body, { deviceId: "pc-1", moduleId: "acme.charts" });
    expect(claims).toMatchObject({ version: "1.0.1", maxVersion: "1.0.1", entitlement: "module:acme.charts", exp: claims.iat + 30 * 24 * 3600 });
    expect(expectProblem(await request(app).post(`${api}/modules/confirm`).set(bearer(buyer)).send({ moduleId: "acme.charts", version: "1.1.0", deviceId: "pc-1" }), 403, "fallback_only").fallbackVersion).toBe("1.0.1");

    // Update checks offer only fallback versions, and leave out a module with nothing newer to offer.
    const updates = async (version: string) => (await request(other).post(`${api}/modules/updates`).set(bearer(buyer)).send({ appVersion: "1.0.0", installed: [{ moduleId: "acme.charts", version }] })).body.items;
    expect(await updates("1.0.0")).toEqual([expect.objectContaining({ moduleId: "acme.charts", version: "1.0.1", usable: true })]);
    expect(await updates("1.0.1")).toEqual([]);

    // Renewing is a new purchase.
    expect((await request(app).post(`${api}/modules/acme.charts/checkout`).set(bearer(buyer)).send({})).status).toBe(200);
  });

  it("gives twelve paid months the fallback and eleven nothing; a thirteenth moves it forward", async () => {
    const developer = await sellingModule("acme", "acme.charts", { model: "subscription", amount: 500, interval: "month", fallback: "perpetual" });
    const [twelve, eleven, thirteen] = await Promise.all([createUser(), createUser(), createUser()]);
    const subscriptions = [await subscribe(twelve, "acme.charts"), await subscribe(eleven, "acme.charts"), await subscribe(thirteen, "acme.charts")];
    await publishLater(developer, "acme.charts", "1.1.0");
    await renew(subscriptions[0], 11);
    await renew(subscriptions[1], 10);
    const before = await renew(subscriptions[2], 11);
    const afterTwelve = (await purchaseOf(thirteen)).fallbackIfEnded.fallbackUntil;
    await renew(subscriptions[2], 1);
    // The thirteenth month starts the latest run of twelve: the second month, after 1.1.0 came out.
    expect(Date.parse((await purchaseOf(thirteen)).fallbackIfEnded.fallbackUntil)).toBeGreaterThan(Date.parse(afterTwelve));
    expect((await purchaseOf(thirteen)).fallbackIfEnded.fallbackUntil).toBe(new Date(Number((before[0].lines as { data: { period: { start: number } }[] }).data[0].period.start) * 1000).toISOString());
    for (const subscriptionId of subscriptions) await cancel(subscriptionId);

    expect((await download(twelve, "acme.charts", undefined, other)).body.version).toBe("1.0.0");
    expectProblem(await download(twelve, "acme.charts", "1.1.0", other), 403, "fallback_only");
    expectProblem(await download(eleven, "acme.charts", undefined, other), 403, "not_entitled");
    expect(await purchaseOf(eleven)).not.toHaveProperty("fallbackUntil");
    expect(await purchaseOf(eleven)).not.toHaveProperty("fallbackIfEnded");
    expect((await request(app).get(`${api}/users/me`).set(bearer(eleven))).body.entitlements).toEqual([]);
    expect((await download(thirteen, "acme.charts", undefined, other)).body.version).toBe("1.1.0");
  });

  it("does not count a refunded invoice, which breaks the run; a refund after the fallback was earned does not move it back", async () => {
    await sellingModule("acme", "acme.charts", { model: "subscription", amount: 500, interval: "month", fallback: "perpetual" });
    const [broken, kept] = await Promise.all([createUser(), createUser()]);
    const brokenId = await subscribe(broken, "acme.charts");
    const brokenInvoices = await renew(brokenId, 5);
    // The sixth month refunded before the twelfth is paid: twelve invoices, but no run of twelve paid months.
    await refundInvoice(brokenInvoices[4]);
    await renew(brokenId, 6);
    const keptId = await subscribe(kept, "acme.charts");
    // Renewed over HTTP, as a person trying `npm start` would (the stand-in's test helper).
    const keptInvoices: Record<string, unknown>[] = [];
    for (let month = 0; month < 11; month += 1) keptInvoices.push(await stripeCall("POST", `/v1/test_helpers/subscriptions/${keptId}/renew`));
    const earned = (await purchaseOf(kept)).fallbackIfEnded?.fallbackUntil;
    expect(earned).toEqual(expect.any(String));

    expect(await purchaseOf(broken)).not.toHaveProperty("fallbackIfEnded");
    // The twelfth month refunded after the fallback was earned: the date stays.
    await refundInvoice(keptInvoices[10]);
    expect((await purchaseOf(kept)).fallbackIfEnded.fallbackUntil).toBe(earned);

    await cancel(brokenId);
    await cancel(keptId);
    expectProblem(await download(broken, "acme.charts"), 403, "not_entitled");
    expect((await download(kept, "acme.charts")).body.version).toBe("1.0.0");
  });

  it("gives a business purchase's fallback to the members it entitled when it ended, whatever seats do afterwards", async () => {
    const developer = await sellingModule("acme", "acme.charts", { model: "subscription", amount: 9_000, interval: "year", perSeat: true, fallback: "perpetual" });
    const [owner, early, late, admin, newcomer] = await Promise.all([createUser(), createUser(), createUser(), createUser(), createUser()]);
    const daysAgo = (days: number) => new Date(Date.now() - days * DAY_MS);
    await putBusiness("globex", {
      name: "Globex",
      memberIds: [owner.uid, early.uid, late.uid, admin.uid, newcomer.uid],
      roles: { [owner.uid]: "owner", [admin.uid]: "admin" },
      seatSince: { [owner.uid]: daysAgo(30), [early.uid]: daysAgo(20), [late.uid]: daysAgo(1), [admin.uid]: null, [newcomer.uid]: null },
    });
    const subscriptionId = await subscribe(admin, "acme.charts", { businessId: "globex", seats: 2 });
    await publishLater(developer, "acme.charts", "1.1.0");
    const version = async (who: TestUser) => {
      const answer = await download(who, "acme.charts", undefined, other);
      return answer.status === 200 ? answer.body.version : answer.body.code;
    };
    expect(await Promise.all([owner, early, late, admin].map(version))).toEqual(["1.1.0", "1.1.0", "not_entitled", "not_entitled"]);

    await cancel(subscriptionId);
    expect(await Promise.all([owner, early, late, admin].map(version))).toEqual(["1.0.0", "1.0.0", "not_entitled", "not_entitled"]);
    // Seats given and taken afterwards change nothing: early keeps it without a seat, the newcomer's new seat gives nothing.
    const change = (uid: string, seat: boolean) => request(app).patch(`${api}/businesses/globex/members/${uid}`).set(bearer(owner)).send({ seat });
    expect((await change(early.uid, false)).status).toBe(200);
    expect((await change(newcomer.uid, true)).status).toBe(200);
    expect(await Promise.all([owner, early, late, newcomer].map(version))).toEqual(["1.0.0", "1.0.0", "not_entitled", "not_entitled"]);
    const profile = (await request(app).get(`${api}/users/me`).set(bearer(early))).body;
    expect(profile.entitlements).toEqual([{ key: "module:acme.charts", source: "fallback", purchaseId: subscriptionId, businessId: "globex", maxVersion: "1.0.0" }]);
    expect(profile.purchases).toEqual([expect.objectContaining({ id: subscriptionId, businessId: "globex", status: "canceled", fallbackVersion: "1.0.0" })]);
  });

  it("records a business purchase's holders at the first request that finds it ended by time alone (a past-due year whose grace ran out)", async () => {
    await sellingModule("acme", "acme.charts", { model: "subscription", amount: 9_000, interval: "year", perSeat: true, fallback: "perpetual" });
    const [owner, member] = await Promise.all([createUser(), createUser()]);
    const daysAgo = (days: number) => new Date(Date.now() - days * DAY_MS);
    await putBusiness("globex", { name: "Globex", memberIds: [owner.uid, member.uid], roles: { [owner.uid]: "owner" }, seatSince: { [owner.uid]: daysAgo(30), [member.uid]: daysAgo(1) } });
    const subscriptionId = await subscribe(owner, "acme.charts", { businessId: "globex", seats: 1 });
    await stripe.renew(subscriptionId, { paid: false });
    // A year and a week on, no event came: the grace is over, and the first request records who kept it.
    const later = await testApp({ config: stripeConfig(), clock: () => new Date(Date.now() + 372 * DAY_MS) });
    expect((await request(later).get(`${api}/modules/download/acme.charts`).set(bearer(owner))).body.version).toBe("1.0.0");
    expectProblem(await request(later).get(`${api}/modules/download/acme.charts`).set(bearer(member)), 403, "not_entitled");
    const holders = (await testDeps()).db.collection(`purchases/${subscriptionId}/fallbackHolders`);
    expect((await holders.get()).docs.map((doc) => doc.id)).toEqual([owner.uid]);
  });

  it("records a business purchase's holders afresh at its real end after a late payment, and breaks seat ties as the entitlement does (§27 \"Edges\")", async () => {
    await sellingModule("acme", "acme.charts", { model: "subscription", amount: 9_000, interval: "year", perSeat: true, fallback: "perpetual" });
    const [owner, first, second] = await Promise.all([createUser(), createUser(), createUser()]);
    // Two seats given in one write share their instant: one seat's quantity reaches one of them.
    const together = new Date(Date.now() - 10 * DAY_MS);
    await putBusiness("globex", { name: "Globex", memberIds: [owner.uid, first.uid, second.uid], roles: { [owner.uid]: "owner" }, seatSince: { [owner.uid]: null, [first.uid]: together, [second.uid]: together } });
    const subscriptionId = await subscribe(owner, "acme.charts", { businessId: "globex", seats: 1 });
    const status = async (who: TestUser, instance = app) => (await download(who, "acme.charts", undefined, instance)).status;
    const [reached, waiting] = (await status(first)) === 200 ? [first, second] : [second, first];
    expect(await status(waiting)).toBe(403);

    // It lapses (past due, the grace over): the member it reached keeps it, not the other of the tie.
    await stripe.renew(subscriptionId, { paid: false });
    const later = await testApp({ config: stripeConfig(), clock: () => new Date(Date.now() + 372 * DAY_MS) });
    expect([await status(reached, later), await status(waiting, later)]).toEqual([200, 403]);

    // Paid late, it grants again; the seat moves; then it really ends: the holders are those of this end.
    await stripe.renew(subscriptionId);
    const seat = (who: TestUser, value: boolean) => request(app).patch(`${api}/businesses/globex/members/${who.uid}`).set(bearer(owner)).send({ seat: value });
    expect((await seat(reached, false)).status).toBe(200);
    expect([await status(reached), await status(waiting)]).toEqual([403, 200]);
    await cancel(subscriptionId);
    expect((await download(waiting, "acme.charts")).body.version).toBe("1.0.0");
    expectProblem(await download(reached, "acme.charts"), 403, "not_entitled");
  });

  it("reads the promise from each invoice's price: a switch to a price with it does not make earlier months count; a month paid by credit counts (§27 \"Edges\")", async () => {
    const developer = await sellingModule("acme", "acme.charts", { model: "subscription", amount: 500, interval: "month" });
    const buyer = await createUser();
    const subscriptionId = await subscribe(buyer, "acme.charts");
    await renew(subscriptionId, 11);
    // A year paid without the promise; the publisher then promises it, and the subscriber is moved to the new price.
    const repriced = await request(app).put(`${api}/developers/modules/acme.charts/pricing`).set(bearer(developer)).send({ model: "subscription", amount: 500, interval: "month", fallback: "perpetual" });
    expect(repriced.body.fallback).toBe("perpetual");
    const { db } = await testDeps();
    const priceId = String((await db.doc("modules/acme.charts").get()).get("price.stripePriceId"));
    await stripeCall("POST", `/v1/subscriptions/${subscriptionId}`, `items[0][price]=${priceId}`);
    const [firstPromised] = await renew(subscriptionId, 1);
    expect(await purchaseOf(buyer)).not.toHaveProperty("fallbackIfEnded");
    expect(await purchaseOf(buyer)).not.toHaveProperty("fallbackUntil");
    // Eleven more on the new price, one of them paid from the customer's credit balance (nothing charged).
    await renew(subscriptionId, 5);
    const credited = await stripe.renew(subscriptionId, { byCredit: true });
    expect([credited.amount_paid, credited.payment_intent]).toEqual([0, null]);
    await renew(subscriptionId, 4);
    expect(await purchaseOf(buyer)).not.toHaveProperty("fallbackIfEnded");
    await renew(subscriptionId, 1);
    const startOf = (invoice: Record<string, unknown>) => new Date(Number((invoice.lines as { data: { period: { start: number } }[] }).data[0].period.start) * 1000).toISOString();
    expect((await purchaseOf(buyer)).fallbackIfEnded).toEqual({ fallbackUntil: startOf(firstPromised), fallbackVersion: "1.0.0" });
  });

  it("keeps a revoked version's bug-fix line, reports a holder's yanked and blocked versions, and binds a certificate to a live subscription beside an old fallback (§27 \"Edges\")", async () => {
    const developer = await sellingModule("acme", "acme.charts", { model: "subscription", amount: 12_000, interval: "year", fallback: "perpetual" });
    await publishModule(developer, { id: "acme.charts", name: "Charts Pro", version: "2.1.0", summary: "Charts for paying customers." });
    const buyer = await createUser();
    const yearly = await subscribe(buyer, "acme.charts");
    await publishLater(developer, "acme.charts", "2.1.1", "2.2.0");
    await cancel(yearly);
    // 2.1.0 revoked: never served, but 2.1.x stays the line, so its fix 2.1.1 is the buyer's.
    await revokeModule(await operatorDeps(), { moduleId: "acme.charts", version: "2.1.0", reason: "Corrupts charts." });
    expect((await download(buyer, "acme.charts")).body.version).toBe("2.1.1");
    expectProblem(await download(buyer, "acme.charts", "2.2.0"), 403, "fallback_only");
    expect((await purchaseOf(buyer)).fallbackVersion).toBe("2.1.1");

    // The holder's installed version yanked, or blocked by their business: still reported, though nothing newer is theirs.
    expect((await request(app).post(`${api}/developers/modules/yank`).set(bearer(developer)).send({ moduleId: "acme.charts", version: "2.1.1", reason: "Slow." })).status).toBe(200);
    const check = async () => (await request(other).post(`${api}/modules/updates`).set(bearer(buyer)).send({ appVersion: "1.0.0", installed: [{ moduleId: "acme.charts", version: "2.1.1" }] })).body.items;
    expect(await check()).toEqual([expect.objectContaining({ moduleId: "acme.charts", installedVersion: "2.1.1", yanked: true, blocked: false, version: "1.0.0" })]);
    const owner = await createUser();
    await putBusiness("b1", { name: "Initech", memberIds: [owner.uid, buyer.uid], roles: { [owner.uid]: "owner" } });
    expect((await request(app).put(`${api}/businesses/b1/policy`).set(bearer(owner)).send({ mode: "open", rules: [{ effect: "block", module: "acme.charts", versions: ">=2.0.0" }] })).status).toBe(200);
    expect(await check()).toEqual([expect.objectContaining({ moduleId: "acme.charts", installedVersion: "2.1.1", yanked: true, blocked: true })]);
    expect((await request(app).put(`${api}/businesses/b1/policy`).set(bearer(owner)).send({ mode: "open", rules: [] })).status).toBe(200);

    // Subscribed again, monthly: the live subscription bounds the certificate (its period end and grace), and it names no maxVersion.
    const longLived = await testApp({ config: { ...stripeConfig(), activations: { deviceLimit: 5, certificateLifetimeSeconds: 400 * 24 * 3600 } } });
    expect((await request(app).put(`${api}/developers/modules/acme.charts/pricing`).set(bearer(developer)).send({ model: "subscription", amount: 500, interval: "month", fallback: "perpetual" })).status).toBe(200);
    await subscribe(buyer, "acme.charts");
    const confirmed = await request(longLived).post(`${api}/modules/confirm`).set(bearer(buyer)).send({ moduleId: "acme.charts", version: "2.2.0", deviceId: "pc-1" });
    expect(confirmed.status).toBe(200);
    const claims = await verifyActivationCertificate(confirmed.body.certificate, (await request(app).get(`${api}/signing-keys`)).body, { deviceId: "pc-1", moduleId: "acme.charts" });
    expect(claims).not.toHaveProperty("maxVersion");
    expect(claims.exp - claims.iat).toBeLessThanOrEqual(35 * 24 * 3600);
    // /users/me: the new subscription grants; the old purchase's fallback is what would remain, not what grants.
    const purchases = (await request(app).get(`${api}/users/me`).set(bearer(buyer))).body.purchases as { id: string; status: string }[];
    expect(purchases.find((purchase) => purchase.id === yearly)).not.toHaveProperty("fallbackVersion");
  });

  it("refuses a perpetual fallback on a one-time price, and keeps a free module's or a price without one's behaviour", async () => {
    const developer = await sellingModule("acme", "acme.charts", { model: "subscription", amount: 500, interval: "month" });
    for (const body of [{ model: "one_time", amount: 900, fallback: "perpetual" }, { model: "subscription", amount: 900, interval: "month", fallback: "forever" }, { model: "subscription", amount: 900, interval: "month", fallback: null }]) {
      expectProblem(await request(app).put(`${api}/developers/modules/acme.charts/pricing`).set(bearer(developer)).send(body), 400, "invalid_request");
    }
    expect((await request(app).get(`${api}/modules/acme.charts`)).body.price).toMatchObject({ amount: 500, fallback: "none" });
    const buyer = await createUser();
    const subscriptionId = await subscribe(buyer, "acme.charts");
    await renew(subscriptionId, 12);
    expect(await purchaseOf(buyer)).not.toHaveProperty("fallbackIfEnded");
    await cancel(subscriptionId);
    expectProblem(await download(buyer, "acme.charts"), 403, "not_entitled");
  });
});
