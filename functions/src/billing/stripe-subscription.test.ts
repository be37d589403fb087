import { stripeSubscriptionObject } from "../payments/stripe-objects";
import { stripeWriteDecision, subscriptionFromStripe } from "./stripe-subscription";

const object = (overrides: Record<string, unknown> = {}) =>
  stripeSubscriptionObject.parse({
    id: "sub_1",
    status: "active",
    customer: "cus_1",
    metadata: { businessId: "acme" },
    items: { data: [{ price: { id: "price_1", lookup_key: "team", metadata: { entitlements: "pro,maps" } }, quantity: 3, current_period_end: 1_800_000_000 }] },
    ...overrides,
  });

describe("subscriptionFromStripe", () => {
  it("maps the first item's price, quantity and period end", () => {
    expect(subscriptionFromStripe(object())).toEqual({
      kind: "write",
      businessId: "acme",
      businessName: "acme",
      subscription: {
        status: "active",
        plan: "team",
        seats: 3,
        currentPeriodEnd: new Date(1_800_000_000_000),
        cancelAtPeriodEnd: false,
        entitlements: ["pro", "maps"],
      },
      droppedEntitlements: [],
    });
  });

  it("leaves out entitlement keys that are not keys, and says which", () => {
    const result = subscriptionFromStripe(object({ items: { data: [{ price: { id: "p", metadata: { entitlements: "pro, Not A Key ,," } } }] }, current_period_end: 1 }));
    expect(result).toEqual(expect.objectContaining({ droppedEntitlements: ["Not A Key"] }));
    expect(result.kind === "write" && result.subscription).toEqual(expect.objectContaining({ entitlements: ["pro"], plan: "p", seats: null }));
  });

  it("skips what it must not write", () => {
    expect(subscriptionFromStripe(object({ metadata: {} })).kind).toBe("skip");
    expect(subscriptionFromStripe(object({ status: "incomplete" })).kind).toBe("skip");
    expect(subscriptionFromStripe(object({ status: "something_new" })).kind).toBe("skip");
    expect(subscriptionFromStripe(object({ items: { data: [{ price: { id: "p" } }] } })).kind).toBe("skip");
  });
});

describe("stripeWriteDecision", () => {
  const at = (seconds: number) => new Date(seconds * 1000);
  const stored = { status: "active" as const, stripe: { subscriptionId: "sub_1", eventCreated: at(100) } };

  it("applies to a document Stripe never wrote, and to events not older than the last", () => {
    expect(stripeWriteDecision(null, { subscriptionId: "sub_1", status: "active", eventCreated: at(1) })).toBe("applied");
    expect(stripeWriteDecision({ status: "active", stripe: null }, { subscriptionId: "sub_1", status: "canceled", eventCreated: at(1) })).toBe("applied");
    expect(stripeWriteDecision(stored, { subscriptionId: "sub_1", status: "canceled", eventCreated: at(100) })).toBe("applied");
  });

  it("refuses older events, and the end of another subscription while this one is live", () => {
    expect(stripeWriteDecision(stored, { subscriptionId: "sub_1", status: "active", eventCreated: at(99) })).toBe("stale");
    expect(stripeWriteDecision(stored, { subscriptionId: "sub_0", status: "canceled", eventCreated: at(200) })).toBe("superseded");
    expect(stripeWriteDecision(stored, { subscriptionId: "sub_2", status: "active", eventCreated: at(200) })).toBe("applied");
    expect(stripeWriteDecision({ ...stored, status: "canceled" }, { subscriptionId: "sub_0", status: "canceled", eventCreated: at(200) })).toBe("applied");
  });
});
