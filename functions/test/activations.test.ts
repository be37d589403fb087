import { compactVerify, createLocalJWKSet, decodeProtectedHeader } from "jose";
import request from "supertest";
import { verifyActivationCertificate } from "../../docs/examples/verify-activation-certificate";
import { countDocuments, daysFromNow, putBusiness, putSubscription, putUser } from "./support/fixtures";
import { bearer, createDeveloper, createUser, expectProblem, otherInstanceApp, publishModule, resetEmulators, sendRetryingUnavailable, testApp, testDeps, type TestUser } from "./support/harness";

const DAY_SECONDS = 24 * 60 * 60;

describe("activations per device and their certificates (§10)", () => {
  beforeAll(async () => {
    await resetEmulators();
    const acme = await createDeveloper("acme");
    await publishModule(acme, { id: "acme.maps", name: "World Maps", summary: "Offline maps.", version: "1.0.0" });
    await publishModule(acme, { id: "acme.charts", name: "Charts", summary: "Charts.", version: "2.0.0", entitlement: "pro" });
  });

  let user: TestUser;
  beforeEach(async () => {
    user = await createUser();
  });

  const confirm = async (who: TestUser, body: object, app?: Awaited<ReturnType<typeof testApp>>) =>
    request(app ?? (await testApp())).post("/api/v1/modules/confirm").set(bearer(who)).send(body);
  const release = async (who: TestUser, moduleId: string, deviceId: string) =>
    request(await testApp()).delete(`/api/v1/modules/activations/${moduleId}/devices/${deviceId}`).set(bearer(who));
  const signingKeys = async () => (await request(await testApp()).get("/api/v1/signing-keys")).body;
  const storedDevices = async (uid: string, moduleId: string) => {
    const { db } = await testDeps();
    return Object.keys((await db.doc(`users/${uid}/activations/${moduleId}`).get()).get("devices") ?? {}).sort();
  };

  it("issues a certificate that verifies offline with the published JWKS and carries the contract's claims", async () => {
    const response = await confirm(user, { moduleId: "acme.maps", deviceId: "pc-1" });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      moduleId: "acme.maps",
      version: "1.0.0",
      activatedAt: expect.any(String),
      updatedAt: expect.any(String),
      certificate: expect.any(String),
    });
    expect(decodeProtectedHeader(response.body.certificate)).toEqual({ alg: "EdDSA", typ: "activation+jwt", kid: expect.any(String) });

    const claims = await verifyActivationCertificate(response.body.certificate, await signingKeys(), { deviceId: "pc-1", moduleId: "acme.maps" });
    expect(claims).toEqual({
      sub: user.uid,
      moduleId: "acme.maps",
      version: "1.0.0",
      deviceId: "pc-1",
      entitlement: null,
      iat: expect.any(Number),
      exp: expect.any(Number),
      jti: expect.any(String),
    });
    expect(Number.isInteger(claims.iat) && Number.isInteger(claims.exp)).toBe(true);
    expect(Math.abs(claims.iat - Date.now() / 1000)).toBeLessThan(60);
    expect(claims.exp - claims.iat).toBe(30 * DAY_SECONDS);

    const again = await confirm(user, { moduleId: "acme.maps", deviceId: "pc-1" });
    const second = await verifyActivationCertificate(again.body.certificate, await signingKeys(), { deviceId: "pc-1", moduleId: "acme.maps" });
    expect(second.jti).not.toBe(claims.jti);
    await expect(verifyActivationCertificate(again.body.certificate, await signingKeys(), { deviceId: "pc-2", moduleId: "acme.maps" })).rejects.toThrow(
      "another device",
    );
  });

  it("issues no certificate without a deviceId", async () => {
    const response = await confirm(user, { moduleId: "acme.maps" });
    expect(response.status).toBe(200);
    expect(response.body.certificate).toBeUndefined();
  });

  it("keeps certificates and package signatures apart: neither passes for the other", async () => {
    const jwks = await signingKeys();
    const download = await request(await testApp()).get("/api/v1/modules/download/acme.maps").set(bearer(user));
    expect(download.status).toBe(200);
    await expect(verifyActivationCertificate(download.body.signature, jwks, { deviceId: "pc-1", moduleId: "acme.maps" })).rejects.toThrow(/typ/);

    // A package-signature check: the signature verifies, has no typ, and its payload names bytes.
    const certificate = (await confirm(user, { moduleId: "acme.maps", deviceId: "pc-1" })).body.certificate;
    const isPackageSignature = async (jws: string) => {
      const { payload, protectedHeader } = await compactVerify(jws, createLocalJWKSet(jwks));
      return protectedHeader.typ === undefined && typeof JSON.parse(new TextDecoder().decode(payload)).sha256 === "string";
    };
    expect(await isPackageSignature(download.body.signature)).toBe(true);
    expect(await isPackageSignature(certificate)).toBe(false);
  });

  it("ends a subscription's certificate at its period end + 3 days, and a direct grant's after 30 days", async () => {
    await putBusiness("acme-corp", { name: "Acme Corp", memberIds: [user.uid] });
    const periodEnd = daysFromNow(5);
    await putSubscription("acme-corp", { status: "active", currentPeriodEnd: periodEnd, entitlements: ["pro"] });
    const jwks = await signingKeys();

    const bySubscription = await confirm(user, { moduleId: "acme.charts", deviceId: "pc-1" });
    expect(bySubscription.status).toBe(200);
    const claims = await verifyActivationCertificate(bySubscription.body.certificate, jwks, { deviceId: "pc-1", moduleId: "acme.charts" });
    expect(claims.entitlement).toBe("pro");
    expect(claims.exp).toBe(periodEnd.seconds + 3 * DAY_SECONDS);

    // A subscription renewed far ahead: the lifetime bounds it.
    await putSubscription("acme-corp", { status: "active", currentPeriodEnd: daysFromNow(90), entitlements: ["pro"] });
    const renewed = await confirm(user, { moduleId: "acme.charts", deviceId: "pc-1" });
    const renewedClaims = await verifyActivationCertificate(renewed.body.certificate, jwks, { deviceId: "pc-1", moduleId: "acme.charts" });
    expect(renewedClaims.exp - renewedClaims.iat).toBe(30 * DAY_SECONDS);

    // Back to a near period end, but the user also holds "pro" directly: the direct grant is unbounded.
    await putSubscription("acme-corp", { status: "active", currentPeriodEnd: periodEnd, entitlements: ["pro"] });
    await putUser(user.uid, { entitlements: ["pro"] });
    const direct = await confirm(user, { moduleId: "acme.charts", deviceId: "pc-1" });
    const directClaims = await verifyActivationCertificate(direct.body.certificate, jwks, { deviceId: "pc-1", moduleId: "acme.charts" });
    expect(directClaims.exp - directClaims.iat).toBe(30 * DAY_SECONDS);

    // The lifetime is configuration.
    const shortLived = await confirm(user, { moduleId: "acme.maps", deviceId: "pc-1" }, await testApp({ config: { activations: { deviceLimit: 3, certificateLifetimeSeconds: 7 * DAY_SECONDS } } }));
    const shortClaims = await verifyActivationCertificate(shortLived.body.certificate, jwks, { deviceId: "pc-1", moduleId: "acme.maps" });
    expect(shortClaims.exp - shortClaims.iat).toBe(7 * DAY_SECONDS);
  });

  it("refuses a fourth device with 409 device_limit_reached until one is released", async () => {
    for (const device of ["pc-1", "laptop.home", "mac:studio-2"]) expect((await confirm(user, { moduleId: "acme.maps", deviceId: device })).status).toBe(200);
    const fourth = await confirm(user, { moduleId: "acme.maps", deviceId: "pc-4" });
    expectProblem(fourth, 409, "device_limit_reached");
    expect(await storedDevices(user.uid, "acme.maps")).toEqual(["laptop.home", "mac:studio-2", "pc-1"]);

    // A known device always works, and keeps its activatedAt.
    const before = (await request(await testApp()).get("/api/v1/users/me").set(bearer(user))).body.activations[0].devices[0];
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await confirm(user, { moduleId: "acme.maps", deviceId: "pc-1" })).status).toBe(200);
    const profile = (await request(await testApp()).get("/api/v1/users/me").set(bearer(user))).body;
    const pc1 = profile.activations[0].devices.find((device: { deviceId: string }) => device.deviceId === "pc-1");
    expect(pc1).toEqual({ deviceId: "pc-1", activatedAt: before.activatedAt, lastSeenAt: expect.any(String) });
    expect(Date.parse(pc1.lastSeenAt)).toBeGreaterThan(Date.parse(before.lastSeenAt));
    expect(profile.activations[0].devices.map((device: { deviceId: string }) => device.deviceId)).toEqual(["pc-1", "laptop.home", "mac:studio-2"]);

    const released = await release(user, "acme.maps", "laptop.home");
    expect(released.status).toBe(204);
    expect(released.text).toBe("");
    expectProblem(await release(user, "acme.maps", "laptop.home"), 404, "device_not_found");
    expect((await confirm(user, { moduleId: "acme.maps", deviceId: "pc-4" })).status).toBe(200);
    expect(await storedDevices(user.uid, "acme.maps")).toEqual(["mac:studio-2", "pc-1", "pc-4"]);
  });

  it("never lets concurrent new devices exceed the limit, across instances; concurrent repeats of one device all succeed", async () => {
    expect((await confirm(user, { moduleId: "acme.maps", deviceId: "first" })).status).toBe(200);
    const app = await testApp();
    const instances = [app, await otherInstanceApp()];
    const newDevices = await Promise.all(["a", "b", "c", "d", "e", "f"].map((device, index) => confirm(user, { moduleId: "acme.maps", deviceId: device }, instances[index % 2])));
    expect(newDevices.map((response) => response.status).sort()).toEqual([200, 200, 409, 409, 409, 409]);
    newDevices.filter((response) => response.status === 409).forEach((response) => expectProblem(response, 409, "device_limit_reached"));
    expect(await storedDevices(user.uid, "acme.maps")).toHaveLength(3);

    // Twenty repeats of one device over two instances contend on one activation: one held past its deadline answers 503 "retry later" (seen on a loaded machine, 1 of 20), which a client retries.
    const repeats = await sendRetryingUnavailable(20, (index) => confirm(user, { moduleId: "acme.maps", deviceId: "first" }, instances[index % 2]));
    expect(repeats.map((response) => response.status)).toEqual(Array(20).fill(200));
    expect(await storedDevices(user.uid, "acme.maps")).toHaveLength(3);
  });

  it("takes the device limit from configuration", async () => {
    const app = await testApp({ config: { activations: { deviceLimit: 1, certificateLifetimeSeconds: 30 * DAY_SECONDS } } });
    expect((await confirm(user, { moduleId: "acme.maps", deviceId: "only" }, app)).status).toBe(200);
    expectProblem(await confirm(user, { moduleId: "acme.maps", deviceId: "second" }, app), 409, "device_limit_reached");
  });

  it("answers 404 device_not_found for a module never activated, 400 for bad device ids, and writes nothing", async () => {
    expectProblem(await release(user, "acme.maps", "pc-1"), 404, "device_not_found");
    expectProblem(await release(user, "not-a-module", "pc-1"), 400, "invalid_request");
    expectProblem(await release(user, "acme.maps", "a%20b"), 400, "invalid_request");
    expectProblem(await confirm(user, { moduleId: "acme.maps", deviceId: "x".repeat(129) }), 400, "invalid_request");
    expectProblem(await confirm(user, { moduleId: "acme.maps", deviceId: "has space" }), 400, "invalid_request");
    expectProblem(await confirm(user, { moduleId: "acme.maps", deviceId: "" }), 400, "invalid_request");
    expectProblem(await confirm(user, { moduleId: "acme.charts", deviceId: "pc-1" }), 403, "not_entitled");
    expectProblem(await request(await testApp()).delete("/api/v1/modules/activations/acme.maps/devices/pc-1"), 401, "unauthenticated");
    expect(await countDocuments(`users/${user.uid}/activations`)).toBe(0);
  });
});
