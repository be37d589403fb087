import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from "jose";
import request from "supertest";
import type { Express } from "express";
import { revokeModule } from "../src/revocations/service";
import { putBusiness } from "./support/fixtures";
import {
  bearer,
  createDeveloper,
  createUser,
  eventually,
  expectProblem,
  operatorDeps,
  otherInstanceApp,
  publishModule,
  resetEmulators,
  signRequest,
  testApp,
  testDeps,
  type TestDeveloper,
  type TestUser,
} from "./support/harness";
import { githubClaims, startOidcIssuer } from "./support/oidc-issuer";
import { manifest, modulePackage, pngImage } from "./support/packages";

/** Contract §26: a business's own publisher id, and its modules private to its members. */

const api = "/api/v1";

interface World {
  owner: TestDeveloper;
  admin: TestDeveloper;
  member: TestUser;
  outsider: TestDeveloper;
}

/** Business b1 (owner and admin are developers too, with their own publisher ids; one plain member) and an outsider developer. */
async function world(): Promise<World> {
  const [owner, admin, outsider] = [await createDeveloper("olive"), await createDeveloper("adam"), await createDeveloper("acme")];
  const member = await createUser();
  await putBusiness("b1", { name: "Initech", memberIds: [owner.uid, admin.uid, member.uid], roles: { [owner.uid]: "owner", [admin.uid]: "admin" } });
  return { owner, admin, member, outsider };
}

const claim = (app: Express, who: TestUser, publisherId = "initech", businessId = "b1") =>
  request(app).post(`${api}/businesses/${businessId}/publisher`).set(bearer(who)).send({ publisherId });

/** The business's private module initech.build 1.0.0 (with an icon), published by its admin. */
async function privateModule(app: Express, { owner, admin }: World) {
  expect((await claim(app, owner)).status).toBe(201);
  await publishModule(admin as TestDeveloper & { publisherId: string }, manifest({ id: "initech.build", name: "Build Tools", summary: "Our internal build helpers.", version: "1.0.0", icon: "icon.png" }), [
    { name: "icon.png", content: pngImage(64, 64) },
  ]);
}

describe("private modules (§26)", () => {
  beforeEach(resetEmulators);

  it("an owner claims one publisher id for the business; admins and members cannot, and ids stay unique", async () => {
    const app = await testApp();
    const w = await world();
    expectProblem(await request(app).get(`${api}/businesses/b1/publisher`).set(bearer(w.member)), 404, "publisher_not_found");
    expectProblem(await claim(app, w.admin), 403, "not_business_owner");
    expectProblem(await claim(app, w.member), 403, "not_business_owner");
    expectProblem(await claim(app, w.outsider), 404, "business_not_found");
    expectProblem(await claim(app, w.owner, "acme"), 409, "publisher_taken");
    expectProblem(await claim(app, w.owner, "Not An Id"), 400, "invalid_request");
    const claimed = await claim(app, w.owner);
    expect([claimed.status, claimed.body]).toEqual([201, { publisherId: "initech", businessId: "b1" }]);
    expectProblem(await claim(app, w.owner, "initech-two"), 409, "business_publisher_exists");
    expect((await request(app).get(`${api}/businesses/b1/publisher`).set(bearer(w.member))).body).toEqual({ publisherId: "initech", businessId: "b1" });
    // The id is taken for developers too.
    const late = await createUser();
    expectProblem(await request(app).post(`${api}/developers/auth/register`).set(bearer(late)).send({ displayName: "Late", publisherId: "initech" }), 409, "publisher_taken");
  });

  it("its owners and admins publish under it with their own accounts; nobody else may", async () => {
    const app = await testApp();
    const w = await world();
    expect((await claim(app, w.owner)).status).toBe(201);
    const bytes = await modulePackage({ id: "initech.build", name: "Build Tools", version: "1.0.0" });
    expectProblem(await signRequest(app, w.outsider, bytes), 403, "namespace_mismatch");
    const signed = await signRequest(app, w.admin, bytes);
    expect(signed.status).toBe(201);
    // Not held to the look-alike check against public modules, nor to the public review queue.
    expect(signed.body.review).toMatchObject({ state: "passed" });
    expect((await request(app).post(`${api}/developers/modules/publish`).set(bearer(w.owner)).send({ moduleId: "initech.build", version: "1.0.0" })).status).toBe(200);
    expectProblem(await request(app).post(`${api}/developers/modules/yank`).set(bearer(w.outsider)).send({ moduleId: "initech.build", version: "1.0.0" }), 404, "module_not_found");
    // A publisher access token (§12, as CI uses) of an owner or admin publishes privately too.
    const token = (await request(app).post(`${api}/developers/tokens`).set(bearer(w.owner)).send({ name: "CI" })).body.token as string;
    const ci = { idToken: token };
    expect((await signRequest(app, ci, await modulePackage({ id: "initech.build", name: "Build Tools", version: "1.0.1" }))).status).toBe(201);
    expect((await request(app).post(`${api}/developers/modules/publish`).set(bearer(ci)).send({ moduleId: "initech.build", version: "1.0.1" })).status).toBe(200);
    // An admin who is demoted can no longer publish under it.
    await putBusiness("b1", { name: "Initech", memberIds: [w.owner.uid, w.admin.uid, w.member.uid], roles: { [w.owner.uid]: "owner" } });
    expectProblem(await signRequest(app, w.admin, await modulePackage({ id: "initech.build", version: "1.1.0" })), 403, "namespace_mismatch");
    expect((await signRequest(app, ci, await modulePackage({ id: "initech.build", version: "1.1.0" }))).status).toBe(201);
    const { db } = await testDeps();
    expect((await db.doc("modules/initech.build").get()).get("businessId")).toBe("b1");
  });

  it("does not exist for anyone outside the business, on every public path", async () => {
    const app = await testApp();
    const w = await world();
    await privateModule(app, w);
    await publishModule(w.outsider, manifest({ id: "acme.build", name: "Build Charts", summary: "Public build charts." }));
    const stranger = await createUser();
    for (const who of [null, stranger, w.outsider]) {
      const as = (test: request.Test) => (who ? test.set(bearer(who)) : test);
      const listing = await as(request(app).get(`${api}/modules?q=build&facets=true`));
      expect(listing.body.items.map((item: { id: string }) => item.id)).toEqual(["acme.build"]);
      expect(listing.body.total).toBe(1);
      expect(JSON.stringify(listing.body.facets)).not.toContain("initech");
      expect((await as(request(app).get(`${api}/modules?q=internal`))).body).toMatchObject({ items: [], total: 0, suggestion: null });
      expect((await as(request(app).get(`${api}/modules?publisher=initech`))).body.total).toBe(0);
      expectProblem(await as(request(app).get(`${api}/modules/initech.build`)), 404, "module_not_found");
      expectProblem(await as(request(app).get(`${api}/modules/initech.build/icon`)), 404, "module_not_found");
      expectProblem(await as(request(app).get(`${api}/modules/initech.build/reviews`)), 404, "module_not_found");
    }
    expectProblem(await request(app).get(`${api}/modules/download/initech.build`).set(bearer(stranger)), 404, "module_not_found");
    expectProblem(await request(app).post(`${api}/modules/confirm`).set(bearer(stranger)).send({ moduleId: "initech.build" }), 404, "module_not_found");
    expectProblem(await request(app).post(`${api}/modules/initech.build/checkout`).set(bearer(stranger)).send({}), 404, "module_not_found");
    const updates = await request(app).post(`${api}/modules/updates`).set(bearer(stranger)).send({ appVersion: "1.0.0", installed: [{ moduleId: "initech.build", version: "0.1.0" }] });
    expect(updates.body.items).toEqual([]);
    expectProblem(await request(app).get(`${api}/modules?business=b1`).set(bearer(stranger)), 404, "business_not_found");
    expectProblem(await request(app).get(`${api}/modules?business=b1`), 404, "business_not_found");
  });

  it("answers an outsider on every path, the developer routes included, word for word as for an id never published", async () => {
    const issuer = await startOidcIssuer();
    try {
      const app = await testApp({ config: { trustedPublishing: { issuers: [issuer.url], audience: "marketplace" } } });
      const w = await world();
      await privateModule(app, w);
      const stranger = await createUser();
      // The outsider administers a business of their own, with a policy that names the private module.
      await putBusiness("b2", { name: "Rival", memberIds: [w.outsider.uid], roles: { [w.outsider.uid]: "owner" } });
      await request(app).put(`${api}/businesses/b2/policy`).set(bearer(w.outsider)).send({ mode: "open", rules: [{ effect: "block", module: "initech.build", versions: ">=1.0.0" }] }).expect(200);
      const { sha256 } = (await request(app).get(`${api}/modules/download/initech.build`).set(bearer(w.member))).body as { sha256: string };
      const review = await request(app).put(`${api}/modules/initech.build/reviews/me`).set(bearer(w.member)).send({ rating: 4, title: "Fine" });
      const reviewId = review.body.id as string;
      const probes: [string, (id: string) => request.Test][] = [
        ["page, anonymous", (id) => request(app).get(`${api}/modules/${id}`)],
        ["page", (id) => request(app).get(`${api}/modules/${id}`).set(bearer(stranger))],
        ["icon", (id) => request(app).get(`${api}/modules/${id}/icon`).set(bearer(stranger))],
        ["image", (id) => request(app).get(`${api}/modules/${id}/images/0`)],
        ["reviews", (id) => request(app).get(`${api}/modules/${id}/reviews`)],
        ["own review", (id) => request(app).put(`${api}/modules/${id}/reviews/me`).set(bearer(stranger)).send({ rating: 5, title: "Hi" })],
        ["report", (id) => request(app).post(`${api}/modules/${id}/reviews/${reviewId}/report`).set(bearer(stranger)).send({ reason: "spam" })],
        ["page view, anonymous", (id) => request(app).post(`${api}/modules/${id}/views`)],
        ["page view", (id) => request(app).post(`${api}/modules/${id}/views`).set(bearer(stranger))],
        ["download", (id) => request(app).get(`${api}/modules/download/${id}`).set(bearer(stranger))],
        ["download of a version", (id) => request(app).get(`${api}/modules/download/${id}?version=1.0.0`).set(bearer(stranger))],
        ["confirm", (id) => request(app).post(`${api}/modules/confirm`).set(bearer(stranger)).send({ moduleId: id })],
        ["TUF target", (id) => request(app).get(`${api}/tuf/targets/modules/${id}/${sha256}.1.0.0.mpkg`).set(bearer(stranger))],
        ["checkout", (id) => request(app).post(`${api}/modules/${id}/checkout`).set(bearer(stranger)).send({})],
        ["statistics", (id) => request(app).get(`${api}/developers/modules/${id}/stats`).set(bearer(w.outsider))],
        ["audit log", (id) => request(app).get(`${api}/developers/modules/${id}/audit`).set(bearer(w.outsider))],
        ["metrics", (id) => request(app).get(`${api}/developers/modules/${id}/metrics`).set(bearer(w.outsider))],
        ["pricing", (id) => request(app).put(`${api}/developers/modules/${id}/pricing`).set(bearer(w.outsider)).send({ model: "one_time", amount: 500 })],
        ["publish policy", (id) => request(app).put(`${api}/developers/modules/${id}/policy`).set(bearer(w.outsider)).send({ requireTrustedPublishing: false, requireAuthorSignature: false })],
        ["publish", (id) => request(app).post(`${api}/developers/modules/publish`).set(bearer(w.outsider)).send({ moduleId: id, version: "1.0.0" })],
        ["yank", (id) => request(app).post(`${api}/developers/modules/yank`).set(bearer(w.outsider)).send({ moduleId: id, version: "1.0.0" })],
        ["unyank", (id) => request(app).post(`${api}/developers/modules/unyank`).set(bearer(w.outsider)).send({ moduleId: id, version: "1.0.0" })],
        ["trusted publishers", (id) => request(app).get(`${api}/developers/modules/${id}/trusted-publishers`).set(bearer(w.outsider))],
        ["a trusted publisher", (id) => request(app).post(`${api}/developers/modules/${id}/trusted-publishers`).set(bearer(w.outsider)).send({ issuer: issuer.url, claims: { repository: "acme/build" } })],
        ["review reply", (id) => request(app).put(`${api}/developers/modules/${id}/reviews/${reviewId}/reply`).set(bearer(w.outsider)).send({ body: "Thanks" })],
        ["policy evaluate", (id) => request(app).post(`${api}/businesses/b2/policy/evaluate`).set(bearer(w.outsider)).send({ moduleId: id })],
        ["policy evaluate of a version", (id) => request(app).post(`${api}/businesses/b2/policy/evaluate`).set(bearer(w.outsider)).send({ moduleId: id, version: "1.0.0" })],
      ];
      const seen = (response: request.Response, id: string) => {
        const { requestId: _requestId, ...body } = (response.body ?? {}) as Record<string, unknown>;
        return { status: response.status, type: response.headers["content-type"], body: JSON.parse(JSON.stringify(body).replaceAll(id, "<id>")) };
      };
      for (const [name, probe] of probes) {
        const [hidden, never] = [seen(await probe("initech.build"), "initech.build"), seen(await probe("initech.nothing"), "initech.nothing")];
        expect({ name, ...hidden }).toEqual({ name, ...never });
        expect({ name, status: hidden.status }).toEqual({ name, status: expect.any(Number) });
        expect({ name, leaked: hidden.status < 400 }).toEqual({ name, leaked: false });
      }
    } finally {
      await issuer.close();
    }
  });

  it("its revocations reach its members only, signed as the public list is; entries written before the split too", async () => {
    const app = await testApp();
    const w = await world();
    await privateModule(app, w);
    await publishModule(w.outsider, manifest({ id: "acme.build", name: "Build Charts", summary: "Public build charts." }));
    await revokeModule(await operatorDeps(), { moduleId: "initech.build", version: "1.0.0", reason: "Leaks the build secrets." });
    await revokeModule(await operatorDeps(), { moduleId: "acme.build", version: "1.0.0", reason: "Malware." });
    const jwks = (await request(app).get(`${api}/signing-keys`)).body as JSONWebKeySet;
    const payloadOf = async (response: request.Response) => {
      expect(response.status).toBe(200);
      const { payload, protectedHeader } = await compactVerify(response.body.list as string, createLocalJWKSet(jwks));
      expect(protectedHeader.typ).toBe("revocations+jwt");
      return JSON.parse(new TextDecoder().decode(payload)) as { serial: number; businessId?: string; entries: { moduleId: string; reason: string }[] };
    };
    const publicList = await payloadOf(await request(app).get(`${api}/revocations`));
    expect(publicList.entries.map((entry) => entry.moduleId)).toEqual(["acme.build"]);
    expect(JSON.stringify(publicList)).not.toContain("initech");
    const members = await payloadOf(await request(app).get(`${api}/businesses/b1/revocations`).set(bearer(w.member)));
    expect(members).toMatchObject({ serial: publicList.serial, businessId: "b1", entries: [{ moduleId: "initech.build", version: "1.0.0", reason: "Leaks the build secrets." }] });
    expectProblem(await request(app).get(`${api}/businesses/b1/revocations`).set(bearer(w.outsider)), 404, "business_not_found");
    expectProblem(await request(app).get(`${api}/businesses/b1/revocations`), 401, "unauthenticated");

    // An entry written before private modules had their own list names no business: its module says whose it is.
    const { db } = await testDeps();
    const stored = (await db.doc("registry/revocations").get()).data()!;
    await db.doc("registry/revocations").set({ ...stored, entries: stored.entries.map(({ businessId: _businessId, ...entry }: Record<string, unknown>) => entry) });
    expect((await payloadOf(await request(await otherInstanceApp()).get(`${api}/revocations`))).entries.map((entry) => entry.moduleId)).toEqual(["acme.build"]);
    expect((await payloadOf(await request(app).get(`${api}/businesses/b1/revocations`).set(bearer(w.member)))).entries.map((entry) => entry.moduleId)).toEqual(["initech.build"]);
  });

  it("its members find it beside the public modules, read its page, icon and reviews with their token, and install it without an entitlement", async () => {
    const app = await testApp();
    const w = await world();
    await privateModule(app, w);
    await publishModule(w.outsider, manifest({ id: "acme.build", name: "Build Charts", summary: "Public build charts." }));

    const listing = await request(app).get(`${api}/modules?business=b1&q=build&facets=true`).set(bearer(w.member));
    expect(listing.status).toBe(200);
    expect(listing.body.items.map((item: { id: string; visibility: string; businessId: string | null; policy: unknown }) => [item.id, item.visibility, item.businessId, item.policy])).toEqual(
      expect.arrayContaining([
        ["initech.build", "business", "b1", { allowed: true }],
        ["acme.build", "public", null, { allowed: true }],
      ]),
    );
    expect(listing.body.total).toBe(2);
    expect(listing.body.facets.publisher).toEqual(expect.arrayContaining([{ value: "initech", count: 1 }, { value: "acme", count: 1 }]));
    // Pages of one at a time give both, each once.
    const first = await request(app).get(`${api}/modules?business=b1&q=build&limit=1`).set(bearer(w.member));
    const second = await request(app).get(`${api}/modules?business=b1&q=build&limit=1&cursor=${first.body.nextCursor}`).set(bearer(w.member));
    expect([...first.body.items, ...second.body.items].map((item: { id: string }) => item.id).sort()).toEqual(["acme.build", "initech.build"]);
    expect(second.body.nextCursor).toBeNull();

    const page = await request(app).get(`${api}/modules/initech.build`).set(bearer(w.member));
    expect([page.status, page.body.visibility, page.body.businessId, page.body.publisher.displayName]).toEqual([200, "business", "b1", "Initech"]);
    const icon = await request(app).get(`${api}/modules/initech.build/icon`).set(bearer(w.member));
    expect([icon.status, icon.headers["cache-control"]]).toEqual([200, "private, no-store"]);
    expect((await request(app).get(`${api}/modules/initech.build/reviews`).set(bearer(w.member))).status).toBe(200);

    const download = await request(app).get(`${api}/modules/download/initech.build`).set(bearer(w.member));
    expect([download.status, download.body.version]).toEqual([200, "1.0.0"]);
    const confirmed = await request(app).post(`${api}/modules/confirm`).set(bearer(w.member)).send({ moduleId: "initech.build" });
    expect(confirmed.status).toBe(200);
    expect((await request(app).put(`${api}/modules/initech.build/reviews/me`).set(bearer(w.member)).send({ rating: 5, title: "Handy", body: "We use it daily." })).status).toBe(200);

    // The public TUF repository never lists it, and its target paths answer 404, even to members.
    expectProblem(await request(app).get(`${api}/tuf/targets/modules/initech.build/${download.body.sha256}.1.0.0.mpkg`).set(bearer(w.member)), 404, "module_not_found");

    // A member who leaves loses it at the next request.
    await putBusiness("b1", { name: "Initech", memberIds: [w.owner.uid, w.admin.uid], roles: { [w.owner.uid]: "owner", [w.admin.uid]: "admin" } });
    expectProblem(await request(app).get(`${api}/modules/download/initech.build`).set(bearer(w.member)), 404, "module_not_found");
    expectProblem(await request(app).get(`${api}/modules/initech.build`).set(bearer(w.member)), 404, "module_not_found");
  });

  it("the business's policy decides on its listing's items, and an allowlist allows the business's own modules", async () => {
    const app = await testApp();
    const w = await world();
    await privateModule(app, w);
    await publishModule(w.outsider, manifest({ id: "acme.build", name: "Build Charts", summary: "Public build charts." }));
    await request(app).put(`${api}/businesses/b1/policy`).set(bearer(w.owner)).send({ mode: "allowlist", rules: [], message: "Only approved modules." }).expect(200);
    const listing = await request(app).get(`${api}/modules?business=b1&q=build`).set(bearer(w.member));
    const policyOf = (id: string) => listing.body.items.find((item: { id: string }) => item.id === id).policy;
    expect([policyOf("initech.build"), policyOf("acme.build")]).toEqual([{ allowed: true }, { allowed: false, reason: "Only approved modules." }]);
    expect((await request(app).get(`${api}/modules/download/initech.build`).set(bearer(w.member))).status).toBe(200);
    expectProblem(await request(app).get(`${api}/modules/download/acme.build`).set(bearer(w.member)), 403, "blocked_by_policy");
  });

  it("a new private module shows in its members' listing on another instance within 2 seconds, and nowhere else", async () => {
    const one = await testApp();
    const two = await otherInstanceApp();
    const w = await world();
    expect((await claim(one, w.owner)).status).toBe(201);
    expect((await request(two).get(`${api}/modules?business=b1`).set(bearer(w.member))).body.total).toBe(0);
    await publishModule(w.admin, manifest({ id: "initech.build", name: "Build Tools", summary: "Our internal build helpers." }));
    await eventually(async () => expect((await request(two).get(`${api}/modules?business=b1`).set(bearer(w.member))).body.total).toBe(1));
    expect((await request(two).get(`${api}/modules`)).body.total).toBe(0);
    const { db } = await testDeps();
    // Its name is not filed against look-alikes of public modules.
    expect(JSON.stringify((await db.collection("moduleNames").get()).docs.map((doc) => doc.data()))).not.toContain("initech");
  });

  it("its owners and admins publish from CI (§15), and see, measure, audit and set the policy of its modules; not once they stop being one", async () => {
    const issuer = await startOidcIssuer();
    try {
      const app = await testApp({ config: { trustedPublishing: { issuers: [issuer.url], audience: "marketplace" } } });
      const w = await world();
      expect((await claim(app, w.owner)).status).toBe(201);
      const trust = (who: TestUser) =>
        request(app).post(`${api}/developers/modules/initech.build/trusted-publishers`).set(bearer(who)).send({ issuer: issuer.url, claims: { repository: "initech/build" } });
      const exchange = async () => request(app).post(`${api}/developers/auth/oidc`).send({ token: await issuer.token(githubClaims("initech/build")) });
      // Before its first sign, the module id is in the business's namespace: its admin trusts CI, an outsider may not.
      expectProblem(await trust(w.outsider), 403, "namespace_mismatch");
      expect((await trust(w.admin)).status).toBe(201);
      const exchanged = await exchange();
      expect([exchanged.status, exchanged.body.moduleIds]).toEqual([200, ["initech.build"]]);
      const ci = { idToken: exchanged.body.token as string };
      expect((await signRequest(app, ci, await modulePackage({ id: "initech.build", name: "Build Tools", version: "1.0.0" }))).status).toBe(201);
      expect((await request(app).post(`${api}/developers/modules/publish`).set(bearer(ci)).send({ moduleId: "initech.build", version: "1.0.0" })).status).toBe(200);

      // The owner, who signed nothing, has it among their modules, with its statistics, audit log and publish policy.
      const listed = await request(app).get(`${api}/developers/modules`).set(bearer(w.owner));
      expect(listed.body.items.map((item: { id: string }) => item.id)).toContain("initech.build");
      expect((await request(app).get(`${api}/developers/modules/initech.build/stats`).set(bearer(w.owner))).status).toBe(200);
      const audit = await request(app).get(`${api}/developers/modules/initech.build/audit`).set(bearer(w.owner));
      expect(audit.body.items.map((entry: { action: string }) => entry.action)).toEqual(expect.arrayContaining(["module.sign", "module.publish"]));
      const policy = await request(app).put(`${api}/developers/modules/initech.build/policy`).set(bearer(w.owner)).send({ requireTrustedPublishing: true, requireAuthorSignature: false });
      expect(policy.status).toBe(200);
      expectProblem(await signRequest(app, w.admin, await modulePackage({ id: "initech.build", version: "1.0.1" })), 403, "policy_violation");
      for (const path of ["stats", "audit"]) expectProblem(await request(app).get(`${api}/developers/modules/initech.build/${path}`).set(bearer(w.outsider)), 404, "module_not_found");
      expect((await request(app).get(`${api}/developers/modules`).set(bearer(w.outsider))).body.items.map((item: { id: string }) => item.id)).not.toContain("initech.build");

      // The admin who added the trusted publisher is demoted: it no longer speaks for the module.
      await putBusiness("b1", { name: "Initech", memberIds: [w.owner.uid, w.admin.uid, w.member.uid], roles: { [w.owner.uid]: "owner" } });
      expectProblem(await exchange(), 403, "no_trusted_publisher");
      expect((await request(app).get(`${api}/developers/modules`).set(bearer(w.admin))).body.items.map((item: { id: string }) => item.id)).not.toContain("initech.build");
    } finally {
      await issuer.close();
    }
  });
});
