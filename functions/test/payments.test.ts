import type { Express } from "express";
import request from "supertest";
import { verifyActivationCertificate } from "../../docs/examples/verify-activation-certificate";
import type { LocalStripe } from "../../tools/local-stack/stripe-server";
import { LOCAL_STRIPE_CONNECT_WEBHOOK_SECRET, LOCAL_STRIPE_WEBHOOK_SECRET } from "../src/config";
import { bearer, createDeveloper, createUser, declareTrader, expectProblem, publishModule, resetEmulators, sendRetryingUnavailable, testApp, testDeps, type TestUser } from "./support/harness";
import { runAdmin } from "./support/admin";
import { appsWithLocalStripe } from "./support/local-stripe";
import { putBusiness } from "./support/fixtures";
import { nowSeconds, signed } from "./support/stripe-events";

const api = "/api/v1";
const DAY = 24 * 3600;

/**
 * Paid modules (§20) end to end: the app listens on a port, so the local Stripe-compatible server
 * sends its signed events to the real webhook, as Stripe would, when a test clicks its pages.
 */
describe("paid modules (§20)", () => {
  let stripe: LocalStripe;
  let app: Express;
  let other: Express;

  const local = appsWithLocalStripe();
  const stripeConfig = () => local.stripeConfig();
  beforeAll(async () => {
    ({ stripe, app, other } = local);
  });
  beforeEach(async () => {
    await resetEmulators();
    stripe.requests.length = 0;
    stripe.events.length = 0;
    stripe.failNext(0, "disconnect");
  });

  const callsTo = (path: string) => stripe.requests.filter((call) => call.path === path);
  /** Follows one of local Stripe's forms as a browser would: its POST answers 303 once the webhook took the event. */
  const submit = async (url: string, body = "") => {
    const answer = await fetch(url, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body, redirect: "manual" });
    expect(answer.status).toBe(303);
    return answer.headers.get("location");
  };

  async function sellingPublisher(publisherId: string) {
    const developer = await createDeveloper(publisherId);
    const opened = await request(app).post(`${api}/developers/payouts/account`).set(bearer(developer));
    expect(opened.status).toBe(200);
    await submit(`${opened.body.onboardingUrl}/complete`);
    await declareTrader(developer, app);
    return developer;
  }

  async function pricedModule(publisherId: string, moduleId: string, pricing: Record<string, unknown>) {
    const developer = await sellingPublisher(publisherId);
    await publishModule(developer, { id: moduleId, name: "Charts Pro", version: "1.0.0", summary: "Charts for paying customers." });
    const priced = await request(app).put(`${api}/developers/modules/${moduleId}/pricing`).set(bearer(developer)).send(pricing);
    expect(priced.status).toBe(200);
    return developer;
  }

  async function buy(buyer: TestUser, moduleId: string, body: Record<string, unknown> = {}) {
    const checkout = await request(app).post(`${api}/modules/${moduleId}/checkout`).set(bearer(buyer)).send(body);
    expect(checkout.status).toBe(200);
    await submit(`${checkout.body.url}/pay`);
    return callsTo("/v1/checkout/sessions").at(-1)!.params;
  }

  describe("payouts account", () => {
    it("creates one connected account with the contract's settings, links onboarding, and follows account.updated", async () => {
      const developer = await createDeveloper("acme");
      expectProblem(await request(app).get(`${api}/developers/payouts`).set(bearer(developer)), 404, "payouts_account_not_found");

      const [first, second] = await Promise.all([
        request(app).post(`${api}/developers/payouts/account`).set(bearer(developer)),
        request(other).post(`${api}/developers/payouts/account`).set(bearer(developer)),
      ]);
      expect([first.status, second.status]).toEqual([200, 200]);
      expect(first.body).toEqual({
        accountId: expect.stringMatching(/^acct_/),
        onboardingUrl: expect.stringMatching(new RegExp(`^${stripe.url}/onboarding/`)),
        chargesEnabled: false,
        payoutsEnabled: false,
        requirementsDue: ["business_profile.url", "external_account", "tos_acceptance.date"],
      });
      expect(second.body.accountId).toBe(first.body.accountId);
      expect(second.body.onboardingUrl).not.toBe(first.body.onboardingUrl);
      const created = callsTo("/v1/accounts");
      expect(created[0].params).toEqual({
        controller: { stripe_dashboard: { type: "express" }, fees: { payer: "application" }, losses: { payments: "application" } },
        capabilities: { transfers: { requested: "true" } },
        email: developer.email,
        metadata: { publisherId: "acme" },
      });
      expect(new Set(created.map((call) => call.idempotencyKey))).toEqual(new Set(["payouts-account-acme"]));
      expect(callsTo("/v1/account_links")[0].params).toEqual({
        account: first.body.accountId,
        type: "account_onboarding",
        refresh_url: "http://127.0.0.1:5001/publisher?payouts=refresh",
        return_url: "http://127.0.0.1:5001/publisher?payouts=return",
      });

      expect(await submit(`${first.body.onboardingUrl}/complete`)).toBe("http://127.0.0.1:5001/publisher?payouts=return");
      const state = await request(other).get(`${api}/developers/payouts`).set(bearer(developer));
      expect(state.body).toEqual({ accountId: first.body.accountId, chargesEnabled: true, payoutsEnabled: true, requirementsDue: [] });

      // An older account.updated than the one applied changes nothing.
      const stale = { id: "evt_stale_account", object: "event", type: "account.updated", created: nowSeconds() - 3600, account: first.body.accountId, data: { object: { id: first.body.accountId, object: "account", metadata: { publisherId: "acme" }, charges_enabled: false, payouts_enabled: false, requirements: { currently_due: ["x"] } } } };
      expect((await deliver(stale)).body.outcome).toBe("stale");
      expect((await request(app).get(`${api}/developers/payouts`).set(bearer(developer))).body.chargesEnabled).toBe(true);
    });

    it("takes account.updated signed by the Connect endpoint's own secret, and no event signed by a secret it does not hold", async () => {
      const developer = await createDeveloper("acme");
      const opened = await request(app).post(`${api}/developers/payouts/account`).set(bearer(developer));
      const event = (id: string, chargesEnabled: boolean) => ({ id, object: "event", type: "account.updated", created: nowSeconds(), account: opened.body.accountId, data: { object: { id: opened.body.accountId, object: "account", metadata: { publisherId: "acme" }, charges_enabled: chargesEnabled, payouts_enabled: chargesEnabled, requirements: { currently_due: [] } } } });
      const send = (target: Express, body: object, secret: string) => {
        const { payload, header } = signed(body, { secret });
        return request(target).post(`${api}/billing/stripe/webhook`).set("Content-Type", "application/json").set("Stripe-Signature", header).send(payload);
      };
      // Only the platform's secret configured: the Connect endpoint's event is refused, and changes nothing.
      const platformOnly = await testApp({ config: { ...stripeConfig(), stripeWebhookSecrets: [LOCAL_STRIPE_WEBHOOK_SECRET] } });
      expectProblem(await send(platformOnly, event("evt_connect_1", true), LOCAL_STRIPE_CONNECT_WEBHOOK_SECRET), 400, "invalid_signature");
      expectProblem(await send(app, event("evt_other_1", true), "whsec_somebody_else"), 400, "invalid_signature");
      const { db } = await testDeps();
      expect((await db.collection("payoutAccounts").doc("acme").get()).get("chargesEnabled")).toBe(false);
      // Both configured (the default): the second secret's event enables charges.
      expect((await send(app, event("evt_connect_2", true), LOCAL_STRIPE_CONNECT_WEBHOOK_SECRET)).status).toBe(200);
      expect((await db.collection("payoutAccounts").doc("acme").get()).get("chargesEnabled")).toBe(true);
    });

    it("shows the state Stripe has when the publisher is back from onboarding, before account.updated arrives", async () => {
      const developer = await createDeveloper("acme");
      const opened = await request(app).post(`${api}/developers/payouts/account`).set(bearer(developer));
      const release = stripe.holdEvents();
      await submit(`${opened.body.onboardingUrl}/complete`);
      expect(stripe.events.map((event) => event.type)).toEqual(["account.updated"]);
      const reads = callsTo(`/v1/accounts/${opened.body.accountId}`).length;
      const state = await request(app).get(`${api}/developers/payouts`).set(bearer(developer));
      expect(state.body).toEqual({ accountId: opened.body.accountId, chargesEnabled: true, payoutsEnabled: true, requirementsDue: [] });
      expect(callsTo(`/v1/accounts/${opened.body.accountId}`).length).toBe(reads + 1);
      // Recorded, for every instance: the account is not read again.
      expect((await (await testDeps()).db.collection("payoutAccounts").doc("acme").get()).get("chargesEnabled")).toBe(true);
      await request(other).get(`${api}/developers/payouts`).set(bearer(developer));
      expect(callsTo(`/v1/accounts/${opened.body.accountId}`).length).toBe(reads + 1);
      // The event, late, is older than what was read: it changes nothing.
      await release();
      expect((await request(app).get(`${api}/developers/payouts`).set(bearer(developer))).body.chargesEnabled).toBe(true);
    });

    it("takes an Idempotency-Key: a repeat replays the account without its single-use link, a malformed key is a 400", async () => {
      const developer = await createDeveloper("acme");
      const open = (key: string) => request(app).post(`${api}/developers/payouts/account`).set(bearer(developer)).set("Idempotency-Key", key);
      const first = await open("payouts-1");
      expect(first.status).toBe(200);
      const links = callsTo("/v1/account_links").length;
      const again = await open("payouts-1");
      expect([again.status, again.headers["idempotency-replayed"], again.body.accountId, again.body.onboardingUrl]).toEqual([200, "true", first.body.accountId, null]);
      expect(callsTo("/v1/account_links").length).toBe(links);
      expectProblem(await open("k".repeat(256)), 400, "invalid_request");
      const document = (await request(app).get(`${api}/openapi.json`)).body;
      expect(document.paths["/developers/payouts/account"].post.parameters.map((parameter: { name: string }) => parameter.name)).toContain("Idempotency-Key");
    });

    it("answers the recorded state when Stripe cannot be read", async () => {
      const developer = await createDeveloper("acme");
      const opened = await request(app).post(`${api}/developers/payouts/account`).set(bearer(developer));
      stripe.failNext(4, { status: 500 }, `/v1/accounts/${opened.body.accountId}`);
      const state = await request(app).get(`${api}/developers/payouts`).set(bearer(developer));
      expect(state.status).toBe(200);
      expect(state.body.chargesEnabled).toBe(false);
    });

    it("answers 502 when Stripe fails and 503 without a key, recording nothing", async () => {
      const developer = await createDeveloper("acme");
      stripe.failNext(4, { status: 500 });
      expectProblem(await request(app).post(`${api}/developers/payouts/account`).set(bearer(developer)), 502, "billing_unavailable");
      // The account made, its onboarding link refused: still nothing recorded.
      stripe.failNext(2, { status: 500 }, "/v1/account_links");
      expectProblem(await request(app).post(`${api}/developers/payouts/account`).set(bearer(developer)), 502, "billing_unavailable");
      stripe.failNext(0, "disconnect");
      const keyless = await testApp({ config: { ...stripeConfig(), billing: { ...stripeConfig().billing, stripeSecretKey: "" } } });
      expectProblem(await request(keyless).post(`${api}/developers/payouts/account`).set(bearer(developer)), 503, "billing_not_configured");
      const { db } = await testDeps();
      expect((await db.collection("payoutAccounts").get()).size).toBe(0);
      expect((await db.collection("auditLog").where("action", "==", "payouts.account.created").get()).size).toBe(0);
      expectProblem(await request(app).get(`${api}/developers/payouts`).set(bearer(developer)), 404, "payouts_account_not_found");
      // The retry gets the account Stripe made the first time (one idempotency key for the publisher).
      expect((await request(app).post(`${api}/developers/payouts/account`).set(bearer(developer))).status).toBe(200);
      expect(new Set(callsTo("/v1/accounts").map((call) => call.idempotencyKey))).toEqual(new Set(["payouts-account-acme"]));
    });
  });

  describe("pricing", () => {
    it("refuses to price before Stripe lets the account take charges, then keeps one product and a new price per change", async () => {
      const developer = await createDeveloper("acme");
      await publishModule(developer, { id: "acme.charts", version: "1.0.0" });
      const put = (body: Record<string, unknown>, who: { idToken: string } = developer) => request(app).put(`${api}/developers/modules/acme.charts/pricing`).set(bearer(who)).send(body);
      // Who sells is declared first (§30), before Stripe's readiness is looked at.
      expectProblem(await put({ model: "one_time", amount: 900 }), 409, "trader_declaration_required");
      expect((await request(app).put(`${api}/developers/trader`).set(bearer(developer)).send({ trader: false })).status).toBe(200);
      expectProblem(await put({ model: "one_time", amount: 900 }), 403, "not_a_trader");
      await declareTrader(developer, app);
      expectProblem(await put({ model: "one_time", amount: 900 }), 409, "payouts_not_ready");
      await request(app).post(`${api}/developers/payouts/account`).set(bearer(developer));
      expectProblem(await put({ model: "one_time", amount: 900 }), 409, "payouts_not_ready");
      const link = callsTo("/v1/account_links")[0];
      expect(link).toBeDefined();
      await submit(`${(await request(app).post(`${api}/developers/payouts/account`).set(bearer(developer))).body.onboardingUrl}/complete`);

      const first = await put({ model: "one_time", amount: 900, currency: "eur" });
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ moduleId: "acme.charts", model: "one_time", amount: 900, currency: "eur", interval: null, trialDays: 0, perSeat: false, fallback: "none", updatedAt: expect.any(String) });
      const second = await put({ model: "subscription", amount: 500, currency: "usd", interval: "month", trialDays: 14, perSeat: true });
      expect(second.body).toMatchObject({ model: "subscription", amount: 500, interval: "month", trialDays: 14, perSeat: true });
      expect(callsTo("/v1/products").map((call) => call.params)).toEqual([{ name: "Charts", metadata: { moduleId: "acme.charts" } }]);
      const prices = callsTo("/v1/prices").map((call) => call.params);
      expect(prices).toEqual([
        { product: expect.stringMatching(/^prod_/), unit_amount: "900", currency: "eur", metadata: { moduleId: "acme.charts", fallback: "none" } },
        { product: prices[0].product, unit_amount: "500", currency: "usd", recurring: { interval: "month" }, metadata: { moduleId: "acme.charts", fallback: "none" } },
      ]);

      // Listed with its price at once, on this instance and another; pricing=paid finds it.
      const buyer = await createUser();
      for (const instance of [app, other]) {
        const listed = await request(instance).get(`${api}/modules?pricing=paid`).set(bearer(buyer));
        expect(listed.body.items.map((item: { id: string; price: unknown; access: unknown }) => [item.id, item.price, item.access])).toEqual([
          ["acme.charts", { model: "subscription", amount: 500, currency: "usd", interval: "month", trialDays: 14, perSeat: true, fallback: "none" }, { usable: false, activated: false }],
        ]);
        expect((await request(instance).get(`${api}/modules/acme.charts`)).body.price).toMatchObject({ amount: 500 });
      }
      expect((await request(app).get(`${api}/developers/modules`).set(bearer(developer))).body.items[0].price).toMatchObject({ amount: 500 });
      expectProblem(await request(app).get(`${api}/modules/download/acme.charts`).set(bearer(buyer)), 403, "not_entitled");

      expect((await request(app).delete(`${api}/developers/modules/acme.charts/pricing`).set(bearer(developer))).status).toBe(204);
      expect((await request(other).get(`${api}/modules/acme.charts`)).body.price).toBeNull();
      expect((await request(app).get(`${api}/modules/download/acme.charts`).set(bearer(buyer))).status).toBe(200);
      expect((await request(app).delete(`${api}/developers/modules/acme.charts/pricing`).set(bearer(developer))).status).toBe(204);
    });

    it("shows a priced module's trader as its publisher declared it (§30), and keeps a publisher with prices a trader", async () => {
      const developer = await pricedModule("acme", "acme.charts", { model: "one_time", amount: 900 });
      const declaration = await request(app).get(`${api}/developers/trader`).set(bearer(developer));
      expect(declaration.body).toEqual({
        trader: true,
        publisherId: "acme",
        name: "Example Trading Ltd",
        address: "1 Example Street, 10115 Berlin, Germany",
        email: "sales@example.test",
        phone: "+49 30 1234567",
        tradeRegister: null,
        registrationNumber: null,
        selfCertification: true,
        updatedAt: expect.any(String),
      });
      const trader = { name: "Example Trading Ltd", address: "1 Example Street, 10115 Berlin, Germany", email: "sales@example.test", phone: "+49 30 1234567" };
      expect((await request(app).get(`${api}/modules/acme.charts`)).body.trader).toEqual(trader);
      // A free module's page names no trader.
      await publishModule(developer, { id: "acme.free", version: "1.0.0" });
      expect((await request(app).get(`${api}/modules/acme.free`)).body).not.toHaveProperty("trader");

      // A new declaration shows on the page on the next request; "not a trader" is refused while a price stands.
      const renamed = await request(app).put(`${api}/developers/trader`).set(bearer(developer)).send({ trader: true, ...trader, name: "Acme GmbH", tradeRegister: "Amtsgericht Berlin", registrationNumber: "HRB 12345", selfCertification: true });
      expect(renamed.body).toMatchObject({ name: "Acme GmbH", tradeRegister: "Amtsgericht Berlin", registrationNumber: "HRB 12345" });
      expect((await request(app).get(`${api}/modules/acme.charts`)).body.trader.name).toBe("Acme GmbH");
      expectProblem(await request(app).put(`${api}/developers/trader`).set(bearer(developer)).send({ trader: false }), 409, "trader_declaration_required");

      for (const body of [
        { trader: true, ...trader },
        { trader: true, ...trader, selfCertification: false },
        { trader: true, ...trader, name: "", selfCertification: true },
        { trader: true, ...trader, address: "Line one\nLine two", selfCertification: true },
        { trader: true, ...trader, phone: "call me", selfCertification: true },
        { trader: true, ...trader, email: "not-an-address", selfCertification: true },
        { trader: false, name: "x" },
        { trader: "yes" },
      ]) {
        expectProblem(await request(app).put(`${api}/developers/trader`).set(bearer(developer)).send(body), 400, "invalid_request");
      }
      expect((await request(app).get(`${api}/developers/trader`).set(bearer(developer))).body.name).toBe("Acme GmbH");
      const stranger = await createDeveloper("initech");
      expectProblem(await request(app).get(`${api}/developers/trader`).set(bearer(stranger)), 404, "trader_declaration_not_found");
    });

    it("refuses bad prices, other owners and publisher tokens, changing nothing", async () => {
      const developer = await sellingPublisher("acme");
      await publishModule(developer, { id: "acme.charts", version: "1.0.0" });
      const intruder = await sellingPublisher("globex");
      const put = (body: unknown, who: { idToken: string } = developer) => request(app).put(`${api}/developers/modules/acme.charts/pricing`).set(bearer(who)).send(body as object);
      for (const body of [
        { model: "one_time", amount: 99 },
        { model: "one_time", amount: 1_000_001 },
        { model: "one_time", amount: 100.5 },
        { model: "one_time", amount: 900, interval: "month" },
        { model: "one_time", amount: 900, trialDays: 3 },
        { model: "subscription", amount: 900 },
        { model: "subscription", amount: 900, interval: "week" },
        { model: "subscription", amount: 900, interval: "month", trialDays: 31 },
        { model: "one_time", amount: 900, currency: "jpy" },
        { model: "one_time", amount: 900, currency: "USD" },
        { model: "one_time", amount: 900, currency: "__proto__" },
        { model: "lifetime", amount: 900 },
        { model: "one_time", amount: 900, extra: true },
      ]) {
        expectProblem(await put(body), 400, "invalid_request");
      }
      expectProblem(await put({ model: "one_time", amount: 900 }, intruder), 403, "not_owner");
      expectProblem(await request(app).put(`${api}/developers/modules/acme.nothing/pricing`).set(bearer(developer)).send({ model: "one_time", amount: 900 }), 404, "module_not_found");
      const token = (await request(app).post(`${api}/developers/tokens`).set(bearer(developer)).send({ name: "CI" })).body.token as string;
      expectProblem(await request(app).put(`${api}/developers/modules/acme.charts/pricing`).set({ Authorization: `Bearer ${token}` }).send({ model: "one_time", amount: 900 }), 401, "invalid_token");
      stripe.failNext(4, "disconnect");
      expectProblem(await put({ model: "one_time", amount: 900 }), 502, "billing_unavailable");
      expect(callsTo("/v1/prices")).toEqual([]);
      expect((await request(app).get(`${api}/modules/acme.charts`)).body.price).toBeNull();
    });
  });

  describe("buying", () => {
    it("sells to a person through a destination charge; the paid event entitles them at the next request; a full refund takes it away", async () => {
      const developer = await pricedModule("acme", "acme.charts", { model: "one_time", amount: 999, currency: "usd" });
      const payouts = (await request(app).get(`${api}/developers/payouts`).set(bearer(developer))).body;
      const buyer = await createUser();
      expectProblem(await request(app).get(`${api}/modules/download/acme.charts`).set(bearer(buyer)), 403, "not_entitled");

      const checkout = await request(app).post(`${api}/modules/acme.charts/checkout`).set(bearer(buyer)).send({});
      expect(checkout.status).toBe(200);
      const sent = callsTo("/v1/checkout/sessions")[0].params;
      const metadata = { moduleId: "acme.charts", buyerUid: buyer.uid, quantity: "1" };
      expect(sent).toEqual({
        mode: "payment",
        line_items: [{ price: expect.stringMatching(/^price_/), quantity: "1" }],
        metadata,
        client_reference_id: buyer.uid,
        // 999 × 15 % = 149.85, rounded half up.
        payment_intent_data: { application_fee_amount: "150", transfer_data: { destination: payouts.accountId }, metadata },
        customer_creation: "always",
        customer_email: buyer.email,
        success_url: "http://127.0.0.1:5001/modules/acme.charts?checkout=success",
        cancel_url: "http://127.0.0.1:5001/modules/acme.charts?checkout=canceled",
      });
      await submit(`${checkout.body.url}/pay`);

      // The next request, on either instance, sees the purchase.
      expect((await request(other).get(`${api}/modules/download/acme.charts`).set(bearer(buyer))).status).toBe(200);
      const confirmed = await request(app).post(`${api}/modules/confirm`).set(bearer(buyer)).send({ moduleId: "acme.charts", deviceId: "pc-1" });
      expect(confirmed.status).toBe(200);
      const keys = (await request(app).get(`${api}/signing-keys`)).body;
      const claims = await verifyActivationCertificate(confirmed.body.certificate, keys, { deviceId: "pc-1", moduleId: "acme.charts" });
      expect(claims).toMatchObject({ entitlement: "module:acme.charts", exp: claims.iat + 30 * DAY });
      const profile = (await request(app).get(`${api}/users/me`).set(bearer(buyer))).body;
      const purchaseId = profile.purchases[0]?.id as string;
      expect(profile.purchases).toEqual([{ id: expect.stringMatching(/^pi_/), moduleId: "acme.charts", model: "one_time", status: "active", currentPeriodEnd: null }]);
      expect(profile.entitlements).toEqual([{ key: "module:acme.charts", source: "purchase", purchaseId }]);
      expect((await request(app).get(`${api}/modules/acme.charts`).set(bearer(buyer))).body.access).toEqual({ usable: true, activated: true });
      expectProblem(await request(app).post(`${api}/modules/acme.charts/checkout`).set(bearer(buyer)).send({}), 409, "already_owned");

      // The buyer's own billing portal, on the customer Checkout made.
      const portal = await request(app).post(`${api}/users/me/billing/portal`).set(bearer(buyer));
      expect(portal.status).toBe(200);
      expect(callsTo("/v1/billing_portal/sessions")[0].params).toEqual({ customer: expect.stringMatching(/^cus_/), return_url: "http://127.0.0.1:5001/account" });
      expectProblem(await request(app).post(`${api}/users/me/billing/portal`).set(bearer(await createUser())), 409, "no_billing_account");

      // A dispute suspends access until it is won.
      const dispute = (type: string, status: string, at: number) => ({ id: `evt_${type}_${at}`, object: "event", type, created: at, data: { object: { id: "dp_1", object: "dispute", amount: 999, status, charge: "ch_1", payment_intent: purchaseId } } });
      expect((await deliver(dispute("charge.dispute.created", "needs_response", nowSeconds()))).body.outcome).toBe("applied");
      expectProblem(await request(other).get(`${api}/modules/download/acme.charts`).set(bearer(buyer)), 403, "not_entitled");
      expect((await request(app).get(`${api}/users/me`).set(bearer(buyer))).body.purchases[0].status).toBe("disputed");
      expect((await deliver(dispute("charge.dispute.closed", "won", nowSeconds() + 1))).body.outcome).toBe("applied");
      expect((await request(other).get(`${api}/modules/download/acme.charts`).set(bearer(buyer))).status).toBe(200);

      // The operator CLI lists it and refunds it: a partial refund keeps access; the rest of it ends it.
      const listed = await operatorCli("--json", "purchases", "list", "--module", "acme.charts");
      expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ id: purchaseId, owner: `user:${buyer.uid}`, model: "one_time", status: "active", amount: 999, currency: "usd", fee: 150 })]);
      expect(JSON.parse((await operatorCli("--json", "purchases", "list", "--user", buyer.email)).stdout)).toHaveLength(1);
      stripe.failNext(4, { status: 500 });
      const failed = await operatorCli("purchases", "refund", purchaseId);
      expect({ code: failed.code, stderr: failed.stderr }).toEqual({ code: 1, stderr: expect.stringMatching(/^detail: stripe call failed .*"statusCode":500.*\nerror: The billing provider did not complete the request; try again in a moment.\n$/) });
      expect(callsTo("/v1/refunds").every((call) => call.params.amount === undefined)).toBe(true);
      stripe.failNext(0, "disconnect");
      stripe.requests.length = 0;
      // Two refunds of the same amount are two refunds; a command repeated with its key is one.
      const refundOf = async (...extra: string[]) => JSON.parse((await operatorCli("--json", "purchases", "refund", purchaseId, "--amount", "200", ...extra)).stdout);
      const partial = await refundOf();
      expect(partial).toMatchObject({ purchaseId, amount: 200, status: "succeeded", idempotencyKey: expect.stringMatching(new RegExp(`^refund-${purchaseId}-`)) });
      const another = await refundOf();
      expect(another.refundId).not.toBe(partial.refundId);
      expect(another.idempotencyKey).not.toBe(partial.idempotencyKey);
      expect((await refundOf("--idempotency-key", partial.idempotencyKey)).refundId).toBe(partial.refundId);
      expect(callsTo("/v1/refunds").map((call) => call.idempotencyKey)).toEqual([partial.idempotencyKey, another.idempotencyKey, partial.idempotencyKey]);
      expect(callsTo("/v1/refunds")[0].params).toEqual({ payment_intent: purchaseId, reverse_transfer: "true", refund_application_fee: "true", amount: "200", metadata: { purchaseId } });
      expect((await operatorCli("purchases", "refund", purchaseId, "--cancel")).code).toBe(2);
      expect((await operatorCli("purchases", "refund", purchaseId, "--amount", "0.5")).code).toBe(2);
      expect((await request(app).get(`${api}/modules/download/acme.charts`).set(bearer(buyer))).status).toBe(200);
      expect((await operatorCli("purchases", "refund", purchaseId)).code).toBe(0);
      expectProblem(await request(other).get(`${api}/modules/download/acme.charts`).set(bearer(buyer)), 403, "not_entitled");
      expect((await request(app).get(`${api}/users/me`).set(bearer(buyer))).body.purchases[0].status).toBe("refunded");
      const { db } = await testDeps();
      const audit = (await db.collection("auditLog").where("target", "==", purchaseId).get()).docs.map((doc) => doc.get("action")).sort();
      expect(audit).toEqual(["module.purchase.completed", "module.purchase.disputed", "module.purchase.disputed", "module.purchase.refund", "module.purchase.refund", "module.purchase.refund", "module.purchase.refund", "module.purchase.refunded", "module.purchase.refunded", "module.purchase.refunded"]);
      // One module.purchase.refunded per refund (200, 200, then the remaining 599), each once.
      const refundedEvents = (await db.collection("events").where("type", "==", "module.purchase.refunded").get()).docs.map((doc) => doc.get("data"));
      expect(refundedEvents.map((data) => data.amount).sort()).toEqual([200, 200, 599]);
    });

    it("refunds a subscription's paid invoice, the latest or one named, and ends its access only with --cancel", async () => {
      await pricedModule("acme", "acme.charts", { model: "subscription", amount: 500, currency: "usd", interval: "month" });
      const buyer = await createUser();
      await buy(buyer, "acme.charts");
      const purchase = (await request(app).get(`${api}/users/me`).set(bearer(buyer))).body.purchases[0];
      expect(purchase).toMatchObject({ model: "subscription", status: "active" });
      const invoice = stripe.events.find((event) => event.type === "invoice.paid")!.data.object.id as string;
      const refundOf = async (...extra: string[]) => operatorCli("--json", "purchases", "refund", purchase.id, "--amount", "100", ...extra);
      expect((await refundOf("--invoice", "in_0000")).code).not.toBe(0);
      const named = await refundOf("--invoice", invoice);
      expect(named.code).toBe(0);
      // A refunded invoice changes earnings, never the subscription: access stays.
      expect((await request(app).get(`${api}/modules/download/acme.charts`).set(bearer(buyer))).status).toBe(200);
      const canceled = await refundOf("--cancel");
      expect(JSON.parse(canceled.stdout)).toMatchObject({ amount: 100, canceled: expect.stringMatching(/^sub_/) });
      expect(stripe.requests.some((call) => call.method === "DELETE" && call.path.startsWith("/v1/subscriptions/"))).toBe(true);
      expectProblem(await request(other).get(`${api}/modules/download/acme.charts`).set(bearer(buyer)), 403, "not_entitled");
    });

    it("follows a module subscription as Stripe has it: a refunded or lost invoice keeps access, the next paid one renews it, and events of one second end as Stripe says", async () => {
      const developer = await pricedModule("acme", "acme.charts", { model: "subscription", amount: 500, currency: "usd", interval: "month" });
      const buyer = await createUser();
      await buy(buyer, "acme.charts");
      const purchaseOf = async () => (await request(app).get(`${api}/users/me`).set(bearer(buyer))).body.purchases[0];
      const download = async () => (await request(other).get(`${api}/modules/download/acme.charts`).set(bearer(buyer))).status;
      const january = await purchaseOf();
      expect(january).toMatchObject({ model: "subscription", status: "active" });

      // January's invoice refunded in full: earnings change, the subscription does not.
      expect((await operatorCli("purchases", "refund", january.id)).code).toBe(0);
      expect(await download()).toBe(200);
      // February is paid: a new period, and a dispute of it lost changes earnings only.
      const february = await stripe.renew(january.id);
      expect(await download()).toBe(200);
      const renewed = await purchaseOf();
      expect(renewed.status).toBe("active");
      const monthLater = new Date(january.currentPeriodEnd);
      monthLater.setUTCMonth(monthLater.getUTCMonth() + 1);
      expect(renewed.currentPeriodEnd).toBe(monthLater.toISOString());
      const lost = { id: "evt_lost_february", object: "event", type: "charge.dispute.closed", created: nowSeconds(), data: { object: { id: "dp_feb", object: "dispute", amount: 500, status: "lost", payment_intent: february.payment_intent } } };
      expect((await deliver(lost)).body.outcome).toBe("applied");
      expect(await download()).toBe(200);
      // Fees: 75 on each invoice; January's is given back with its refund.
      expect((await request(app).get(`${api}/developers/earnings`).set(bearer(developer))).body.totals).toEqual([{ currency: "usd", sales: 2, gross: 1000, fees: 75, refunds: 1000, net: -75 }]);

      // Stripe cancels it; its event is late, and an "active" update of the same second comes first: what counts is what Stripe says.
      const release = stripe.holdEvents();
      await cancelAtStripe(january.id);
      const deleted = stripe.events.at(-1)!;
      expect(deleted.type).toBe("customer.subscription.deleted");
      const sameSecond = { ...deleted, id: "evt_same_second_update", type: "customer.subscription.updated", data: { object: { ...deleted.data.object, status: "active" } } };
      expect((await deliver(sameSecond)).body.outcome).toBe("applied");
      expect(await download()).toBe(403);
      await release();
      expect((await deliver({ ...sameSecond, id: "evt_same_second_again" }, other)).body.outcome).toBe("applied");
      expect(await download()).toBe(403);
      expect((await purchaseOf()).status).toBe("canceled");
      const { db } = await testDeps();
      expect((await db.collection("events").where("type", "==", "module.purchase.completed").get()).size).toBe(1);
    });

    it("fulfils a delayed payment when it settles, and grants nothing when it fails", async () => {
      await pricedModule("acme", "acme.charts", { model: "one_time", amount: 999 });
      const [paying, failing] = await Promise.all([createUser(), createUser()]);
      const download = async (buyer: TestUser) => (await request(other).get(`${api}/modules/download/acme.charts`).set(bearer(buyer))).status;
      const paidLater = async (buyer: TestUser) => {
        const checkout = await request(app).post(`${api}/modules/acme.charts/checkout`).set(bearer(buyer)).send({});
        expect(checkout.status).toBe(200);
        await submit(`${checkout.body.url}/pay`, "method=sepa_debit");
        expect(stripe.events.at(-1)).toMatchObject({ type: "checkout.session.completed", data: { object: { payment_status: "unpaid" } } });
        expect(await download(buyer)).toBe(403);
        return checkout.body.url as string;
      };
      const succeeding = await paidLater(paying);
      await submit(`${succeeding}/settle`, "outcome=succeeded");
      expect(stripe.events.at(-1)!.type).toBe("checkout.session.async_payment_succeeded");
      expect(await download(paying)).toBe(200);
      expect((await request(app).get(`${api}/users/me`).set(bearer(paying))).body.purchases).toEqual([expect.objectContaining({ model: "one_time", status: "active" })]);

      const failed = await paidLater(failing);
      await submit(`${failed}/settle`, "outcome=failed");
      expect(stripe.events.at(-1)!.type).toBe("checkout.session.async_payment_failed");
      expect(await download(failing)).toBe(403);
      expect((await request(app).get(`${api}/users/me`).set(bearer(failing))).body.purchases).toEqual([]);
      const { db } = await testDeps();
      expect((await db.collection("events").where("type", "==", "module.purchase.completed").get()).size).toBe(1);
    });

    it("sends module.purchase.completed once a purchase is paid, and module.purchase.refunded for every refund, whatever order the events come in", async () => {
      const developer = await pricedModule("acme", "acme.charts", { model: "subscription", amount: 500, interval: "month", trialDays: 7 });
      const buyer = await createUser();
      await buy(buyer, "acme.charts");
      const subscriptionId = String(stripe.events.find((event) => event.type === "customer.subscription.created")!.data.object.id);
      const { db } = await testDeps();
      const sent = async (type: string) => (await db.collection("events").where("type", "==", type).get()).docs.map((doc) => doc.get("data"));
      // A trial, then a renewal that fails: never paid, so never completed.
      await stripe.renew(subscriptionId, { paid: false });
      expect((await request(app).get(`${api}/users/me`).set(bearer(buyer))).body.purchases[0].status).toBe("past_due");
      expect(await sent("module.purchase.completed")).toEqual([]);
      await stripe.renew(subscriptionId);
      await stripe.renew(subscriptionId);
      expect(await sent("module.purchase.completed")).toEqual([{ moduleId: "acme.charts", purchaseId: subscriptionId, amount: 500, currency: "usd" }]);

      // A one-time sale with two refunds (300, then the rest: Stripe's amount_refunded is cumulative), each order twice over.
      await publishModule(developer, { id: "acme.maps", version: "1.0.0" });
      const orders = { pi_0a: [0, 1, 2], pi_0b: [1, 0, 2], pi_0c: [2, 1, 0], pi_0d: [1, 2, 0] };
      for (const [pi, order] of Object.entries(orders)) {
        stripe.recordPayment(pi, 1000, "usd", 150);
        const created = nowSeconds();
        const events = [
          { id: `evt_${pi}_sale`, object: "event", type: "checkout.session.completed", created, data: { object: { id: `cs_${pi}`, object: "checkout.session", mode: "payment", payment_status: "paid", metadata: { moduleId: "acme.maps", buyerUid: buyer.uid, quantity: "1" }, payment_intent: pi, amount_total: 1000, currency: "usd", created } } },
          { id: `evt_${pi}_300`, object: "event", type: "charge.refunded", created, data: { object: { id: `ch_${pi}`, object: "charge", amount: 1000, amount_refunded: 300, currency: "usd", payment_intent: pi } } },
          { id: `evt_${pi}_1000`, object: "event", type: "charge.refunded", created, data: { object: { id: `ch_${pi}`, object: "charge", amount: 1000, amount_refunded: 1000, currency: "usd", payment_intent: pi } } },
        ];
        for (const index of [...order, ...order]) expect((await deliver(events[index], index % 2 ? app : other)).status).toBe(200);
      }
      const refunds = (await sent("module.purchase.refunded")).reduce<Record<string, number[]>>((byPurchase, data) => ({ ...byPurchase, [data.purchaseId]: [...(byPurchase[data.purchaseId] ?? []), data.amount].sort((a, b) => a - b) }), {});
      // Both refunds are announced when the sale is known before the second; a refund that arrives late (300 after 1,000) adds nothing.
      expect(refunds).toEqual({ pi_0a: [300, 700], pi_0b: [300, 700], pi_0c: [1000], pi_0d: [1000] });
      expect((await sent("module.purchase.completed")).map((data) => data.purchaseId).sort()).toEqual([...Object.keys(orders), subscriptionId].sort());
    });

    it("sells seats to a business: exactly that many seat holders, oldest seats first, one trial per buyer", async () => {
      const developer = await pricedModule("acme", "acme.charts", { model: "subscription", amount: 500, interval: "month", trialDays: 7, perSeat: true });
      const [owner, early, late, admin] = await Promise.all([createUser(), createUser(), createUser(), createUser()]);
      const daysAgo = (days: number) => new Date(Date.now() - days * DAY * 1000);
      await putBusiness("globex", {
        name: "Globex",
        memberIds: [owner.uid, early.uid, late.uid, admin.uid],
        roles: { [owner.uid]: "owner", [early.uid]: "member", [late.uid]: "member", [admin.uid]: "admin" },
        seatSince: { [owner.uid]: daysAgo(30), [early.uid]: daysAgo(20), [late.uid]: daysAgo(1), [admin.uid]: null },
      });
      expectProblem(await request(app).post(`${api}/modules/acme.charts/checkout`).set(bearer(early)).send({ businessId: "globex", seats: 2 }), 403, "not_business_admin");
      expectProblem(await request(app).post(`${api}/modules/acme.charts/checkout`).set(bearer(admin)).send({ businessId: "globex" }), 400, "invalid_request");
      expectProblem(await request(app).post(`${api}/modules/acme.charts/checkout`).set(bearer(admin)).send({ seats: 2 }), 400, "invalid_request");
      expectProblem(await request(app).post(`${api}/modules/acme.charts/checkout`).set(bearer(admin)).send({ businessId: "initech", seats: 2 }), 404, "business_not_found");

      const sent = await buy(admin, "acme.charts", { businessId: "globex", seats: 2 });
      const destination = (await request(app).get(`${api}/developers/payouts`).set(bearer(developer))).body.accountId;
      const metadata = { moduleId: "acme.charts", buyerUid: admin.uid, businessId: "globex", quantity: "2" };
      expect(sent).toMatchObject({
        mode: "subscription",
        line_items: [{ price: expect.stringMatching(/^price_/), quantity: "2" }],
        metadata,
        subscription_data: { application_fee_percent: "15", transfer_data: { destination }, metadata, trial_period_days: "7" },
      });
      expect(sent).not.toHaveProperty("payment_intent_data");

      const entitled = async (who: TestUser) => (await request(other).get(`${api}/modules/download/acme.charts`).set(bearer(who))).status === 200;
      expect(await Promise.all([owner, early, late, admin].map(entitled))).toEqual([true, true, false, false]);
      const ownerProfile = (await request(app).get(`${api}/users/me`).set(bearer(owner))).body;
      expect(ownerProfile.purchases).toEqual([{ id: expect.stringMatching(/^sub_/), moduleId: "acme.charts", model: "subscription", status: "trialing", currentPeriodEnd: expect.any(String), businessId: "globex" }]);
      // A certificate of a subscription purchase ends with its period (+ 3 days of grace).
      const confirmed = await request(app).post(`${api}/modules/confirm`).set(bearer(owner)).send({ moduleId: "acme.charts", deviceId: "pc-1" });
      const claims = await verifyActivationCertificate(confirmed.body.certificate, (await request(app).get(`${api}/signing-keys`)).body, { deviceId: "pc-1", moduleId: "acme.charts" });
      expect(claims.exp).toBe(Math.floor(Date.parse(ownerProfile.purchases[0].currentPeriodEnd) / 1000) + 3 * DAY);
      expectProblem(await request(app).post(`${api}/modules/acme.charts/checkout`).set(bearer(owner)).send({ businessId: "globex", seats: 3 }), 409, "already_owned");

      // A second business of the same owner gets no trial of it either.
      await putBusiness("initech", { name: "Initech", memberIds: [owner.uid], roles: { [owner.uid]: "owner" } });
      expect((await request(app).post(`${api}/modules/acme.charts/checkout`).set(bearer(owner)).send({ businessId: "initech", seats: 1 })).status).toBe(200);
      expect(callsTo("/v1/checkout/sessions").at(-1)!.params.subscription_data).not.toHaveProperty("trial_period_days");

      // Canceled: no access, and a second checkout offers no second trial. A person may still have their own.
      const subscription = stripe.events.find((event) => event.type === "customer.subscription.created")!.data.object;
      await cancelAtStripe(String(subscription.id));
      expect(await entitled(owner)).toBe(false);
      const again = await buy(owner, "acme.charts", { businessId: "globex", seats: 3 });
      expect(again.subscription_data).not.toHaveProperty("trial_period_days");
      expect(await Promise.all([owner, early, late, admin].map(entitled))).toEqual([true, true, true, false]);
      expect((await buy(late, "acme.charts")).subscription_data).toMatchObject({ trial_period_days: "7" });

      // Free again: the running module subscriptions end with their period, and nobody new pays.
      expect((await request(app).delete(`${api}/developers/modules/acme.charts/pricing`).set(bearer(developer))).status).toBe(204);
      expect(stripe.requests.filter((call) => call.method === "POST" && call.path.startsWith("/v1/subscriptions/")).map((call) => call.params)).toEqual([{ cancel_at_period_end: "true" }, { cancel_at_period_end: "true" }]);
      const purchases = (await request(app).get(`${api}/users/me`).set(bearer(late))).body.purchases;
      expect(purchases).toHaveLength(2);
      expect(await entitled(late)).toBe(true);
    });

    it("refuses what is not for sale, sales to people of seat-only offers, and answers 502 with nothing recorded when Stripe fails", async () => {
      const developer = await createDeveloper("acme");
      await publishModule(developer, { id: "acme.free", version: "1.0.0" });
      const buyer = await createUser();
      expectProblem(await request(app).post(`${api}/modules/acme.free/checkout`).set(bearer(buyer)).send({}), 409, "not_for_sale");
      expectProblem(await request(app).post(`${api}/modules/acme.none/checkout`).set(bearer(buyer)).send({}), 404, "module_not_found");
      await pricedModule("globex", "globex.maps", { model: "one_time", amount: 2500 });
      const owner = await createUser();
      const { db } = await testDeps();
      await putBusiness("initech", { name: "Initech", memberIds: [owner.uid], roles: { [owner.uid]: "owner" } });
      expectProblem(await request(app).post(`${api}/modules/globex.maps/checkout`).set(bearer(owner)).send({ businessId: "initech", seats: 2 }), 400, "invalid_request");
      for (const body of [{ seats: 0 }, { businessId: "initech", seats: 10_001 }, { seats: "2" }, { businessId: "" }, { gift: true }]) {
        expectProblem(await request(app).post(`${api}/modules/globex.maps/checkout`).set(bearer(owner)).send(body), 400, "invalid_request");
      }
      // The publisher's account loses its charges: the module cannot be bought meanwhile.
      const account = (await db.doc("payoutAccounts/globex").get()).get("accountId");
      await deliver({ id: "evt_disabled", object: "event", type: "account.updated", created: nowSeconds() + 5, account, data: { object: { id: account, object: "account", metadata: { publisherId: "globex" }, charges_enabled: false, payouts_enabled: false, requirements: { currently_due: ["external_account"] } } } });
      expectProblem(await request(app).post(`${api}/modules/globex.maps/checkout`).set(bearer(buyer)).send({}), 409, "not_for_sale");
      await deliver({ id: "evt_enabled", object: "event", type: "account.updated", created: nowSeconds() + 6, account, data: { object: { id: account, object: "account", metadata: { publisherId: "globex" }, charges_enabled: true, payouts_enabled: true, requirements: { currently_due: [] } } } });

      stripe.failNext(4, { status: 503 });
      expectProblem(await request(app).post(`${api}/modules/globex.maps/checkout`).set(bearer(buyer)).send({}), 502, "billing_unavailable");
      expect((await db.collection("purchases").get()).size).toBe(0);
    });
  });

  describe("earnings", () => {
    it("add up to the cent in Stripe's own figures, after 50 concurrent, repeated, shuffled events of sales, refunds and disputes", async () => {
      const developer = await pricedModule("acme", "acme.charts", { model: "one_time", amount: 1000 });
      await publishModule(developer, { id: "acme.maps", version: "1.0.0" });
      const priceMaps = async (pricing: Record<string, unknown>) => expect((await request(app).put(`${api}/developers/modules/acme.maps/pricing`).set(bearer(developer)).send(pricing)).status).toBe(200);
      const buyers = await Promise.all(Array.from({ length: 5 }, () => createUser()));
      const paid = async (buyer: TestUser, moduleId: string) => {
        await buy(buyer, moduleId);
        return String(stripe.events.at(-1)!.data.object.payment_intent);
      };
      const pa = await paid(buyers[0], "acme.charts");
      const pb = await paid(buyers[1], "acme.charts");
      await priceMaps({ model: "one_time", amount: 2999 });
      const pc = await paid(buyers[2], "acme.maps");
      const pd = await paid(buyers[3], "acme.charts");
      await priceMaps({ model: "one_time", amount: 1850, currency: "eur" });
      const pe = await paid(buyers[4], "acme.maps");
      // Two refunds of one charge (Stripe's amount_refunded is cumulative) and a partial one; Stripe gives the fee back with each.
      for (const args of [[pb, "--amount", "300"], [pb], [pc, "--amount", "999"]]) expect((await operatorCli("purchases", "refund", ...args)).code).toBe(0);
      const dispute = (pi: string, amount: number, type: string, status: string) => ({ id: `evt_${type}_${pi}`, object: "event", type, created: nowSeconds(), data: { object: { id: `dp_${pi}`, object: "dispute", amount, status, payment_intent: pi } } });
      const disputes = [dispute(pd, 1000, "charge.dispute.created", "needs_response"), dispute(pd, 1000, "charge.dispute.closed", "lost"), dispute(pe, 1850, "charge.dispute.created", "needs_response"), dispute(pe, 1850, "charge.dispute.closed", "won")];

      // Everything Stripe said of these payments, applied afresh: every event four times (Stripe
      // retries), shuffled, 50 at a time, so that refunds and disputes often come before their sale.
      const events = [...stripe.events.filter((event) => event.type === "checkout.session.completed" || event.type === "charge.refunded"), ...disputes];
      expect(events).toHaveLength(5 + 3 + 4);
      const { db } = await testDeps();
      await Promise.all(["ledger", "purchases", "stripeEvents"].map((name) => db.recursiveDelete(db.collection(name))));
      const deliveries = [...events, ...events, ...events, ...events].map((item) => ({ item, order: Math.random() }));
      deliveries.sort((a, b) => a.order - b.order);
      // A 503 is redelivered, as Stripe redelivers any answer that is not 2xx.
      for (let start = 0; start < deliveries.length; start += 50) {
        const batch = deliveries.slice(start, start + 50);
        const answers = await sendRetryingUnavailable(batch.length, (index) => deliver(batch[index].item, index % 2 ? app : other));
        expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
      }
      const earnings = await request(app).get(`${api}/developers/earnings`).set(bearer(developer));
      expect(earnings.status).toBe(200);
      // The fees Stripe took: 150 per 1,000 (15 %); 2,999 → 449.85 → 450; 1,850 → 277.5 → 278.
      // Given back with the refunds: 150 of the first (refunded in full), 150 of the 999 of 2,999.
      expect(earnings.body.totals).toEqual([
        { currency: "eur", sales: 1, gross: 1850, fees: 278, refunds: 0, net: 1572 },
        { currency: "usd", sales: 4, gross: 5999, fees: 150 + 0 + 300 + 150, refunds: 1000 + 999 + 1000, net: 5999 - 600 - 2999 },
      ]);
      expect(earnings.body.modules).toEqual([
        { moduleId: "acme.maps", currency: "eur", sales: 1, gross: 1850, fees: 278, refunds: 0, net: 1572 },
        { moduleId: "acme.charts", currency: "usd", sales: 3, gross: 3000, fees: 300, refunds: 2000, net: 700 },
        { moduleId: "acme.maps", currency: "usd", sales: 1, gross: 2999, fees: 300, refunds: 999, net: 1700 },
      ]);
      const status = async (buyer: TestUser, pi: string) => (await request(app).get(`${api}/users/me`).set(bearer(buyer))).body.purchases.find((purchase: { id: string }) => purchase.id === pi).status;
      expect(await Promise.all([pa, pb, pc, pd, pe].map((pi, index) => status(buyers[index], pi)))).toEqual(["active", "refunded", "active", "revoked", "active"]);

      // Outside the range, nothing; a malformed range is a 400.
      const ago = (days: number) => new Date(Date.now() - days * DAY * 1000).toISOString().slice(0, 10);
      expect((await request(app).get(`${api}/developers/earnings?from=${ago(60)}&to=${ago(31)}`).set(bearer(developer))).body).toEqual({ from: ago(60), to: ago(31), totals: [], modules: [] });
      expectProblem(await request(app).get(`${api}/developers/earnings?from=${ago(1)}&to=${ago(3)}`).set(bearer(developer)), 400, "invalid_request");
      expectProblem(await request(app).get(`${api}/developers/earnings?from=yesterday`).set(bearer(developer)), 400, "invalid_request");
      expect((await request(app).get(`${api}/developers/earnings`).set(bearer(await createDeveloper("globex")))).body.totals).toEqual([]);
    });
  });

  /** The operator CLI with the local Stripe as STRIPE_API_BASE, as an operator would run it. */
  async function operatorCli(...argv: string[]) {
    const saved = { key: process.env.STRIPE_SECRET_KEY, base: process.env.STRIPE_API_BASE };
    Object.assign(process.env, { STRIPE_SECRET_KEY: "sk_test_local", STRIPE_API_BASE: stripe.url });
    try {
      return await runAdmin(argv);
    } finally {
      for (const [name, value] of [["STRIPE_SECRET_KEY", saved.key], ["STRIPE_API_BASE", saved.base]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  }

  /** Cancels a subscription at Stripe, as the Billing Portal would: Stripe then sends customer.subscription.deleted. */
  async function cancelAtStripe(subscriptionId: string) {
    const answer = await fetch(`${stripe.url}/v1/subscriptions/${subscriptionId}`, { method: "DELETE", headers: { Authorization: "Bearer sk_test_local" } });
    expect(answer.status).toBe(200);
  }

  async function deliver(event: object, target: Express = app) {
    const { payload, header } = signed(event);
    return request(target).post(`${api}/billing/stripe/webhook`).set("Content-Type", "application/json").set("Stripe-Signature", header).send(payload);
  }
});
