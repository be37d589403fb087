import fc from "fast-check";
import { listResponse, project, resourceFilter, ScimError, type ScimResource } from "./resources";

const user = (id: string, userName: string, extra: Record<string, unknown> = {}): ScimResource => ({
  schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
  id,
  userName,
  name: { givenName: "Ann", familyName: "Lee" },
  emails: [{ value: userName, type: "work", primary: true }],
  active: true,
  meta: { resourceType: "User", created: `2026-01-0${id}T00:00:00.000Z`, lastModified: `2026-02-0${id}T00:00:00.000Z`, version: 'W/"x"' },
  ...extra,
});
const users = [user("1", "ann@acme.test"), user("2", "bob@acme.test", { active: false }), user("3", "cat@acme.test", { externalId: "EXT-3" })];
const ids = (filter: string) => users.filter(resourceFilter(filter).matches).map((resource) => resource.id);

describe("resourceFilter", () => {
  it("matches attribute names in any case, and userName and emails case-insensitively, ids and externalId exactly", () => {
    expect(ids('UserName eq "ANN@ACME.TEST"')).toEqual(["1"]);
    expect(ids('emails.value co "BOB"')).toEqual(["2"]);
    expect(ids('externalId eq "ext-3"')).toEqual([]);
    expect(ids('externalId eq "EXT-3"')).toEqual(["3"]);
    expect(ids('urn:ietf:params:scim:schemas:core:2.0:User:userName sw "c"')).toEqual(["3"]);
  });

  it("names the equalities an index answers (what identity providers send), with userName lowercased as it is indexed", () => {
    expect(resourceFilter('UserName eq "ANN@ACME.TEST"').indexed).toEqual({ attribute: "userName", value: "ann@acme.test" });
    expect(resourceFilter('externalId eq "EXT-3"').indexed).toEqual({ attribute: "externalId", value: "EXT-3" });
    expect(resourceFilter('id eq "3"').indexed).toEqual({ attribute: "id", value: "3" });
    for (const other of ['userName sw "a"', 'userName eq "a" and active eq true', 'displayName eq "Ann"', "active eq true", undefined]) expect(resourceFilter(other).indexed).toBeNull();
  });

  it("compares meta dates as instants, whatever their precision", () => {
    expect(ids('meta.lastModified gt "2026-02-02T00:00:00Z"')).toEqual(["3"]);
    expect(ids('meta.lastModified ge "2026-02-02T00:00:00Z"')).toEqual(["2", "3"]);
    expect(ids('meta.created lt "2026-01-02T00:00:00.000+00:00"')).toEqual(["1"]);
  });

  it("refuses any text it cannot parse with invalidFilter, and nothing else (property)", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (text) => {
        try {
          users.filter(resourceFilter(text).matches);
        } catch (error) {
          expect(error).toBeInstanceOf(ScimError);
          expect((error as ScimError).scimType).toBe("invalidFilter");
        }
      }),
      { numRuns: 2_000 },
    );
  });
});

describe("project and listResponse", () => {
  it("keeps id and schemas with attributes, drops excludedAttributes, sub-attributes by a dot", () => {
    expect(project(users[0], { attributes: "USERNAME,name.familyName" })).toEqual({ schemas: users[0].schemas, id: "1", userName: "ann@acme.test", name: { familyName: "Lee" } });
    expect(project(users[0], { excludedAttributes: ["emails", "name.givenName", "id"] })).toEqual(expect.objectContaining({ id: "1", name: { familyName: "Lee" } }));
    expect(project(users[0], { excludedAttributes: "emails" })).not.toHaveProperty("emails");
  });

  it("pages 1-based, serves at most 200, and yields each resource once across pages", () => {
    const many = Array.from({ length: 450 }, (_, index) => user(String(index).padStart(3, "0"), `u${index}@acme.test`, { meta: { created: "2026-01-01T00:00:00.000Z" } }));
    expect(listResponse(many, { count: 1000 }).itemsPerPage).toBe(200);
    expect(listResponse(many, { startIndex: 0, count: 0 })).toEqual(expect.objectContaining({ startIndex: 1, itemsPerPage: 0, totalResults: 450 }));
    const seen = [];
    for (let startIndex = 1; startIndex <= 450; startIndex += 37) seen.push(...listResponse(many, { startIndex, count: 37 }).Resources.map((resource) => resource.id));
    expect(new Set(seen).size).toBe(450);
    expect(seen).toHaveLength(450);
  });
});
