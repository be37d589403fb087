import { Timestamp } from "firebase-admin/firestore";
import request from "supertest";
import { subscriptionStatusSchema } from "../src/subscriptions/schemas";
import { daysFromNow, putBusiness, putSubscription } from "./support/fixtures";
import { bearer, createUser, expectProblem, resetEmulators, testApp } from "./support/harness";

describe("GET /subscriptions/:businessId", () => {
  beforeEach(resetEmulators);

  it("gives a member the subscription with its effective status", async () => {
    const user = await createUser();
    await putBusiness("acme", { name: "Acme", memberIds: [user.uid] });
    const currentPeriodEnd = daysFromNow(12);
    await putSubscription("acme", {
      status: "trialing",
      plan: "business",
      seats: 25,
      currentPeriodEnd,
      cancelAtPeriodEnd: true,
      entitlements: ["pro", "charts"],
    });
    const response = await request(await testApp()).get("/api/v1/subscriptions/acme").set(bearer(user));
    expect(response.status).toBe(200);
    expect(subscriptionStatusSchema.parse(response.body)).toBeTruthy();
    expect(response.body).toEqual({
      businessId: "acme",
      status: "trialing",
      plan: "business",
      seats: 25,
      currentPeriodEnd: currentPeriodEnd.toDate().toISOString(),
      cancelAtPeriodEnd: true,
      entitlements: ["pro", "charts"],
    });
  });

  it("reports an active subscription more than 3 days past its period end as expired", async () => {
    const user = await createUser();
    await putBusiness("acme", { name: "Acme", memberIds: [user.uid] });
    const periodEnd = new Date("2026-03-01T00:00:00.000Z");
    await putSubscription("acme", { status: "active", currentPeriodEnd: Timestamp.fromDate(periodEnd), entitlements: ["pro"] });
    const at = async (ms: number) =>
      (await request(await testApp({ clock: () => new Date(periodEnd.getTime() + ms) })).get("/api/v1/subscriptions/acme").set(bearer(user))).body;
    const threeDays = 3 * 24 * 60 * 60 * 1000;
    expect((await at(threeDays)).status).toBe("active");
    expect((await at(threeDays + 1)).status).toBe("expired");
  });

  it("answers status none for a business without a subscription document", async () => {
    const user = await createUser();
    await putBusiness("acme", { name: "Acme", memberIds: [user.uid] });
    const response = await request(await testApp()).get("/api/v1/subscriptions/acme").set(bearer(user));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      businessId: "acme",
      status: "none",
      plan: null,
      seats: null,
      currentPeriodEnd: null,
      cancelAtPeriodEnd: false,
      entitlements: [],
    });
  });

  it("answers the same 404 business_not_found to a non-member and for a business that does not exist", async () => {
    const outsider = await createUser();
    await putBusiness("acme", { name: "Acme", memberIds: ["someone-else"] });
    await putSubscription("acme", { status: "active", currentPeriodEnd: daysFromNow(5), entitlements: ["pro"] });
    const app = await testApp();
    const hidden = await request(app).get("/api/v1/subscriptions/acme").set(bearer(outsider));
    const missing = await request(app).get("/api/v1/subscriptions/nope").set(bearer(outsider));
    expectProblem(hidden, 404, "business_not_found");
    expectProblem(missing, 404, "business_not_found");
    expect(hidden.body.detail.replace("acme", "X")).toBe(missing.body.detail.replace("nope", "X"));
  });

  it("rejects an id that cannot be a document id with 400", async () => {
    const user = await createUser();
    const response = await request(await testApp()).get("/api/v1/subscriptions/__reserved__").set(bearer(user));
    expectProblem(response, 400, "invalid_request");
    expect(response.body.errors).toEqual([{ path: "businessId", message: "Not a valid id." }]);
    expectProblem(await request(await testApp()).get("/api/v1/subscriptions/a%2Fb").set(bearer(user)), 400, "invalid_request");
  });

  it("needs authentication", async () => {
    expectProblem(await request(await testApp()).get("/api/v1/subscriptions/acme"), 401, "unauthenticated");
  });
});
