import request from "supertest";
import { countDocuments, putBusiness } from "./support/fixtures";
import { bearer, createUser, expectProblem, resetEmulators, testApp, testDeps } from "./support/harness";
import { nowSeconds, signed, subscriptionEvent } from "./support/stripe-events";

const WEBHOOK = "/api/v1/billing/stripe/webhook";

async function deliver(event: object | string, options: { secret?: string; timestamp?: number; header?: string | null; body?: string } = {}) {
  const { payload, header } = signed(event, options);
  let call = request(await testApp()).post(WEBHOOK).set("Content-Type", "application/json; charset=utf-8");
  if (options.header !== null) call = call.set("Stripe-Signature", options.header ?? header);
  return call.send(options.body ?? payload);
}

async function storedSubscription(businessId: string): Promise<Record<string, unknown> | null> {
  const { db } = await testDeps();
  const snapshot = await db.doc(`subscriptions/${businessId}`).get();
  return snapshot.exists ? { ...snapshot.data(), updateTime: snapshot.updateTime!.toMillis() } : null;
}

const asDate = (seconds: number) => new Date(seconds * 1000);

describe("POST /billing/stripe/webhook (§11)", () => {
  beforeEach(resetEmulators);

  it("writes the contract's subscription document and creates the business with the customer's name", async () => {
    const event = subscriptionEvent({
      customer: { id: "cus_1", object: "customer", name: "Acme Corporation" },
      price: { metadata: { entitlements: "pro, maps,pro" } },
      quantity: 12,
      cancelAtPeriodEnd: true,
    });
    const response = await deliver(event);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ received: true, eventId: event.id, outcome: "applied" });

    const stored = await storedSubscription("acme-corp");
    expect(stored).toEqual({
      status: "active",
      plan: "team-monthly",
      seats: 12,
      currentPeriodEnd: expect.anything(),
      cancelAtPeriodEnd: true,
      entitlements: ["pro", "maps"],
      stripeSubscriptionId: "sub_1",
      stripeEventCreated: expect.anything(),
      // The seats follow the quantity in the background (§25): the seat balancer clears the mark.
      seatsPending: true,
      updateTime: expect.any(Number),
    });
    expect((stored!.currentPeriodEnd as { toDate(): Date }).toDate()).toEqual(asDate(event.data.object.items.data[0].current_period_end!));
    expect((stored!.stripeEventCreated as { toDate(): Date }).toDate()).toEqual(asDate(event.created));
    const { db } = await testDeps();
    expect((await db.doc("businesses/acme-corp").get()).data()).toEqual({ name: "Acme Corporation", stripeCustomerId: "cus_1" });
    expect((await db.collection("businesses/acme-corp/members").get()).size).toBe(0);
  });

  it("keeps an existing business's name and members, whose entitlements follow the subscription", async () => {
    const member = await createUser();
    await putBusiness("acme-corp", { name: "Acme", memberIds: [member.uid], roles: { [member.uid]: "owner" } });
    expect((await deliver(subscriptionEvent({ customer: { id: "cus_1", object: "customer", name: "Renamed" } }))).body.outcome).toBe("applied");
    const { db } = await testDeps();
    expect((await db.doc("businesses/acme-corp").get()).data()).toEqual({ name: "Acme", stripeCustomerId: "cus_1" });
    expect((await db.collection("businesses/acme-corp/members").get()).docs.map((doc) => [doc.id, doc.get("role")])).toEqual([[member.uid, "owner"]]);

    const profile = await request(await testApp()).get("/api/v1/users/me").set(bearer(member));
    expect(profile.body.entitlements).toEqual([{ key: "pro", source: "subscription", businessId: "acme-corp" }]);
    const status = await request(await testApp()).get("/api/v1/subscriptions/acme-corp").set(bearer(member));
    expect(status.body).toEqual(expect.objectContaining({ status: "active", plan: "team-monthly", seats: 5, entitlements: ["pro"] }));

    const canceled = subscriptionEvent({ type: "customer.subscription.deleted", status: "canceled", created: nowSeconds() + 1 });
    expect((await deliver(canceled)).body.outcome).toBe("applied");
    const after = await request(await testApp()).get("/api/v1/users/me").set(bearer(member));
    expect(after.body.entitlements).toEqual([]);
  });

  it("falls back to the price id, the product's entitlements, the subscription's period end and the business id as name", async () => {
    const created = nowSeconds();
    const event = subscriptionEvent({
      created,
      price: { id: "price_9", lookup_key: null, metadata: {}, product: { id: "prod_9", object: "product", metadata: { entitlements: "beta" } } },
      itemPeriodEnd: null,
      subscriptionPeriodEnd: created + 3600,
    });
    expect((await deliver(event)).body.outcome).toBe("applied");
    const stored = await storedSubscription("acme-corp");
    expect(stored).toEqual(expect.objectContaining({ plan: "price_9", entitlements: ["beta"] }));
    expect((stored!.currentPeriodEnd as { toDate(): Date }).toDate()).toEqual(asDate(created + 3600));
    const { db } = await testDeps();
    expect((await db.doc("businesses/acme-corp").get()).get("name")).toBe("acme-corp");

    await deliver(subscriptionEvent({ created: created + 1, price: { metadata: {}, product: "prod_not_expanded" } }));
    expect(await storedSubscription("acme-corp")).toEqual(expect.objectContaining({ entitlements: [] }));
  });

  it("maps Stripe's statuses as the contract says, and does not write an incomplete subscription", async () => {
    const expected: Record<string, string> = {
      active: "active",
      trialing: "trialing",
      past_due: "past_due",
      unpaid: "past_due",
      canceled: "canceled",
      incomplete_expired: "expired",
      paused: "canceled",
    };
    let created = nowSeconds();
    for (const [status, stored] of Object.entries(expected)) {
      created += 1;
      expect((await deliver(subscriptionEvent({ type: "customer.subscription.updated", status, created }))).body.outcome).toBe("applied");
      expect((await storedSubscription("acme-corp"))!.status).toBe(stored);
    }
    const incomplete = await deliver(subscriptionEvent({ businessId: "newco", status: "incomplete" }));
    expect(incomplete.status).toBe(200);
    expect(incomplete.body.outcome).toBe("ignored");
    expect(await storedSubscription("newco")).toBeNull();
  });

  it("processes an event once: a replay, even concurrent, changes nothing", async () => {
    const event = subscriptionEvent();
    const first = await deliver(event);
    expect(first.body.outcome).toBe("applied");
    const before = await storedSubscription("acme-corp");
    const replays = await Promise.all(Array.from({ length: 5 }, () => deliver(event)));
    expect(replays.map((response) => [response.status, response.body.outcome])).toEqual(Array(5).fill([200, "duplicate"]));
    expect(await storedSubscription("acme-corp")).toEqual(before);

    const fresh = subscriptionEvent({ created: nowSeconds() + 5, quantity: 7 });
    const concurrent = await Promise.all(Array.from({ length: 5 }, () => deliver(fresh)));
    expect(concurrent.map((response) => response.status)).toEqual(Array(5).fill(200));
    expect(concurrent.map((response) => response.body.outcome).sort()).toEqual(["applied", "duplicate", "duplicate", "duplicate", "duplicate"]);
    expect((await storedSubscription("acme-corp"))!.seats).toBe(7);
    expect(await countDocuments("stripeEvents")).toBe(2);
  });

  it("ignores an event older than the one that last wrote the business", async () => {
    const created = nowSeconds();
    const later = subscriptionEvent({ type: "customer.subscription.updated", status: "past_due", created: created + 60 });
    const earlier = subscriptionEvent({ type: "customer.subscription.created", status: "active", created });
    expect((await deliver(later)).body.outcome).toBe("applied");
    const before = await storedSubscription("acme-corp");
    const stale = await deliver(earlier);
    expect(stale.status).toBe(200);
    expect(stale.body.outcome).toBe("stale");
    expect(await storedSubscription("acme-corp")).toEqual(before);
    expect(before!.status).toBe("past_due");
  });

  it("keeps a live subscription when another, older Stripe subscription of the business ends", async () => {
    const created = nowSeconds();
    expect((await deliver(subscriptionEvent({ subscriptionId: "sub_new", created }))).body.outcome).toBe("applied");
    const old = subscriptionEvent({ subscriptionId: "sub_old", type: "customer.subscription.deleted", status: "canceled", created: created + 10 });
    expect((await deliver(old)).body.outcome).toBe("superseded");
    expect(await storedSubscription("acme-corp")).toEqual(expect.objectContaining({ status: "active", stripeSubscriptionId: "sub_new" }));
  });

  it("answers 200 and writes nothing for other event types and subscriptions without metadata.businessId", async () => {
    const invoice = { id: "evt_invoice_1", object: "event", type: "invoice.paid", created: nowSeconds(), data: { object: { id: "in_1", object: "invoice" } } };
    expect((await deliver(invoice)).body).toEqual({ received: true, eventId: "evt_invoice_1", outcome: "ignored" });
    expect((await deliver(subscriptionEvent({ businessId: null }))).body.outcome).toBe("ignored");
    expect((await deliver(subscriptionEvent({ businessId: "a/b" }))).body.outcome).toBe("ignored");
    expect(await countDocuments("subscriptions")).toBe(0);
    expect(await countDocuments("businesses")).toBe(0);
    expect(await countDocuments("stripeEvents")).toBe(0);
  });

  it("refuses a bad, missing, stale or other-secret signature with 400 invalid_signature, writing nothing", async () => {
    const event = subscriptionEvent();
    const { header } = signed(event);
    expectProblem(await deliver(event, { header: null }), 400, "invalid_signature");
    expectProblem(await deliver(event, { header: "t=1,v1=00" }), 400, "invalid_signature");
    expectProblem(await deliver(event, { secret: "whsec_someone_else" }), 400, "invalid_signature");
    expectProblem(await deliver(event, { timestamp: nowSeconds() - 301 }), 400, "invalid_signature");
    const tampered = JSON.stringify({ ...event, data: { object: { ...event.data.object, metadata: { businessId: "victim" } } } });
    expectProblem(await deliver(event, { header, body: tampered }), 400, "invalid_signature");
    expect(await countDocuments("subscriptions")).toBe(0);
    expect(await countDocuments("stripeEvents")).toBe(0);
  });

  it("answers 400 for signed bodies that are not Stripe subscription events, and 415 for another media type", async () => {
    expectProblem(await deliver("not json"), 400, "invalid_request");
    expectProblem(await deliver({ hello: "world" }), 400, "invalid_request");
    const broken = subscriptionEvent();
    (broken.data.object as { items: unknown }).items = { data: [] };
    expectProblem(await deliver(broken), 400, "invalid_request");
    const { payload, header } = signed(subscriptionEvent());
    expectProblem(await request(await testApp()).post(WEBHOOK).set("Content-Type", "text/plain").set("Stripe-Signature", header).send(payload), 415, "unsupported_media_type");
    expect(await countDocuments("subscriptions")).toBe(0);
  });

  it("refuses every event when no secret is configured", async () => {
    const { payload, header } = signed(subscriptionEvent());
    const app = await testApp({ config: { stripeWebhookSecrets: [] } });
    expectProblem(await request(app).post(WEBHOOK).set("Content-Type", "application/json").set("Stripe-Signature", header).send(payload), 400, "invalid_signature");
  });
});
