import { Timestamp } from "firebase-admin/firestore";
import request from "supertest";
import { activationStore } from "../src/accounts/activation-store";
import { userProfileSchema } from "../src/users/schemas";
import { daysFromNow, putBusiness, putSubscription, putUser } from "./support/fixtures";
import { bearer, createUser, resetEmulators, testApp, testDeps } from "./support/harness";

describe("GET /users/me", () => {
  beforeEach(resetEmulators);

  it("gives a user without a users document an empty profile, not a 404", async () => {
    const user = await createUser({ displayName: "Token Name" });
    const response = await request(await testApp()).get("/api/v1/users/me").set(bearer(user));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      uid: user.uid,
      email: user.email,
      displayName: "Token Name",
      entitlements: [],
      businesses: [],
      purchases: [],
      policies: [],
      activations: [],
    });
  });

  it("lists direct and subscription entitlements with their sources, businesses with roles, and activations", async () => {
    const user = await createUser();
    const other = await createUser();
    await putUser(user.uid, { displayName: "Ada", entitlements: ["beta"] });
    await putBusiness("acme", { name: "Acme", memberIds: [user.uid, other.uid], roles: { [user.uid]: "admin" } });
    await putSubscription("acme", { status: "active", currentPeriodEnd: daysFromNow(20), entitlements: ["pro"] });
    await putBusiness("globex", { name: "Globex", memberIds: [user.uid] });
    await putSubscription("globex", { status: "canceled", currentPeriodEnd: daysFromNow(20), entitlements: ["maps"] });
    await putBusiness("initech", { name: "Initech", memberIds: [other.uid] });
    await putSubscription("initech", { status: "active", currentPeriodEnd: daysFromNow(20), entitlements: ["secret"] });
    const { db } = await testDeps();
    const activatedAt = new Date("2026-01-02T03:04:05.000Z");
    const lastSeenAt = new Date("2026-01-05T00:00:00.000Z");
    await activationStore(db).create(user.uid, {
      moduleId: "acme.charts",
      version: "1.2.0",
      deviceId: "pc-1",
      activatedAt,
      updatedAt: lastSeenAt,
      devices: [{ deviceId: "pc-1", activatedAt, lastSeenAt, version: "1.2.0" }],
    });

    const response = await request(await testApp()).get("/api/v1/users/me").set(bearer(user));

    expect(response.status).toBe(200);
    expect(userProfileSchema.parse(response.body)).toBeTruthy();
    expect(response.body.displayName).toBe("Ada");
    expect(response.body.entitlements).toEqual([
      { key: "beta", source: "direct" },
      { key: "pro", source: "subscription", businessId: "acme" },
    ]);
    expect(response.body.businesses).toEqual(
      expect.arrayContaining([
        // Members written without seat records (by a tool that predates §17) hold a seat.
        { id: "acme", name: "Acme", role: "admin", seat: true, entitled: true, ssoRequired: false },
        { id: "globex", name: "Globex", role: "member", seat: true, entitled: false, ssoRequired: false },
      ]),
    );
    expect(response.body.businesses).toHaveLength(2);
    expect(response.body.activations).toEqual([
      {
        moduleId: "acme.charts",
        version: "1.2.0",
        activatedAt: "2026-01-02T03:04:05.000Z",
        devices: [{ deviceId: "pc-1", activatedAt: "2026-01-02T03:04:05.000Z", lastSeenAt: "2026-01-05T00:00:00.000Z" }],
      },
    ]);
  });

  it("keeps subscription entitlements for 3 days after the period end, then drops them", async () => {
    const user = await createUser();
    await putBusiness("acme", { name: "Acme", memberIds: [user.uid] });
    const periodEnd = new Date("2026-03-01T00:00:00.000Z");
    await putSubscription("acme", { status: "past_due", currentPeriodEnd: Timestamp.fromDate(periodEnd), entitlements: ["pro"] });
    const at = (ms: number) => testApp({ clock: () => new Date(periodEnd.getTime() + ms) });
    const threeDays = 3 * 24 * 60 * 60 * 1000;

    const withinGrace = await request(await at(threeDays)).get("/api/v1/users/me").set(bearer(user));
    expect(withinGrace.body.entitlements).toEqual([{ key: "pro", source: "subscription", businessId: "acme" }]);

    const afterGrace = await request(await at(threeDays + 1000)).get("/api/v1/users/me").set(bearer(user));
    expect(afterGrace.body.entitlements).toEqual([]);
    expect(withinGrace.body.businesses).toEqual([{ id: "acme", name: "Acme", role: "member", seat: true, entitled: true, ssoRequired: false }]);
    expect(afterGrace.body.businesses).toEqual([{ id: "acme", name: "Acme", role: "member", seat: true, entitled: false, ssoRequired: false }]);
  });
});
