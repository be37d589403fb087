import { compactVerify, createLocalJWKSet, decodeJwt, decodeProtectedHeader } from "jose";
import request from "supertest";
import { allowedOffline, verifyInstallPolicy } from "../../docs/examples/verify-install-policy";
import { json } from "./support/admin";
import { sha256Hex, putBusiness } from "./support/fixtures";
import {
  bearer,
  createDeveloper,
  createUser,
  eventually,
  expectProblem,
  otherInstanceApp,
  publishModule,
  resetEmulators,
  testApp,
  testDeps,
  type TestDeveloper,
  type TestUser,
} from "./support/harness";
import { manifest } from "./support/packages";

/** Contract §26: a business's install policy, and its enforcement wherever modules are installed. */

const api = "/api/v1";

interface World {
  developer: TestDeveloper;
  owner: TestUser;
  admin: TestUser;
  member: TestUser;
  stranger: TestUser;
  /** The package bytes of each published version of acme.charts. */
  packages: Record<string, Buffer>;
}

/** acme.charts 1.0.0, 1.1.0 and 2.0.0, acme.maps 1.0.0; business b1 with an owner, an admin and a member. */
async function world(): Promise<World> {
  const developer = await createDeveloper("acme");
  const packages: Record<string, Buffer> = {};
  for (const version of ["1.0.0", "1.1.0", "2.0.0"]) packages[version] = await publishModule(developer, manifest({ version }));
  await publishModule(developer, manifest({ id: "acme.maps", name: "Maps", summary: "Maps of the world." }));
  const [owner, admin, member, stranger] = await Promise.all([createUser(), createUser(), createUser(), createUser()]);
  await putBusiness("b1", { name: "Initech", memberIds: [owner.uid, admin.uid, member.uid], roles: { [owner.uid]: "owner", [admin.uid]: "admin" } });
  return { developer, owner, admin, member, stranger, packages };
}

const putPolicy = async (who: TestUser, body: Record<string, unknown>, businessId = "b1", app?: Awaited<ReturnType<typeof testApp>>) =>
  request(app ?? (await testApp())).put(`${api}/businesses/${businessId}/policy`).set(bearer(who)).send(body);

const blockTwo = { mode: "open", rules: [{ effect: "block", module: "acme.charts", versions: ">=2.0.0", reason: "2.x breaks our build." }] };

describe("install policies (§26)", () => {
  beforeEach(resetEmulators);

  it("owners and admins set the policy, every member reads it, versions grow by one, and nobody else learns it exists", async () => {
    const app = await testApp();
    const { owner, admin, member, stranger } = await world();
    const unset = await request(app).get(`${api}/businesses/b1/policy`).set(bearer(member));
    expect(unset.body).toEqual({ businessId: "b1", mode: "open", rules: [], minimumVersions: {}, required: [], message: null, version: 0, updatedAt: null });

    const first = await putPolicy(owner, { ...blockTwo, minimumVersions: { "acme.maps": "1.0.0" }, required: ["acme.maps"], message: "Ask IT first." });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      businessId: "b1",
      mode: "open",
      rules: blockTwo.rules,
      minimumVersions: { "acme.maps": "1.0.0" },
      required: ["acme.maps"],
      message: "Ask IT first.",
      version: 1,
      updatedAt: expect.any(String),
    });
    const second = await putPolicy(admin, { mode: "allowlist", rules: [] });
    expect(second.body).toMatchObject({ mode: "allowlist", rules: [], minimumVersions: {}, required: [], message: null, version: 2 });
    expect((await request(app).get(`${api}/businesses/b1/policy`).set(bearer(member))).body).toEqual(second.body);

    expectProblem(await putPolicy(member, blockTwo), 403, "not_business_admin");
    expectProblem(await putPolicy(stranger, blockTwo), 404, "business_not_found");
    expectProblem(await request(app).get(`${api}/businesses/b1/policy`).set(bearer(stranger)), 404, "business_not_found");
    expectProblem(await request(app).get(`${api}/businesses/b1/policy/signed`).set(bearer(stranger)), 404, "business_not_found");
    expect((await request(app).get(`${api}/businesses/b1/policy`).set(bearer(owner))).body.version).toBe(2);

    const { db } = await testDeps();
    const audit = await db.collection("auditLog").where("target", "==", "b1").where("action", "==", "business.policy.update").get();
    expect(audit.size).toBe(2);
    // Each change is a business.policy.updated event for the business's webhooks (§21).
    const events = await db.collection("events").where("type", "==", "business.policy.updated").get();
    expect(events.docs.map((doc) => doc.get("data.version")).sort()).toEqual([1, 2]);
    expect(events.docs.map((doc) => doc.get("owners"))).toEqual([["business:b1"], ["business:b1"]]);
    // Operators see it too.
    expect(await json("business", "show", "--id", "b1")).toMatchObject({ policy: { version: 2, mode: "allowlist" }, publisherId: null });
  });

  it("refuses invalid policies with 400 and changes nothing", async () => {
    const app = await testApp();
    const { owner } = await world();
    expect((await putPolicy(owner, blockTwo)).status).toBe(200);
    const rule = { effect: "block", module: "acme.charts" };
    const invalid: Record<string, unknown>[] = [
      { mode: "closed", rules: [] },
      { mode: "open" },
      { mode: "open", rules: [{ effect: "block" }] },
      { mode: "open", rules: [{ ...rule, versions: ">=2.0.0 <<3" }] },
      { mode: "open", rules: [{ ...rule, versions: "" }] },
      { mode: "open", rules: [{ ...rule, effect: "deny" }] },
      { mode: "open", rules: [{ ...rule, publisher: "globex" }] },
      { mode: "open", rules: [{ ...rule, extra: 1 }] },
      { mode: "open", rules: [{ ...rule, reason: "two\nlines" }] },
      { mode: "open", rules: Array.from({ length: 501 }, () => rule) },
      { mode: "open", rules: [], minimumVersions: { "acme.charts": "2" } },
      { mode: "open", rules: [], minimumVersions: { "not a module": "1.0.0" } },
      { mode: "open", rules: [], minimumVersions: JSON.parse('{"__proto__": "1.0.0"}') },
      { mode: "open", rules: [], required: ["acme.charts", "acme.charts"] },
      { mode: "open", rules: [], required: Array.from({ length: 101 }, (_, i) => `acme.m${i}`) },
      { mode: "open", rules: [], message: "x".repeat(501) },
      { mode: "open", rules: [], unknown: true },
    ];
    for (const body of invalid) {
      const response = await putPolicy(owner, body, "b1", app);
      expect({ body, status: response.status, code: response.body.code }).toEqual({ body, status: 400, code: "invalid_request" });
    }
    expect((await request(app).get(`${api}/businesses/b1/policy`).set(bearer(owner))).body).toMatchObject({ version: 1, rules: blockTwo.rules });
    // 500 rules is the most, and is accepted.
    expect((await putPolicy(owner, { mode: "open", rules: Array.from({ length: 500 }, () => rule) }, "b1", app)).body.version).toBe(2);
  });

  it("downloads, confirms, update checks and TUF targets keep to the policy, with the admin's reason", async () => {
    const app = await testApp();
    const { owner, member, stranger, packages } = await world();
    expect((await putPolicy(owner, blockTwo)).status).toBe(200);

    // Without a version: the newest allowed one.
    const download = await request(app).get(`${api}/modules/download/acme.charts`).set(bearer(member));
    expect([download.status, download.body.version]).toEqual([200, "1.1.0"]);
    const blocked = await request(app).get(`${api}/modules/download/acme.charts?version=2.0.0`).set(bearer(member));
    expectProblem(blocked, 403, "blocked_by_policy");
    expect(blocked.body).toMatchObject({ businessId: "b1", reason: "2.x breaks our build." });
    expectProblem(await request(app).post(`${api}/modules/confirm`).set(bearer(member)).send({ moduleId: "acme.charts", version: "2.0.0" }), 403, "blocked_by_policy");
    const confirmed = await request(app).post(`${api}/modules/confirm`).set(bearer(member)).send({ moduleId: "acme.charts" });
    expect([confirmed.status, confirmed.body.version]).toEqual([200, "1.1.0"]);
    const target = (version: string) => `${api}/tuf/targets/modules/acme.charts/${sha256Hex(packages[version])}.${version}.mpkg`;
    expectProblem(await request(app).get(target("2.0.0")).set(bearer(member)), 403, "blocked_by_policy");
    expect((await request(app).get(target("1.1.0")).set(bearer(member))).status).toBe(302);

    const updates = await request(app)
      .post(`${api}/modules/updates`)
      .set(bearer(member))
      .send({ appVersion: "1.0.0", installed: [{ moduleId: "acme.charts", version: "1.0.0" }, { moduleId: "acme.charts", version: "2.0.0" }, { moduleId: "acme.maps", version: "1.0.0" }] });
    expect(updates.body.items).toEqual([
      { moduleId: "acme.charts", installedVersion: "1.0.0", version: "1.1.0", usable: true, yanked: false, revoked: false, blocked: false },
      { moduleId: "acme.charts", installedVersion: "2.0.0", version: "1.1.0", usable: true, yanked: false, revoked: false, blocked: true },
    ]);

    // Someone outside the business is held to nothing of it.
    expect((await request(app).get(`${api}/modules/download/acme.charts?version=2.0.0`).set(bearer(stranger))).status).toBe(200);
    expect((await request(app).get(`${api}/modules/download/acme.charts`).set(bearer(stranger))).body.version).toBe("2.0.0");
  });

  it("holds a member of two businesses to both, and lists both policies on /users/me", async () => {
    const app = await testApp();
    const { owner, member } = await world();
    await putBusiness("b2", { name: "Globex", memberIds: [owner.uid, member.uid], roles: { [owner.uid]: "owner" } });
    await putPolicy(owner, blockTwo);
    // The second allows only acme.charts below 1.1.0, and acme.maps from 1.0.0 on.
    await putPolicy(owner, { mode: "allowlist", rules: [{ effect: "allow", module: "acme.charts", versions: "<1.1.0" }, { effect: "allow", publisher: "acme", module: "acme.maps" }], message: "Globex approves each module." }, "b2");

    expect((await request(app).get(`${api}/modules/download/acme.charts`).set(bearer(member))).body.version).toBe("1.0.0");
    const refused = await request(app).get(`${api}/modules/download/acme.charts?version=1.1.0`).set(bearer(member));
    expectProblem(refused, 403, "blocked_by_policy");
    expect(refused.body).toMatchObject({ businessId: "b2", reason: "Globex approves each module." });
    expect((await request(app).get(`${api}/modules/download/acme.maps`).set(bearer(member))).status).toBe(200);

    const me = await request(app).get(`${api}/users/me`).set(bearer(member));
    expect([...me.body.policies].sort((a, b) => a.businessId.localeCompare(b.businessId))).toEqual([
      { businessId: "b1", version: 1, mode: "open", required: [], message: null },
      { businessId: "b2", version: 1, mode: "allowlist", required: [], message: "Globex approves each module." },
    ]);

    // A module blocked by both: the answer names one of them.
    await putPolicy(owner, { mode: "allowlist", rules: [] }, "b1");
    expectProblem(await request(app).get(`${api}/modules/download/acme.maps`).set(bearer(member)), 403, "blocked_by_policy");
  });

  it("evaluates a module against the policy: the deciding rule, the newest allowed version, minimum versions", async () => {
    const app = await testApp();
    const { owner, member } = await world();
    await putPolicy(owner, { ...blockTwo, minimumVersions: { "acme.charts": "1.1.0" }, rules: [...blockTwo.rules, { effect: "allow", publisher: "acme" }] });
    const evaluate = (body: Record<string, unknown>, who = owner) => request(app).post(`${api}/businesses/b1/policy/evaluate`).set(bearer(who)).send(body);

    expect((await evaluate({ moduleId: "acme.charts", version: "2.0.0" })).body).toEqual({ allowed: false, version: "2.0.0", rule: blockTwo.rules[0], reason: "2.x breaks our build." });
    expect((await evaluate({ moduleId: "acme.charts" })).body).toEqual({ allowed: true, version: "1.1.0", rule: { effect: "allow", publisher: "acme" } });
    const below = (await evaluate({ moduleId: "acme.charts", version: "1.0.0" })).body;
    expect(below).toEqual({ allowed: false, version: "1.0.0", rule: null, reason: expect.stringContaining("below 1.1.0") });
    expect((await evaluate({ moduleId: "acme.maps" })).body).toEqual({ allowed: true, version: "1.0.0", rule: { effect: "allow", publisher: "acme" } });

    expectProblem(await evaluate({ moduleId: "acme.nope" }), 404, "module_not_found");
    expectProblem(await evaluate({ moduleId: "acme.charts", version: "two" }), 400, "invalid_request");
    expectProblem(await evaluate({ moduleId: "acme.charts" }, member), 403, "not_business_admin");
  });

  it("every answer that says a version is allowed agrees with a download: the listing weighs every business's policy, evaluate never offers a yanked version", async () => {
    const app = await testApp();
    const { developer, owner, member } = await world();
    // b1 has no policy; b2, of which the member is one too, blocks acme.charts 2.x.
    await putBusiness("b2", { name: "Globex", memberIds: [owner.uid, member.uid], roles: { [owner.uid]: "owner" } });
    await putPolicy(owner, blockTwo, "b2");
    const listing = await request(app).get(`${api}/modules?business=b1`).set(bearer(member));
    const charts = listing.body.items.find((item: { id: string }) => item.id === "acme.charts");
    expect([charts.latestVersion, charts.policy]).toEqual(["2.0.0", { allowed: false, reason: "2.x breaks our build." }]);
    expectProblem(await request(app).get(`${api}/modules/download/acme.charts?version=2.0.0`).set(bearer(member)), 403, "blocked_by_policy");

    // 2.0.0 yanked: b1's evaluate names 1.1.0, the version a download serves.
    await putPolicy(owner, { mode: "open", rules: [{ effect: "allow", module: "acme.charts" }] });
    expect((await request(app).post(`${api}/developers/modules/yank`).set(bearer(developer)).send({ moduleId: "acme.charts", version: "2.0.0", reason: "Broken." })).status).toBe(200);
    const evaluated = await request(app).post(`${api}/businesses/b1/policy/evaluate`).set(bearer(owner)).send({ moduleId: "acme.charts" });
    expect(evaluated.body).toEqual({ allowed: true, version: "1.1.0", rule: { effect: "allow", module: "acme.charts" } });
    const stranger = await createUser();
    expect((await request(app).get(`${api}/modules/download/acme.charts`).set(bearer(stranger))).body.version).toBe(evaluated.body.version);
  });

  it("binds a member however they signed in: a session outside the business's required single sign-on keeps its policy", async () => {
    const app = await testApp();
    const { owner, member } = await world();
    await putPolicy(owner, blockTwo);
    expect((await request(app).put(`${api}/businesses/b1/sso`).set(bearer(owner)).send({ providerId: "saml.initech", enforce: true, jit: false })).status).toBe(200);
    // The member's session did not come through saml.initech: the business grants it nothing, and still restricts it.
    const me = await request(app).get(`${api}/users/me`).set(bearer(member));
    expect(me.body.businesses).toEqual([expect.objectContaining({ id: "b1", ssoRequired: true })]);
    expect(me.body.policies).toEqual([{ businessId: "b1", version: 1, mode: "open", required: [], message: null }]);
    expect((await request(app).get(`${api}/modules/download/acme.charts`).set(bearer(member))).body.version).toBe("1.1.0");
    const refused = await request(app).get(`${api}/modules/download/acme.charts?version=2.0.0`).set(bearer(member));
    expectProblem(refused, 403, "blocked_by_policy");
    expect(refused.body).toMatchObject({ businessId: "b1", reason: "2.x breaks our build." });
    expectProblem(await request(app).post(`${api}/modules/confirm`).set(bearer(member)).send({ moduleId: "acme.charts", version: "2.0.0" }), 403, "blocked_by_policy");
  });

  it("signs the policy for offline enforcement, and certificates name the policy versions they were issued under", async () => {
    const app = await testApp();
    const { owner, member } = await world();
    await putPolicy(owner, blockTwo);
    const jwks = createLocalJWKSet((await request(app).get(`${api}/signing-keys`)).body);
    const { jws } = (await request(app).get(`${api}/businesses/b1/policy/signed`).set(bearer(member))).body;
    expect(decodeProtectedHeader(jws)).toMatchObject({ alg: "EdDSA", typ: "policy+jwt" });
    const { payload } = await compactVerify(jws, jwks);
    expect(JSON.parse(new TextDecoder().decode(payload))).toMatchObject({ businessId: "b1", version: 1, mode: "open", rules: blockTwo.rules, iat: expect.any(Number) });

    // The desktop app's check (docs/examples/verify-install-policy.ts): it verifies, and refuses what the service refuses.
    const saved = (await request(app).get(`${api}/signing-keys`)).body;
    const verified = await verifyInstallPolicy(jws, saved, "b1");
    const charts = { id: "acme.charts", publisherId: "acme", businessId: null };
    expect([allowedOffline(verified, charts, "2.0.0"), allowedOffline(verified, charts, "1.1.0")]).toEqual([{ allowed: false, reason: "2.x breaks our build." }, { allowed: true }]);
    await expect(verifyInstallPolicy(jws, saved, "b2")).rejects.toThrow(/another business/);
    const certificateLike = (await request(app).post(`${api}/modules/confirm`).set(bearer(member)).send({ moduleId: "acme.charts", deviceId: "laptop-0" })).body.certificate;
    await expect(verifyInstallPolicy(certificateLike, saved, "b1")).rejects.toThrow(/not a signed install policy/);

    const confirmed = await request(app).post(`${api}/modules/confirm`).set(bearer(member)).send({ moduleId: "acme.charts", deviceId: "laptop-1" });
    expect(decodeJwt(confirmed.body.certificate)).toMatchObject({ version: "1.1.0", policyVersions: { b1: 1 } });
  });

  it("a change holds on another instance within 2 seconds", async () => {
    const one = await testApp();
    const two = await otherInstanceApp();
    const { owner, member } = await world();
    // The second instance has served the member before the change.
    expect((await request(two).get(`${api}/modules/download/acme.charts`).set(bearer(member))).body.version).toBe("2.0.0");
    await putPolicy(owner, blockTwo, "b1", one);
    await eventually(async () => expect((await request(two).get(`${api}/modules/download/acme.charts`).set(bearer(member))).body.version).toBe("1.1.0"));
    await putPolicy(owner, { mode: "open", rules: [] }, "b1", one);
    await eventually(async () => expect((await request(two).get(`${api}/modules/download/acme.charts`).set(bearer(member))).body.version).toBe("2.0.0"));
  });
});
