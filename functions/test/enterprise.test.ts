import type { Express } from "express";
import request, { type Response } from "supertest";
import { startLocalDns, type LocalDns } from "../../tools/local-stack/dns-server";
import { recheckDomains } from "../src/domains/recheck";
import { managedUserId } from "../src/scim/rules";
import { daysFromNow, putSubscription } from "./support/fixtures";
import { bearer, createUser, expectProblem, resetEmulators, signInThroughProvider, sweepDirectoryJobs, testApp, testDeps, type TestUser } from "./support/harness";

/** Contract §22: SCIM provisioning, verified domains and single sign-on, on the emulators. */

const api = "/api/v1";
const scim = `${api}/scim/v2`;
const SCIM_ERROR = "urn:ietf:params:scim:api:messages:2.0:Error";
const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

let dns: LocalDns;
beforeAll(async () => {
  dns = await startLocalDns();
});
afterAll(() => dns.stop());

/** Verifies a domain for a business through its TXT record on the local DNS server. */
async function verifyDomain(app: Express, owner: TestUser, businessId: string, domain: string) {
  const added = await request(app).post(`${api}/businesses/${businessId}/domains`).set(bearer(owner)).send({ domain });
  dns.set(added.body.txtName, "TXT", [added.body.txtValue]);
  expect((await request(app).post(`${api}/businesses/${businessId}/domains/${domain}/verify`).set(bearer(owner))).status).toBe(200);
}

/** A business with a subscription, a SCIM token and (unless `domain: null`) acme.test verified, where SCIM may make accounts. */
async function setup(options: { seats?: number; domain?: string | null; requestsPerMinute?: number } = {}) {
  const rateLimit = options.requestsPerMinute ? { rateLimit: { perIpPerMinute: options.requestsPerMinute, perUserPerMinute: options.requestsPerMinute } } : {};
  const app = await testApp({ config: { dnsResolvers: [dns.address], ...rateLimit } });
  const owner = await createUser({ displayName: "Olivia Owner", email: "olivia@acme.test" });
  const created = await request(app).post(`${api}/businesses`).set(bearer(owner)).send({ name: "Acme" });
  expect(created.status).toBe(201);
  const businessId = created.body.id as string;
  await putSubscription(businessId, { status: "active", seats: options.seats ?? 10, currentPeriodEnd: daysFromNow(30), entitlements: ["pro"] });
  const token = await request(app).post(`${api}/businesses/${businessId}/scim/tokens`).set(bearer(owner)).send({ name: "Okta" });
  expect(token.status).toBe(201);
  const domain = options.domain === undefined ? "acme.test" : options.domain;
  if (domain) await verifyDomain(app, owner, businessId, domain);
  const auth = { Authorization: `Bearer ${token.body.token}` };
  return { app, owner, businessId, auth, token: token.body as { id: string; token: string; baseUrl: string } };
}

function expectScimError(response: Response, status: number, scimType?: string) {
  expect(response.status).toBe(status);
  expect(response.headers["content-type"]).toMatch(/^application\/scim\+json/);
  expect(response.body).toEqual(expect.objectContaining({ schemas: [SCIM_ERROR], status: String(status), detail: expect.any(String) }));
  if (scimType) expect(response.body.scimType).toBe(scimType);
}

const oktaUser = (email: string, extra: Record<string, unknown> = {}) => ({
  schemas: [USER],
  userName: email,
  name: { givenName: "Ann", familyName: "Lee" },
  emails: [{ primary: true, value: email, type: "work" }],
  displayName: "Ann Lee",
  locale: "en-US",
  externalId: `00u${email.length}${email.charCodeAt(0)}`,
  groups: [],
  password: "ignored-Passw0rd",
  active: true,
  ...extra,
});

const provision = async (app: Express, auth: Record<string, string>, email: string, extra: Record<string, unknown> = {}) => {
  const response = await request(app).post(`${scim}/Users`).set(auth).set("Content-Type", "application/scim+json").send(JSON.stringify(oktaUser(email, extra)));
  expect(response.status).toBe(201);
  return response.body as { id: string; meta: { version: string } };
};

const profileOf = async (app: Express, user: { idToken: string }) => (await request(app).get(`${api}/users/me`).set(bearer(user))).body;
const subscriptionKeys = (profile: { entitlements: Array<{ key: string; source: string }> }) => profile.entitlements.filter((grant) => grant.source === "subscription").map((grant) => grant.key);
const memberList = async (app: Express, owner: TestUser, businessId: string) =>
  (await request(app).get(`${api}/businesses/${businessId}/members`).set(bearer(owner))).body.items as Array<{ uid: string; email: string; role: string; seat: boolean; source: string; suspended: boolean; scimManaged: boolean }>;

describe("SCIM tokens (§22)", () => {
  beforeEach(resetEmulators);

  it("are shown once, listed without the token, work only on /scim/v2 and only until revoked", async () => {
    const { app, owner, businessId, auth, token } = await setup();
    expect(token.token).toMatch(/^scim_[0-9A-Za-z]{40,}$/);
    expect(token.baseUrl).toMatch(/\/api\/v1\/scim\/v2$/);
    const listed = await request(app).get(`${api}/businesses/${businessId}/scim/tokens`).set(bearer(owner));
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toContain(token.token);
    expect(listed.body.items).toEqual([expect.objectContaining({ id: token.id, name: "Okta" })]);

    expect((await request(app).get(`${scim}/Users`).set(auth)).status).toBe(200);
    // Not an API credential.
    expectProblem(await request(app).get(`${api}/users/me`).set(auth), 401, "invalid_token");
    // An ID token is not a SCIM credential; nor is nothing, or a made-up token.
    expectScimError(await request(app).get(`${scim}/Users`).set(bearer(owner)), 401);
    expectScimError(await request(app).get(`${scim}/Users`), 401);
    expectScimError(await request(app).get(`${scim}/Users`).set({ Authorization: "Bearer scim_notAToken" }), 401);

    expect((await request(app).delete(`${api}/businesses/${businessId}/scim/tokens/${token.id}`).set(bearer(owner))).status).toBe(204);
    expectScimError(await request(app).get(`${scim}/Users`).set(auth), 401);
    expectProblem(await request(app).delete(`${api}/businesses/${businessId}/scim/tokens/${token.id}`).set(bearer(owner)), 404, "scim_token_not_found");
  });

  it("are never replayed nor stored in clear: a repeat under an Idempotency-Key answers token: null", async () => {
    const { app, owner, businessId } = await setup();
    const make = () => request(app).post(`${api}/businesses/${businessId}/scim/tokens`).set(bearer(owner)).set("Idempotency-Key", "scim-token-1").send({ name: "Entra" });
    const first = await make();
    expect(first.status).toBe(201);
    expect(first.body.token).toMatch(/^scim_/);
    const again = await make();
    expect([again.status, again.headers["idempotency-replayed"], again.body.id, again.body.token]).toEqual([201, "true", first.body.id, null]);
    // No document anywhere holds the token.
    const { db } = await testDeps();
    for (const collection of await db.listCollections()) {
      for (const document of (await collection.get()).docs) expect([collection.id, JSON.stringify(document.data()).includes(first.body.token)]).toEqual([collection.id, false]);
    }
    expect((await request(app).get(`${scim}/Users`).set({ Authorization: `Bearer ${first.body.token}` })).status).toBe(200);
  });

  it("are for owners only", async () => {
    const { app, businessId, auth } = await setup();
    const stranger = await createUser();
    expectProblem(await request(app).post(`${api}/businesses/${businessId}/scim/tokens`).set(bearer(stranger)).send({ name: "x" }), 404, "business_not_found");
    const admin = await provision(app, auth, "admin@acme.test");
    expect(admin.id).toBeTruthy();
    expectProblem(await request(app).post(`${api}/businesses/${businessId}/scim/tokens`).set(bearer(stranger)).send({ name: "" }), 400, "invalid_request");
  });
});

describe("SCIM discovery (§22)", () => {
  beforeEach(resetEmulators);

  it("describes what the server supports, its resource types and schemas", async () => {
    const { app, auth } = await setup();
    const config = await request(app).get(`${scim}/ServiceProviderConfig`).set(auth);
    expect(config.status).toBe(200);
    expect(config.headers["content-type"]).toMatch(/^application\/scim\+json/);
    expect(config.body).toEqual(
      expect.objectContaining({
        patch: { supported: true },
        filter: { supported: true, maxResults: 200 },
        etag: { supported: true },
        bulk: expect.objectContaining({ supported: false }),
        changePassword: { supported: false },
        sort: { supported: false },
      }),
    );
    const types = await request(app).get(`${scim}/ResourceTypes`).set(auth);
    expect(types.body.Resources.map((type: { id: string }) => type.id)).toEqual(["User", "Group"]);
    expect((await request(app).get(`${scim}/ResourceTypes/User`).set(auth)).body.endpoint).toBe("/Users");
    expect((await request(app).get(`${scim}/Schemas/${USER}`).set(auth)).body.attributes.map((attribute: { name: string }) => attribute.name)).toContain("userName");
    expectScimError(await request(app).get(`${scim}/Schemas/urn:nope`).set(auth), 404);
    expectScimError(await request(app).post(`${scim}/Schemas`).set(auth).send({}), 405);
    expectScimError(await request(app).delete(`${scim}/ServiceProviderConfig`).set(auth), 405);
  });
});

describe("SCIM Users (§22)", () => {
  beforeEach(resetEmulators);

  it("provisions as Okta does: lookup by filter, create, duplicate refused, Location and ETag", async () => {
    const { app, owner, businessId, auth } = await setup();
    const lookup = await request(app).get(`${scim}/Users`).query({ filter: 'userName eq "ann@acme.test"', startIndex: 1, count: 100 }).set(auth);
    expect(lookup.body).toEqual({ schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"], totalResults: 0, startIndex: 1, itemsPerPage: 0, Resources: [] });

    const created = await request(app).post(`${scim}/Users`).set(auth).set("Content-Type", "application/scim+json").send(JSON.stringify(oktaUser("Ann@Acme.test")));
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe(created.body.meta.location);
    expect(created.headers.etag).toBe(created.body.meta.version);
    expect(created.body.meta.version).toMatch(/^W\/"/);
    expect(created.body).toEqual(
      expect.objectContaining({ id: expect.any(String), userName: "ann@acme.test", active: true, name: { givenName: "Ann", familyName: "Lee" }, displayName: "Ann Lee", externalId: expect.any(String) }),
    );
    expect(created.body).not.toHaveProperty("password");

    // A managed Firebase Auth user: email verified, no password.
    const user = await (await testDeps()).auth.getUser(created.body.id);
    expect({ email: user.email, emailVerified: user.emailVerified, disabled: user.disabled, providers: user.providerData.length }).toEqual({ email: "ann@acme.test", emailVerified: true, disabled: false, providers: 0 });

    // userName compares in any case; the filter finds it.
    const found = await request(app).get(`${scim}/Users`).query({ filter: 'USERNAME eq "ANN@acme.test"' }).set(auth);
    expect(found.body.totalResults).toBe(1);
    expectScimError(await request(app).post(`${scim}/Users`).set(auth).send(oktaUser("ann@acme.test")), 409, "uniqueness");
    expectScimError(await request(app).post(`${scim}/Users`).set(auth).send(oktaUser("other@acme.test", { externalId: created.body.externalId })), 409, "uniqueness");

    const members = await memberList(app, owner, businessId);
    expect(members.find((member) => member.uid === created.body.id)).toEqual(expect.objectContaining({ role: "member", seat: true, source: "scim", suspended: false, scimManaged: true }));
    expect(members.find((member) => member.uid === owner.uid)).toEqual(expect.objectContaining({ source: "owner", scimManaged: false }));
  });

  it("refuses bad bodies with SCIM errors and changes nothing", async () => {
    const { app, owner, businessId, auth } = await setup();
    expectScimError(await request(app).post(`${scim}/Users`).set(auth).send({ userName: "not-an-email" }), 400, "invalidValue");
    expectScimError(await request(app).post(`${scim}/Users`).set(auth).send({ userName: "a\u0000b@acme.test" }), 400, "invalidValue");
    expectScimError(await request(app).post(`${scim}/Users`).set(auth).set("Content-Type", "application/scim+json").send("{not json"), 400, "invalidSyntax");
    expectScimError(await request(app).get(`${scim}/Users`).query({ filter: 'userName eq "x" and' }).set(auth), 400, "invalidFilter");
    expectScimError(await request(app).get(`${scim}/Users`).query({ filter: "userName xx 1" }).set(auth), 400, "invalidFilter");
    expectScimError(await request(app).get(`${scim}/Users/nobody`).set(auth), 404);
    expectScimError(await request(app).patch(`${scim}/Users/nobody`).set(auth).send({ schemas: [PATCH], Operations: [{ op: "replace", value: { active: false } }] }), 404);
    expect(await memberList(app, owner, businessId)).toHaveLength(1);
  });

  it("deactivation frees the seat, stops the entitlements at the next request and disables a managed user; activation restores them", async () => {
    const { app, owner, businessId, auth } = await setup({ seats: 2 });
    const ann = await provision(app, auth, "ann@acme.test");
    const annSession = await signInThroughProvider("saml.acme", "ann@acme.test");
    expect(annSession.uid).toBe(ann.id);
    expect(subscriptionKeys(await profileOf(app, annSession))).toEqual(["pro"]);

    // Okta's form: a value object without a path.
    const off = await request(app).patch(`${scim}/Users/${ann.id}`).set(auth).send({ schemas: [PATCH], Operations: [{ op: "replace", value: { active: false } }] });
    expect(off.status).toBe(200);
    expect(off.body.active).toBe(false);
    expect((await testDeps()).auth.getUser(ann.id).then((user) => user.disabled)).resolves.toBe(true);
    const members = await memberList(app, owner, businessId);
    expect(members.find((member) => member.uid === ann.id)).toEqual(expect.objectContaining({ seat: false, suspended: true }));
    // The seat is free at once: someone else gets it.
    const bob = await provision(app, auth, "bob@acme.test");
    expect((await memberList(app, owner, businessId)).find((member) => member.uid === bob.id)?.seat).toBe(true);
    // Ann's next write is refused (the account is disabled); her business is gone from her view.
    expectProblem(await request(app).post(`${api}/businesses`).set(bearer(annSession)).send({ name: "x" }), 401, "user_disabled");
    const business = await request(app).get(`${api}/businesses/${businessId}`).set(bearer(annSession));
    expect([401, 404]).toContain(business.status);

    // Microsoft Entra ID's form: operation name capitalised, the boolean as a string.
    const on = await request(app).patch(`${scim}/Users/${ann.id}`).set(auth).send({ schemas: [PATCH], Operations: [{ op: "Replace", path: "active", value: "True" }] });
    expect(on.status).toBe(200);
    expect(on.body.active).toBe(true);
    expect((await testDeps()).auth.getUser(ann.id).then((user) => user.disabled)).resolves.toBe(false);
    // Both seats are taken (owner, Bob): Ann is back without one.
    expect((await memberList(app, owner, businessId)).find((member) => member.uid === ann.id)).toEqual(expect.objectContaining({ suspended: false, seat: false }));
  });

  it("keeps a suspended member out of invitations until the identity provider restores them", async () => {
    const { app, owner, businessId, auth } = await setup();
    const ann = await provision(app, auth, "ann@acme.test");
    await request(app).patch(`${scim}/Users/${ann.id}`).set(auth).send({ Operations: [{ op: "replace", value: { active: false } }] });
    expectProblem(await request(app).post(`${api}/businesses/${businessId}/invitations`).set(bearer(owner)).send({ email: "ann@acme.test" }), 409, "already_member");
    expectProblem(await request(app).patch(`${api}/businesses/${businessId}/members/${ann.id}`).set(bearer(owner)).send({ seat: true }), 400, "invalid_request");
    expect((await memberList(app, owner, businessId)).find((member) => member.uid === ann.id)).toEqual(expect.objectContaining({ suspended: true, seat: false }));
  });

  it("answers hostile requests with SCIM 4xx errors, never a 5xx", async () => {
    const { app, auth } = await setup();
    const answers = await Promise.all([
      request(app).get(`${scim}/Users/%E0%A4%A`).set(auth),
      request(app).get(`${scim}/Users`).query("filter=a&filter=b").set(auth),
      request(app).get(`${scim}/Users`).query({ count: "lots" }).set(auth),
      request(app).get(`${scim}/Users`).query({ filter: "(".repeat(500) }).set(auth),
      request(app).get(`${scim}/Users`).query({ filter: `userName eq "${"x".repeat(5000)}"` }).set(auth),
      request(app).post(`${scim}/Users`).set(auth).send([{ userName: "a@acme.test" }]),
      request(app).post(`${scim}/Users`).set(auth).set("Content-Type", "application/scim+json").send("null"),
      request(app).post(`${scim}/Users`).set(auth).send({ userName: "a@acme.test", emails: "nope" }),
      request(app).post(`${scim}/Users`).set(auth).send({ userName: "a@acme.test", name: { givenName: "x".repeat(10_000) } }),
      request(app).post(`${scim}/Users`).set(auth).send({ userName: `${"a".repeat(65)}@acme.test` }),
      request(app).post(`${scim}/Groups`).set(auth).send({ displayName: "", members: [] }),
      request(app).post(`${scim}/Groups`).set(auth).send({ displayName: "G", members: [{ value: "../x" }] }),
      request(app).patch(`${scim}/Users/x`).set(auth).send({ Operations: "replace" }),
      request(app).post(`${scim}/.search`).set(auth).send({}),
      request(app).post(`${scim}/Bulk`).set(auth).send({}),
      request(app).put(`${scim}/Users`).set(auth).send({}),
    ]);
    for (const answer of answers) {
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
      expect(answer.body.schemas).toEqual([SCIM_ERROR]);
    }
    const ann = await provision(app, auth, "ann@acme.test");
    const patches = await Promise.all([
      request(app).patch(`${scim}/Users/${ann.id}`).set(auth).send({ Operations: [{ op: "replace", path: "emails[type eq", value: "x" }] }),
      request(app).patch(`${scim}/Users/${ann.id}`).set(auth).send({ Operations: [{ op: "add", path: "name.givenName.deeper", value: "x" }] }),
      request(app).patch(`${scim}/Users/${ann.id}`).set(auth).send({ Operations: [{ op: "remove" }] }),
      request(app).patch(`${scim}/Users/${ann.id}`).set(auth).send({ Operations: [{ op: "replace", value: { active: "maybe" } }] }),
      request(app).patch(`${scim}/Users/${ann.id}`).set(auth).send({ Operations: [{ op: "replace", path: "emails", value: [{ value: "not an email" }] }] }),
    ]);
    for (const answer of patches) {
      expect(answer.status).toBe(400);
      expect(answer.body.schemas).toEqual([SCIM_ERROR]);
    }
    const unchanged = await request(app).get(`${scim}/Users/${ann.id}`).set(auth);
    expect(unchanged.body.meta.version).toBe(ann.meta.version);
  });

  it("takes PATCH with paths, filtered paths and Entra's string booleans; PUT replaces; If-Match guards", async () => {
    const { app, auth } = await setup();
    const ann = await provision(app, auth, "ann@acme.test");
    const patched = await request(app)
      .patch(`${scim}/Users/${ann.id}`)
      .set(auth)
      .send({
        schemas: [PATCH],
        Operations: [
          { op: "Replace", path: "name.givenName", value: "Anne" },
          { op: "replace", path: 'emails[type eq "work"].value', value: "ann@acme.test" },
          { op: "Add", path: "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department", value: "Sales" },
          { op: "replace", path: "displayName", value: "Anne Lee" },
        ],
      });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual(expect.objectContaining({ displayName: "Anne Lee", name: { givenName: "Anne", familyName: "Lee" } }));
    expect(patched.body.meta.version).not.toBe(ann.meta.version);
    expectScimError(await request(app).patch(`${scim}/Users/${ann.id}`).set(auth).send({ Operations: [{ op: "frobnicate", path: "active" }] }), 400, "invalidSyntax");
    expectScimError(await request(app).patch(`${scim}/Users/${ann.id}`).set(auth).send({ Operations: [{ op: "replace", path: "userName", value: "new@acme.test" }] }), 400, "mutability");

    // If-Match with an old version: 412, nothing changed.
    expectScimError(await request(app).put(`${scim}/Users/${ann.id}`).set(auth).set("If-Match", ann.meta.version).send(oktaUser("ann@acme.test", { displayName: "Stale" })), 412);
    const replaced = await request(app).put(`${scim}/Users/${ann.id}`).set(auth).set("If-Match", patched.body.meta.version).send(oktaUser("ann@acme.test", { displayName: "Fresh", name: { givenName: "A" } }));
    expect(replaced.status).toBe(200);
    expect(replaced.body).toEqual(expect.objectContaining({ displayName: "Fresh", name: { givenName: "A" } }));
    const again = await request(app).get(`${scim}/Users/${ann.id}`).set(auth);
    expect(again.headers.etag).toBe(replaced.body.meta.version);
  });

  it("filters, projects and pages through every user once", async () => {
    const { app, auth } = await setup({ seats: 50 });
    const emails = ["amy", "ben", "cat", "dan", "eve"].map((name) => `${name}@acme.test`);
    const made = [];
    for (const email of emails) made.push(await provision(app, auth, email, { externalId: `ext-${email}` }));
    await request(app).patch(`${scim}/Users/${made[4].id}`).set(auth).send({ Operations: [{ op: "replace", value: { active: false } }] });

    const filter = async (text: string) => ((await request(app).get(`${scim}/Users`).query({ filter: text }).set(auth)).body.Resources as Array<{ userName: string }>).map((user) => user.userName).sort();
    expect(await filter('userName sw "b"')).toEqual(["ben@acme.test"]);
    expect(await filter('userName co "N@" and not (userName eq "BEN@acme.test")')).toEqual(["dan@acme.test"]);
    expect(await filter('emails[type eq "work"].value eq "dan@acme.test"')).toEqual(["dan@acme.test"]);
    expect(await filter('emails.value ew "@acme.test" and active eq false')).toEqual(["eve@acme.test"]);
    expect(await filter('externalId eq "ext-cat@acme.test" or id eq "' + made[0].id + '"')).toEqual(["amy@acme.test", "cat@acme.test"]);
    expect(await filter('active ne true')).toEqual(["eve@acme.test"]);
    expect(await filter("displayName pr")).toHaveLength(5);
    expect(await filter(`meta.lastModified gt "${new Date(Date.now() + 3_600_000).toISOString()}"`)).toEqual([]);
    expect(await filter(`meta.lastModified ge "2000-01-01T00:00:00Z"`)).toHaveLength(5);

    const projected = await request(app).get(`${scim}/Users`).query({ attributes: "userName,name.givenName", filter: 'userName eq "amy@acme.test"' }).set(auth);
    expect(projected.body.Resources[0]).toEqual({ schemas: [USER], id: made[0].id, userName: "amy@acme.test", name: { givenName: "Ann" } });
    const excluded = await request(app).get(`${scim}/Users/${made[0].id}`).query({ excludedAttributes: "emails,groups,meta" }).set(auth);
    expect(excluded.body).not.toHaveProperty("emails");
    expect(excluded.body).not.toHaveProperty("meta");
    expect(excluded.body.userName).toBe("amy@acme.test");

    const seen: string[] = [];
    for (let startIndex = 1; startIndex <= 5; startIndex += 2) {
      const page = await request(app).get(`${scim}/Users`).query({ startIndex, count: 2 }).set(auth);
      expect(page.body).toEqual(expect.objectContaining({ totalResults: 5, startIndex, itemsPerPage: Math.min(2, 5 - startIndex + 1) }));
      seen.push(...page.body.Resources.map((user: { id: string }) => user.id));
    }
    expect(seen.sort()).toEqual(made.map((user) => user.id).sort());
    expect((await request(app).get(`${scim}/Users`).query({ count: 5000 }).set(auth)).body.itemsPerPage).toBe(5);

    const searched = await request(app).post(`${scim}/Users/.search`).set(auth).send({ schemas: ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"], filter: 'userName eq "ben@acme.test"', attributes: ["userName"] });
    expect(searched.status).toBe(200);
    expect(searched.body.Resources).toEqual([{ schemas: [USER], id: made[1].id, userName: "ben@acme.test" }]);
  });

  it("links a member who came by invitation, never suspends or deletes an owner, and deletes a user", async () => {
    const { app, owner, businessId, auth } = await setup();
    const ownerUser = await provision(app, auth, owner.email);
    expect(ownerUser.id).toBe(owner.uid);
    expectScimError(await request(app).patch(`${scim}/Users/${owner.uid}`).set(auth).send({ Operations: [{ op: "replace", value: { active: false } }] }), 400, "mutability");
    expectScimError(await request(app).delete(`${scim}/Users/${owner.uid}`).set(auth), 400, "mutability");
    expect((await memberList(app, owner, businessId)).find((member) => member.uid === owner.uid)).toEqual(expect.objectContaining({ role: "owner", seat: true, scimManaged: true, source: "owner" }));

    const ann = await provision(app, auth, "ann@acme.test");
    expect((await request(app).delete(`${scim}/Users/${ann.id}`).set(auth)).status).toBe(204);
    expectScimError(await request(app).get(`${scim}/Users/${ann.id}`).set(auth), 404);
    expect((await memberList(app, owner, businessId)).map((member) => member.uid)).toEqual([owner.uid]);
    expect((await (await testDeps()).auth.getUser(ann.id)).disabled).toBe(true);
    const { db } = await testDeps();
    const actions = (await db.collection("auditLog").where("target", "==", businessId).get()).docs.map((doc) => doc.data()).filter((entry) => entry.actor.kind === "scim");
    expect(actions.map((entry) => entry.action).sort()).toEqual(["scim.user.create", "scim.user.create", "scim.user.delete"]);
  });

  it("provisions Users without the business's document growing: concurrent creates leave it untouched, each User a document of its own (§25)", async () => {
    const { app, businessId, auth } = await setup();
    const { db } = await testDeps();
    const business = db.collection("businesses").doc(businessId);
    const before = await business.get();
    const answers = await Promise.all(Array.from({ length: 40 }, (_, index) => request(app).post(`${scim}/Users`).set(auth).send(oktaUser(`long${index}@acme.test`, { displayName: "x".repeat(200), externalId: `ext-long-${index}` }))));
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 201));
    const after = await business.get();
    expect(after.updateTime).toEqual(before.updateTime);
    expect(Buffer.byteLength(JSON.stringify(after.data()))).toBeLessThan(20 * 1024);
    expect((await business.collection("members").where("source", "==", "scim").count().get()).data().count).toBe(40);
    const listed = await request(app).get(`${scim}/Users`).query({ count: 0 }).set(auth);
    expect(listed.body.totalResults).toBe(40);
  });

  it("gives seats up to the paid quantity under parallel provisioning, and one winner for a duplicate userName", async () => {
    const { app, owner, businessId, auth } = await setup({ seats: 4 });
    const responses = await Promise.all(Array.from({ length: 8 }, (_, index) => request(app).post(`${scim}/Users`).set(auth).send(oktaUser(`p${index}@acme.test`, { externalId: `p${index}` }))));
    expect(responses.map((response) => response.status)).toEqual(Array(8).fill(201));
    const members = await memberList(app, owner, businessId);
    expect(members).toHaveLength(9);
    expect(members.filter((member) => member.seat)).toHaveLength(4);

    const duplicates = await Promise.all(Array.from({ length: 5 }, () => request(app).post(`${scim}/Users`).set(auth).send(oktaUser("same@acme.test"))));
    expect(duplicates.map((response) => response.status).sort()).toEqual([201, 409, 409, 409, 409]);
    for (const response of duplicates.filter((candidate) => candidate.status === 409)) expect(response.body.scimType).toBe("uniqueness");
    const users = await (await testDeps()).auth.getUsers([{ email: "same@acme.test" }]);
    expect(users.users).toHaveLength(1);
  });
});

describe("whose accounts SCIM makes and touches (§22)", () => {
  beforeEach(resetEmulators);

  /** A second business of another owner with its own SCIM token and no verified domain (yet). */
  async function otherBusiness(app: Express) {
    const owner = await createUser({ displayName: "Rita Rival" });
    const businessId = (await request(app).post(`${api}/businesses`).set(bearer(owner)).send({ name: "Rival" })).body.id as string;
    await putSubscription(businessId, { status: "active", seats: 10, currentPeriodEnd: daysFromNow(30), entitlements: ["pro"] });
    const token = await request(app).post(`${api}/businesses/${businessId}/scim/tokens`).set(bearer(owner)).send({ name: "Entra" });
    return { owner, businessId, auth: { Authorization: `Bearer ${token.body.token}` } };
  }
  const disabled = async (uid: string) => (await (await testDeps()).auth.getUser(uid)).disabled;

  it("makes and links members only inside the business's verified domains, whether or not the account exists", async () => {
    const { app, auth, owner, businessId } = await setup({ domain: null });
    expectScimError(await request(app).post(`${scim}/Users`).set(auth).send(oktaUser("nobody@acme.test")), 400, "invalidValue");
    await expect((await testDeps()).auth.getUserByEmail("nobody@acme.test")).rejects.toMatchObject({ code: "auth/user-not-found" });
    // An existing account is not linked either: no membership, and so no policy, reaches it.
    const carol = await createUser({ email: "carol@elsewhere.test" });
    const refused = await request(app).post(`${scim}/Users`).set(auth).send(oktaUser("carol@elsewhere.test"));
    expectScimError(refused, 400, "invalidValue");
    expect(refused.body.detail).toContain("verify the domain first");
    expect((await request(app).get(`${api}/users/me`).set(bearer(carol))).body.businesses).toEqual([]);
    // With acme.test verified, an account there is linked; elsewhere.test still is not.
    await verifyDomain(app, owner, businessId, "acme.test");
    const dora = await createUser({ email: "dora@acme.test" });
    expect((await provision(app, auth, "dora@acme.test")).id).toBe(dora.uid);
    expectScimError(await request(app).post(`${scim}/Users`).set(auth).send(oktaUser("carol@elsewhere.test")), 400, "invalidValue");
  });

  it("lets no business's SCIM disable or enable an account that another business's SCIM made", async () => {
    const { app, owner, auth } = await setup();
    const ann = await provision(app, auth, "ann@acme.test");
    // Acme lets acme.test go; the rival verifies it (§22) and links the account Acme made.
    const acmeId = (await request(app).get(`${api}/users/me`).set(bearer(owner))).body.businesses[0].id as string;
    expect((await request(app).delete(`${api}/businesses/${acmeId}/domains/acme.test`).set(bearer(owner))).status).toBe(204);
    const rival = await otherBusiness(app);
    await verifyDomain(app, rival.owner, rival.businessId, "acme.test");
    const linked = await provision(app, rival.auth, "ann@acme.test");
    expect(linked.id).toBe(ann.id);

    // The rival suspends its own membership only: the account stays enabled, Acme's seat stays.
    const off = await request(app).patch(`${scim}/Users/${ann.id}`).set(rival.auth).send({ Operations: [{ op: "replace", value: { active: false } }] });
    expect([off.status, off.body.active]).toEqual([200, false]);
    expect(await disabled(ann.id)).toBe(false);
    expect((await memberList(app, owner, (await request(app).get(`${api}/users/me`).set(bearer(owner))).body.businesses[0].id)).find((member) => member.uid === ann.id)).toEqual(expect.objectContaining({ suspended: false }));

    // Acme, which made the account, disables it; the rival's routine PUT with active true does not enable it.
    expect((await request(app).patch(`${scim}/Users/${ann.id}`).set(auth).send({ Operations: [{ op: "replace", path: "active", value: false }] })).status).toBe(200);
    expect(await disabled(ann.id)).toBe(true);
    const put = await request(app).put(`${scim}/Users/${ann.id}`).set(rival.auth).send(oktaUser("ann@acme.test", { active: true }));
    expect([put.status, put.body.active]).toEqual([200, true]);
    expect(await disabled(ann.id)).toBe(true);
    // Nor does the rival's delete touch it; Acme enabling it does.
    expect((await request(app).delete(`${scim}/Users/${ann.id}`).set(rival.auth)).status).toBe(204);
    expect((await request(app).patch(`${scim}/Users/${ann.id}`).set(auth).send({ Operations: [{ op: "replace", path: "active", value: "True" }] })).status).toBe(200);
    expect(await disabled(ann.id)).toBe(false);
  });

  it("disables an account it made when an owner removes the member in the product (§17), and leaves a linked account alone", async () => {
    const { app, owner, businessId, auth } = await setup();
    const ann = await provision(app, auth, "ann@acme.test");
    const linked = await createUser({ email: "lee@acme.test" });
    expect((await provision(app, auth, "lee@acme.test")).id).toBe(linked.uid);
    for (const uid of [ann.id, linked.uid]) expect((await request(app).delete(`${api}/businesses/${businessId}/members/${uid}`).set(bearer(owner))).status).toBe(204);
    expect([await disabled(ann.id), await disabled(linked.uid)]).toEqual([true, false]);
  });

  it("still manages the account it made when the create is retried after the account was made", async () => {
    const { app, auth, owner } = await setup();
    // The first attempt made the account and was lost before the membership was written.
    const businessId = (await request(app).get(`${api}/users/me`).set(bearer(owner))).body.businesses[0].id as string;
    const made = await (await testDeps()).auth.createUser({ uid: managedUserId(businessId, "dan@acme.test"), email: "dan@acme.test", emailVerified: true });
    const dan = await provision(app, auth, "dan@acme.test");
    expect(dan.id).toBe(made.uid);
    expect((await request(app).patch(`${scim}/Users/${dan.id}`).set(auth).send({ Operations: [{ op: "replace", value: { active: false } }] })).status).toBe(200);
    expect(await disabled(dan.id)).toBe(true);
  });
});

describe("SCIM Groups (§22)", () => {
  beforeEach(resetEmulators);

  it("map to admins and seat holders, with Entra's member PATCH forms", async () => {
    const { app, owner, businessId, auth } = await setup({ seats: 3 });
    const [ann, bob, cat] = [await provision(app, auth, "ann@acme.test"), await provision(app, auth, "bob@acme.test"), await provision(app, auth, "cat@acme.test")];
    // Owner + Ann + Bob hold the 3 seats; Cat has none.
    const settings = await request(app).put(`${api}/businesses/${businessId}/scim/settings`).set(bearer(owner)).send({ roleGroups: { admin: ["IT Admins"] }, seatGroups: ["Licensed"] });
    expect(settings.status).toBe(200);
    expect(settings.body).toEqual({ roleGroups: { admin: ["IT Admins"] }, seatGroups: ["Licensed"] });
    // Seat groups set and nobody in them: the SCIM members' seats are freed in the background (the
    // deployed trigger and sweep, a page of members per transaction); the owner keeps theirs.
    await sweepDirectoryJobs();
    let members = await memberList(app, owner, businessId);
    expect(members.filter((member) => member.seat).map((member) => member.uid)).toEqual([owner.uid]);

    const itAdmins = await request(app).post(`${scim}/Groups`).set(auth).send({ schemas: [GROUP], displayName: "IT Admins", members: [] });
    expect(itAdmins.status).toBe(201);
    expectScimError(await request(app).post(`${scim}/Groups`).set(auth).send({ schemas: [GROUP], displayName: "it admins", members: [{ value: ann.id }] }), 409, "uniqueness");
    const licensed = await request(app).post(`${scim}/Groups`).set(auth).send({ schemas: [GROUP], displayName: "Licensed", members: [{ value: ann.id }, { value: bob.id }, { value: cat.id }] });
    expect(licensed.status).toBe(201);
    expect(licensed.headers.location).toContain(`/Groups/${licensed.body.id}`);
    members = await memberList(app, owner, businessId);
    // Two seats were free: given in the order members joined.
    expect(members.filter((member) => member.seat).map((member) => member.uid).sort()).toEqual([owner.uid, ann.id, bob.id].sort());

    // Entra: add a member, then remove one by a filtered path.
    const added = await request(app).patch(`${scim}/Groups/${itAdmins.body.id}`).set(auth).send({ schemas: [PATCH], Operations: [{ op: "Add", path: "members", value: [{ value: cat.id }] }] });
    // A Group's PATCH answers 204 with its new ETag (RFC 7644 §3.5.2), so that it reads no more than the members it moves.
    expect(added.status).toBe(204);
    expect(added.headers.etag).toMatch(/^W\/"/);
    expect(added.headers.etag).not.toBe(itAdmins.headers.etag);
    expect((await memberList(app, owner, businessId)).find((member) => member.uid === cat.id)?.role).toBe("admin");
    // With a projection asked, 200 and the group so projected.
    const removed = await request(app).patch(`${scim}/Groups/${licensed.body.id}`).query({ excludedAttributes: "members" }).set(auth).send({ schemas: [PATCH], Operations: [{ op: "Remove", path: `members[value eq "${ann.id}"]` }] });
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual(expect.objectContaining({ id: licensed.body.id, displayName: "Licensed" }));
    expect(removed.body.members).toBeUndefined();
    members = await memberList(app, owner, businessId);
    // Ann leaves the seat group: her seat goes to Cat, still in it.
    expect(members.find((member) => member.uid === ann.id)?.seat).toBe(false);
    expect(members.find((member) => member.uid === cat.id)?.seat).toBe(true);

    const groups = await request(app).get(`${scim}/Groups`).query({ filter: `members.value eq "${cat.id}"` }).set(auth);
    expect(groups.body.Resources.map((group: { displayName: string }) => group.displayName).sort()).toEqual(["IT Admins", "Licensed"]);
    const user = await request(app).get(`${scim}/Users/${cat.id}`).set(auth);
    expect(user.body.groups.map((group: { display: string }) => group.display).sort()).toEqual(["IT Admins", "Licensed"]);

    // PUT replaces the members whole; a display name may change, not to another group's.
    const put = await request(app).put(`${scim}/Groups/${licensed.body.id}`).set(auth).send({ schemas: [GROUP], displayName: "Licensed users", members: [{ value: ann.id }] });
    expect(put.status).toBe(200);
    expect(put.body.members.map((entry: { value: string }) => entry.value)).toEqual([ann.id]);
    expectScimError(await request(app).patch(`${scim}/Groups/${licensed.body.id}`).set(auth).send({ Operations: [{ op: "replace", path: "displayName", value: "IT ADMINS" }] }), 409, "uniqueness");
    // The settings name "Licensed", so with the group renamed nobody is in a seat group.
    expect((await memberList(app, owner, businessId)).filter((member) => member.seat).map((member) => member.uid)).toEqual([owner.uid]);
    expectScimError(await request(app).post(`${scim}/Groups`).set(auth).send({ displayName: "Ghosts", members: [{ value: "nobody" }] }), 400, "invalidValue");
    expect((await request(app).delete(`${scim}/Groups/${itAdmins.body.id}`).set(auth)).status).toBe(204);
    expectScimError(await request(app).get(`${scim}/Groups/${itAdmins.body.id}`).set(auth), 404);
    // Its members leave it in the background (the deployed trigger and sweep), with the role it gave.
    await sweepDirectoryJobs();
    expect((await memberList(app, owner, businessId)).find((member) => member.uid === cat.id)?.role).toBe("member");
  });

  it("of any size: a 1,000-member group is patched one member at a time, listed, paged through /Users, and deleted", async () => {
    // An identity provider's first sync of a thousand people: more requests a minute than the default limit.
    const { app, owner, businessId, auth } = await setup({ seats: 2_000, requestsPerMinute: 100_000 });
    // Membership of "Everyone" makes admins; seats go to another group (seats/ledger.ts is seats.test's).
    await request(app).put(`${api}/businesses/${businessId}/scim/settings`).set(bearer(owner)).send({ roleGroups: { admin: ["Everyone"] }, seatGroups: ["Licensed"] });
    const users: string[] = [];
    // Provisioned as an identity provider does: 10 requests at a time.
    for (let start = 0; start < 1_001; start += 10) {
      const batch = await Promise.all(Array.from({ length: Math.min(10, 1_001 - start) }, (_, index) => provision(app, auth, `user${start + index}@acme.test`, { externalId: `ext-${start + index}` })));
      users.push(...batch.map((user) => user.id));
    }
    const [extra, ...everyone] = users;
    // Identity providers send members a batch at a time: at most 150 a request.
    const group = await request(app).post(`${scim}/Groups`).set(auth).send({ schemas: [GROUP], displayName: "Everyone", members: everyone.slice(0, 150).map((value) => ({ value })) });
    expect(group.status).toBe(201);
    expectScimError(await request(app).patch(`${scim}/Groups/${group.body.id}`).set(auth).send({ schemas: [PATCH], Operations: [{ op: "add", path: "members", value: everyone.slice(150, 301).map((value) => ({ value })) }] }), 400, "invalidValue");
    for (let start = 150; start < everyone.length; start += 150) {
      const slice = everyone.slice(start, start + 150);
      expect((await request(app).patch(`${scim}/Groups/${group.body.id}`).set(auth).send({ schemas: [PATCH], Operations: [{ op: "add", path: "members", value: slice.map((value) => ({ value })) }] })).status).toBe(204);
    }
    // One member in and one out, as Okta and Entra send them; If-Match with the group's version.
    const before = await request(app).get(`${scim}/Groups/${group.body.id}`).query({ excludedAttributes: "members" }).set(auth);
    expect(before.body.members).toBeUndefined();
    const patched = await request(app)
      .patch(`${scim}/Groups/${group.body.id}`)
      .set(auth)
      .set("If-Match", before.headers.etag)
      .send({ schemas: [PATCH], Operations: [{ op: "add", path: "members", value: [{ value: extra }] }, { op: "remove", path: `members[value eq "${everyone[0]}"]` }] });
    expect(patched.status).toBe(204);
    expectScimError(await request(app).patch(`${scim}/Groups/${group.body.id}`).set(auth).set("If-Match", before.headers.etag).send({ schemas: [PATCH], Operations: [{ op: "remove", path: `members[value eq "${extra}"]` }] }), 412);
    const listed = await request(app).get(`${scim}/Groups/${group.body.id}`).set(auth);
    expect(listed.status).toBe(200);
    expect(listed.body.members).toHaveLength(1_000);
    expect(listed.body.members.map((member: { value: string }) => member.value)).toEqual([extra, ...everyone.slice(1)].sort());
    // Its members page through /Users by cursor.
    const paged: string[] = [];
    for (let startIndex = 1; ; startIndex += 200) {
      const page = await request(app).get(`${scim}/Users`).query({ filter: `groups.value eq "${group.body.id}"`, startIndex, count: 200 }).set(auth);
      expect(page.body.totalResults).toBe(1_000);
      paged.push(...page.body.Resources.map((user: { id: string }) => user.id));
      if (page.body.Resources.length < 200) break;
    }
    expect(paged.sort()).toEqual([extra, ...everyone.slice(1)].sort());
    const { db } = await testDeps();
    const admins = async () => (await db.collection(`businesses/${businessId}/members`).where("role", "==", "admin").count().get()).data().count;
    expect(await admins()).toBe(1_000);

    // The big group deletes at once; its members leave it in the background, and with it their admin role.
    expect((await request(app).delete(`${scim}/Groups/${group.body.id}`).set(auth)).status).toBe(204);
    expect((await request(app).get(`${scim}/Users`).query({ filter: `groups.value eq "${group.body.id}"` }).set(auth)).body.totalResults).toBe(0);
    await sweepDirectoryJobs();
    expect((await db.collection(`businesses/${businessId}/members`).where("groups", "array-contains", group.body.id).get()).size).toBe(0);
    expect(await admins()).toBe(0);
    expect((await db.collection("scimDirectoryJobs").get()).size).toBe(0);
  }, 120_000);
});

describe("verified domains (§22)", () => {
  beforeEach(resetEmulators);

  it("are verified by their TXT record, held by the first business to verify, and limit SCIM to them", async () => {
    const { app, owner, businessId, auth } = await setup({ domain: null });
    const added = await request(app).post(`${api}/businesses/${businessId}/domains`).set(bearer(owner)).send({ domain: "Acme.Test" });
    expect(added.status).toBe(201);
    expect(added.body).toEqual({ domain: "acme.test", txtName: "_marketplace-verification.acme.test", txtValue: expect.stringMatching(/^marketplace-verification=/), verifiedAt: null });
    expectProblem(await request(app).post(`${api}/businesses/${businessId}/domains/acme.test/verify`).set(bearer(owner)), 409, "domain_not_verified");
    dns.set("_marketplace-verification.acme.test", "TXT", ["v=spf1 -all", added.body.txtValue]);

    // Another business has the domain pending too; the first to verify holds it.
    const other = await createUser();
    const otherBusiness = (await request(app).post(`${api}/businesses`).set(bearer(other)).send({ name: "Rival" })).body.id;
    const rival = await request(app).post(`${api}/businesses/${otherBusiness}/domains`).set(bearer(other)).send({ domain: "acme.test" });
    dns.set("_marketplace-verification.acme.test", "TXT", [added.body.txtValue, rival.body.txtValue]);
    const verified = await request(app).post(`${api}/businesses/${businessId}/domains/acme.test/verify`).set(bearer(owner));
    expect(verified.status).toBe(200);
    expect(verified.body.verifiedAt).toEqual(expect.any(String));
    expectProblem(await request(app).post(`${api}/businesses/${otherBusiness}/domains/acme.test/verify`).set(bearer(other)), 409, "domain_taken");
    expect((await request(app).get(`${api}/businesses/${businessId}/domains`).set(bearer(owner))).body.items).toEqual([verified.body]);

    expectScimError(await request(app).post(`${scim}/Users`).set(auth).send(oktaUser("someone@elsewhere.test")), 400, "invalidValue");
    await provision(app, auth, "ann@acme.test");
    expectProblem(await request(app).post(`${api}/businesses/${businessId}/domains`).set(bearer(owner)).send({ domain: "not a domain" }), 400, "invalid_request");
    expectProblem(await request(app).post(`${api}/businesses/${businessId}/domains/nope.test/verify`).set(bearer(owner)), 404, "domain_not_found");

    // Removed, the domain is free for the rival.
    expect((await request(app).delete(`${api}/businesses/${businessId}/domains/acme.test`).set(bearer(owner))).status).toBe(204);
    expect((await request(app).post(`${api}/businesses/${otherBusiness}/domains/acme.test/verify`).set(bearer(other))).status).toBe(200);
  });

  it("are checked again daily: a record missing 7 days in a row releases the domain, and the owners hear of it at the first failed check", async () => {
    const { app, owner, businessId, auth } = await setup();
    const deps = await testDeps();
    const DAY_MS = 24 * 3_600_000;
    let now = Date.now();
    const checks = { ...deps, clock: () => new Date(now), config: { ...deps.config, dnsResolvers: [dns.address] } };
    const record = "_marketplace-verification.acme.test";
    const txtValue = (await request(app).get(`${api}/businesses/${businessId}/domains`).set(bearer(owner))).body.items[0].txtValue as string;
    const verifiedAt = async () => (await request(app).get(`${api}/businesses/${businessId}/domains`).set(bearer(owner))).body.items[0].verifiedAt as string | null;
    const warnings = async () => (await deps.db.collection("mail").where("to", "==", owner.email).get()).docs.filter((doc) => String(doc.get("message.subject")).startsWith("acme.test")).length;
    const nextDay = async () => {
      now += DAY_MS;
      return recheckDomains(checks);
    };

    expect(await recheckDomains(checks)).toMatchObject({ checked: 0 });
    expect(await nextDay()).toMatchObject({ checked: 1, missing: 0, released: [] });
    // Missing for a day, then back: the owners are told once, and the streak ends.
    dns.set(record, "TXT", ["v=spf1 -all"]);
    expect(await nextDay()).toMatchObject({ checked: 1, missing: 1, released: [] });
    expect(await warnings()).toBe(1);
    dns.set(record, "TXT", [txtValue]);
    expect(await nextDay()).toMatchObject({ checked: 1, missing: 0 });
    // A resolver that fails proves nothing: the domain stays, checked again at the next run.
    expect(await recheckDomains({ ...checks, clock: () => new Date(now + DAY_MS), config: { dnsResolvers: ["127.0.0.1:9"] } })).toMatchObject({ checked: 0, unreachable: 1 });
    // Missing 7 days in a row: released on the eighth check.
    dns.set(record, "TXT", ["v=spf1 -all"]);
    for (let day = 0; day < 7; day += 1) {
      expect((await nextDay()).released).toEqual([]);
      expect(await verifiedAt()).not.toBeNull();
    }
    expect(await warnings()).toBe(2);
    expect((await nextDay()).released).toEqual(["acme.test"]);
    expect(await verifiedAt()).toBeNull();
    expectScimError(await request(app).post(`${scim}/Users`).set(auth).send(oktaUser("newcomer@acme.test")), 400, "invalidValue");
    // Another business may verify it now.
    const rival = await createUser();
    const rivalBusiness = (await request(app).post(`${api}/businesses`).set(bearer(rival)).send({ name: "Rival" })).body.id;
    const added = await request(app).post(`${api}/businesses/${rivalBusiness}/domains`).set(bearer(rival)).send({ domain: "acme.test" });
    dns.set(record, "TXT", [added.body.txtValue]);
    expect((await request(app).post(`${api}/businesses/${rivalBusiness}/domains/acme.test/verify`).set(bearer(rival))).status).toBe(200);
    expect((await deps.db.collection("auditLog").where("action", "in", ["business.domain.missing", "business.domain.release"]).get()).docs.map((doc) => doc.get("action")).sort()).toEqual(["business.domain.missing", "business.domain.missing", "business.domain.release"]);
  });
});

describe("single sign-on (§22)", () => {
  beforeEach(resetEmulators);

  async function withSso(seats = 10) {
    const context = await setup({ seats });
    const { app, owner, businessId } = context;
    const added = await request(app).post(`${api}/businesses/${businessId}/domains`).set(bearer(owner)).send({ domain: "sso.test" });
    dns.set("_marketplace-verification.sso.test", "TXT", [added.body.txtValue]);
    expect((await request(app).post(`${api}/businesses/${businessId}/domains/sso.test/verify`).set(bearer(owner))).status).toBe(200);
    const put = await request(app).put(`${api}/businesses/${businessId}/sso`).set(bearer(owner)).send({ providerId: "saml.acme", enforce: false, jit: true });
    expect(put.status).toBe(200);
    return context;
  }

  it("makes a verified-domain user signing in through the provider a member just in time", async () => {
    const { app, owner, businessId } = await withSso();
    const dana = await signInThroughProvider("saml.acme", "dana@sso.test");
    const profile = await profileOf(app, dana);
    expect(profile.businesses).toEqual([expect.objectContaining({ id: businessId, role: "member", seat: true, entitled: true, ssoRequired: false })]);
    expect(subscriptionKeys(profile)).toEqual(["pro"]);
    expect((await memberList(app, owner, businessId)).find((member) => member.uid === dana.uid)?.source).toBe("sso");
    // Another provider, or another domain, joins nobody.
    const viaOther = await signInThroughProvider("oidc.other", "eli@sso.test");
    expect((await profileOf(app, viaOther)).businesses).toEqual([]);
    const outsider = await signInThroughProvider("saml.acme", "fay@elsewhere.test");
    expect((await profileOf(app, outsider)).businesses).toEqual([]);
    expect((await request(app).get(`${api}/businesses/${businessId}/sso`).set(bearer(owner))).body).toEqual({ providerId: "saml.acme", enforce: false, jit: true });
    expectProblem(await request(app).put(`${api}/businesses/${businessId}/sso`).set(bearer(owner)).send({ providerId: "google.com", enforce: true, jit: false }), 400, "invalid_request");
    expectProblem(await request(app).put(`${api}/businesses/${businessId}/sso`).set(bearer(dana)).send({ providerId: "saml.acme", enforce: true, jit: false }), 403, "not_business_admin");
  });

  it("with enforcement, answers a password session of a member 403 sso_required and gives it none of the business's entitlements; owners are exempt", async () => {
    const { app, owner, businessId, auth } = await withSso();
    const ann = await provision(app, auth, "ann@sso.test");
    // Ann also has a password (an account made before SSO): linked, not managed.
    const { auth: firebaseAuth } = await testDeps();
    await firebaseAuth.updateUser(ann.id, { password: "correct-horse-battery" });
    const viaSso = await signInThroughProvider("saml.acme", "ann@sso.test");
    const viaPassword = await createUserSession("ann@sso.test");
    expect((await request(app).put(`${api}/businesses/${businessId}/sso`).set(bearer(owner)).send({ providerId: "saml.acme", enforce: true, jit: true })).status).toBe(200);

    expectProblem(await request(app).get(`${api}/businesses/${businessId}`).set(bearer(viaPassword)), 403, "sso_required");
    const passwordProfile = await profileOf(app, viaPassword);
    expect(passwordProfile.businesses).toEqual([expect.objectContaining({ id: businessId, ssoRequired: true, entitled: false })]);
    expect(subscriptionKeys(passwordProfile)).toEqual([]);

    expect((await request(app).get(`${api}/businesses/${businessId}`).set(bearer(viaSso))).status).toBe(200);
    expect(subscriptionKeys(await profileOf(app, viaSso))).toEqual(["pro"]);
    // The owner, with a password, keeps access and entitlements.
    expect((await request(app).get(`${api}/businesses/${businessId}`).set(bearer(owner))).status).toBe(200);
    expect(subscriptionKeys(await profileOf(app, owner))).toEqual(["pro"]);
  });

  it("records business.member.* events for SCIM's changes, with the audit entries (actor scim)", async () => {
    const { app, businessId, auth, token } = await setup();
    const ann = await provision(app, auth, "ann@acme.test");
    await request(app).patch(`${scim}/Users/${ann.id}`).set(auth).send({ Operations: [{ op: "replace", value: { active: false } }] });
    const { db } = await testDeps();
    const events = (await db.collection("events").orderBy("at").get()).docs.map((doc) => doc.data()).filter((event) => String(event.type).startsWith("business.member."));
    expect(events.map((event) => [event.type, event.data.uid, event.data.source, event.data.suspended ?? null])).toEqual([
      ["business.member.joined", ann.id, "scim", null],
      ["business.member.updated", ann.id, "scim", true],
    ]);
    const entries = (await db.collection("auditLog").where("target", "==", businessId).get()).docs.map((doc) => doc.data()).filter((entry) => entry.actor.kind === "scim");
    expect(entries.map((entry) => [entry.action, entry.actor.id]).sort()).toEqual([
      ["scim.user.create", token.id],
      ["scim.user.update", token.id],
    ]);
  });
});

async function createUserSession(email: string) {
  const { signIn } = await import("./support/harness");
  return { idToken: await signIn(email, "correct-horse-battery") };
}
