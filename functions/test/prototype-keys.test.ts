import type { Express } from "express";
import request from "supertest";
import { startLocalDns, type LocalDns } from "../../tools/local-stack/dns-server";
import { daysFromNow, putSubscription } from "./support/fixtures";
import { verifyDomainForBusiness } from "../src/domains/service";
import { bearer, createDeveloper, createUser, expectProblem, operatorDeps, resetEmulators, testApp } from "./support/harness";

/**
 * No request reaches the prototype every object shares (§22, and everywhere a caller's keys meet
 * an object): each attempt is a 400 and the next caller's answers are unchanged. Also the inputs
 * that once made a 500 where a caller's name or date met code that did not expect it.
 */

const api = "/api/v1";
const scim = `${api}/scim/v2`;
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const SCIM_ERROR = "urn:ietf:params:scim:api:messages:2.0:Error";

let dns: LocalDns;
beforeAll(async () => {
  dns = await startLocalDns();
});
afterAll(() => dns.stop());
beforeEach(resetEmulators);

const prototypeKeys = () => [...Object.getOwnPropertyNames(Object.prototype), ...Object.getOwnPropertyNames(Array.prototype)].sort();
const baseline = prototypeKeys();

async function scimBusiness(app: Express) {
  const owner = await createUser({ displayName: "Olivia Owner" });
  const created = await request(app).post(`${api}/businesses`).set(bearer(owner)).send({ name: "Acme" });
  const businessId = created.body.id as string;
  await putSubscription(businessId, { status: "active", seats: 10, currentPeriodEnd: daysFromNow(30), entitlements: ["pro"] });
  const token = await request(app).post(`${api}/businesses/${businessId}/scim/tokens`).set(bearer(owner)).send({ name: "Okta" });
  // An existing account in the business's verified domain, which SCIM links.
  await verifyDomainForBusiness(await operatorDeps(), { id: businessId, domain: "example.com" });
  await createUser({ email: "ann@example.com" });
  const auth = { Authorization: `Bearer ${token.body.token}` };
  const user = await request(app).post(`${scim}/Users`).set(auth).send({ userName: "ann@example.com", active: true });
  expect(user.status).toBe(201);
  const group = await request(app).post(`${scim}/Groups`).set(auth).send({ displayName: "Engineering", members: [{ value: user.body.id }] });
  expect(group.status).toBe(201);
  const member = await request(app).get(`${scim}/Users/${user.body.id}`).set(auth);
  return { owner, businessId, auth, userId: user.body.id as string, groupId: group.body.id as string, groupVersion: group.body.meta.version as string, userVersion: member.body.meta.version as string };
}

/** What every other caller sees must not have changed. */
async function expectUnharmed(app: Express) {
  expect(prototypeKeys()).toEqual(baseline);
  expect(({} as Record<string, unknown>).X).toBeUndefined();
  const modules = await request(app).get(`${api}/modules`);
  expect(modules.status).toBe(200);
  expect(modules.headers.x).toBeUndefined();
  expect((await request(app).get(`${api}/openapi.json`)).status).toBe(200);
}

describe("keys that reach an object's prototype", () => {
  it("are refused in every SCIM PATCH form, on Users and Groups, and nothing changes", async () => {
    const app = await testApp({ config: { dnsResolvers: [dns.address] } });
    const { auth, userId, groupId, groupVersion, userVersion } = await scimBusiness(app);
    const raw = (path: string, json: string) => request(app).patch(path).set(auth).set("Content-Type", "application/scim+json").send(json);
    const attempts: Array<[string, string, string]> = [];
    for (const target of [`${scim}/Groups/${groupId}`, `${scim}/Users/${userId}`]) {
      for (const path of ["__proto__.X", "constructor.prototype.X", "__PROTO__.X", "members[value eq \"x\"].__proto__", "name.constructor", "urn:ietf:params:scim:schemas:core:2.0:User:__proto__.X", "prototype"]) {
        attempts.push([target, JSON.stringify({ schemas: [PATCH], Operations: [{ op: "add", path, value: "yes" }] }), "invalidPath"]);
      }
      attempts.push([target, '{"schemas":["' + PATCH + '"],"Operations":[{"op":"add","value":{"__proto__":{"X":"yes"}}}]}', "invalidValue"]);
      attempts.push([target, '{"schemas":["' + PATCH + '"],"Operations":[{"op":"replace","value":{"constructor":{"prototype":{"X":"yes"}}}}]}', "invalidValue"]);
      attempts.push([target, '{"schemas":["' + PATCH + '"],"Operations":[{"op":"replace","value":{"__proto__.X":"yes"}}]}', "invalidValue"]);
      attempts.push([target, '{"schemas":["' + PATCH + '"],"Operations":[{"op":"replace","path":"displayName","value":{"a":[{"__proto__":{"X":"yes"}}]}}]}', "invalidValue"]);
    }
    for (const [target, json, scimType] of attempts) {
      const answer = await raw(target, json);
      expect({ json, status: answer.status, scimType: answer.body.scimType, schemas: answer.body.schemas }).toEqual({ json, status: 400, scimType, schemas: [SCIM_ERROR] });
    }
    expect((await request(app).get(`${scim}/Groups/${groupId}`).set(auth)).body.meta.version).toBe(groupVersion);
    expect((await request(app).get(`${scim}/Users/${userId}`).set(auth)).body.meta.version).toBe(userVersion);
    await expectUnharmed(app);
  });

  it("are refused in SCIM bodies, PUTs, searches, filters and projections", async () => {
    const app = await testApp({ config: { dnsResolvers: [dns.address] } });
    const { auth, userId, groupId } = await scimBusiness(app);
    const json = (method: "post" | "put", path: string, body: string) => request(app)[method](path).set(auth).set("Content-Type", "application/scim+json").send(body);
    const bodies = [
      await json("post", `${scim}/Users`, '{"userName":"bob@example.com","__proto__":{"X":"yes"}}'),
      await json("post", `${scim}/Users`, '{"userName":"bob@example.com","name":{"constructor":{"prototype":{"X":"yes"}}}}'),
      await json("put", `${scim}/Users/${userId}`, '{"userName":"ann@example.com","urn:x:__proto__":{"X":"yes"}}'),
      await json("post", `${scim}/Groups`, '{"displayName":"G","members":[{"value":"' + userId + '","__proto__":{"X":"yes"}}]}'),
      await json("put", `${scim}/Groups/${groupId}`, '{"displayName":"G","prototype":{"X":"yes"}}'),
      await json("post", `${scim}/Users/.search`, '{"attributes":["__proto__.X"]}'),
    ];
    for (const answer of bodies) {
      expect(answer.status).toBe(400);
      expect(["invalidValue", "invalidPath"]).toContain(answer.body.scimType);
    }
    const lists = [`${scim}/Users`, `${scim}/Groups`];
    const queries: Array<[Record<string, string>, string[]]> = [
      [{ attributes: "__proto__.X" }, [...lists, `${scim}/Users/${userId}`]],
      [{ excludedAttributes: "constructor" }, [...lists, `${scim}/Groups/${groupId}`]],
      [{ "__proto__[X]": "yes" }, [...lists, `${scim}/Users/${userId}`]],
      [{ filter: "__proto__.X pr" }, lists],
      [{ filter: 'emails[constructor eq "x"]' }, lists],
      [{ filter: 'userName eq "x" or Prototype pr' }, lists],
    ];
    for (const [query, paths] of queries) {
      for (const path of paths) {
        const answer = await request(app).get(path).query(query).set(auth);
        expect({ query, status: answer.status, scimType: answer.body.scimType }).toEqual({ query, status: 400, scimType: "invalidPath" });
      }
    }
    // A value that merely spells one of the names is a value, not a key.
    expect((await request(app).get(`${scim}/Users`).query({ filter: 'userName eq "constructor"' }).set(auth)).body.totalResults).toBe(0);
    expect((await request(app).get(`${scim}/Users`).set(auth)).body.totalResults).toBe(1);
    await expectUnharmed(app);
  });

  it("are refused in the API's JSON bodies and queries with 400 invalid_request", async () => {
    const app = await testApp();
    const owner = await createUser();
    const answers = [
      await request(app).post(`${api}/businesses`).set(bearer(owner)).set("Content-Type", "application/json").send('{"name":"Acme","__proto__":{"X":"yes"}}'),
      await request(app).post(`${api}/businesses`).set(bearer(owner)).set("Content-Type", "application/json").send('{"name":"Acme","constructor":{"prototype":{"X":"yes"}}}'),
      await request(app).get(`${api}/modules`).query("__proto__[X]=yes"),
      await request(app).get(`${api}/modules`).query("constructor=yes"),
    ];
    for (const answer of answers) {
      expectProblem(answer, 400, "invalid_request");
      expect(answer.body.errors[0].message).toMatch(/reserved/);
    }
    expect((await request(app).get(`${api}/users/me`).set(bearer(owner))).body.businesses).toEqual([]);
    expect(Object.getPrototypeOf(JSON.parse('{"__proto__":{"X":"yes"}}'))).toBe(Object.prototype);
    await expectUnharmed(app);
  });
});

describe("inputs that once answered 500", () => {
  it("a SCIM projection of a sub-attribute of a simple attribute is an empty pick, not an error", async () => {
    const app = await testApp({ config: { dnsResolvers: [dns.address] } });
    const { auth, userId, groupId } = await scimBusiness(app);
    for (const path of [`${scim}/Users`, `${scim}/Groups`, `${scim}/Users/${userId}`, `${scim}/Groups/${groupId}`]) {
      for (const query of [{ attributes: "schemas.x" }, { attributes: "userName.x,displayName.y,active.z" }, { excludedAttributes: "schemas.x,userName.y" }]) {
        const answer = await request(app).get(path).query(query).set(auth);
        expect({ path, query, status: answer.status }).toEqual({ path, query, status: 200 });
      }
    }
    const projected = await request(app).get(`${scim}/Users/${userId}`).query({ attributes: "schemas.x,userName" }).set(auth);
    expect(projected.body).toEqual({ schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], id: userId, userName: "ann@example.com" });
  });

  it("earnings at the ends of the calendar answer 200 or 400", async () => {
    const app = await testApp();
    const developer = await createDeveloper("calendar");
    for (const [from, to, status] of [
      ["9999-12-31", "9999-12-31", 200],
      ["9999-01-01", "9999-12-31", 200],
      ["0000-01-01", "0000-01-01", 200],
      ["0000-01-01", "0000-12-31", 200],
      ["0000-01-01", "9999-12-31", 400],
    ] as const) {
      const answer = await request(app).get(`${api}/developers/earnings`).query({ from, to }).set(bearer(developer));
      expect({ from, to, status: answer.status }).toEqual({ from, to, status });
      if (status === 200) expect(answer.body.totals).toEqual([]);
    }
  });
});

describe("SCIM's 405", () => {
  it("names the methods a known path takes in Allow", async () => {
    const app = await testApp({ config: { dnsResolvers: [dns.address] } });
    const { auth, userId } = await scimBusiness(app);
    for (const [method, path, allow] of [
      ["put", `${scim}/Users`, "GET, POST"],
      ["delete", `${scim}/Groups`, "GET, POST"],
      ["post", `${scim}/Users/${userId}`, "GET, PUT, PATCH, DELETE"],
      ["get", `${scim}/Users/.search`, "POST"],
      ["post", `${scim}/ServiceProviderConfig`, "GET"],
      ["delete", `${scim}/Schemas/x`, "GET"],
    ] as const) {
      const answer = await request(app)[method](path).set(auth).send({});
      expect({ method, path, status: answer.status, allow: answer.headers.allow, schemas: answer.body.schemas }).toEqual({ method, path, status: 405, allow, schemas: [SCIM_ERROR] });
    }
  });
});
