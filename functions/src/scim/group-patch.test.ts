import { splitGroupPatch } from "./group-patch";
import { ScimError } from "./resources";

describe("splitGroupPatch", () => {
  const op = (op: string, path: string | undefined, value?: unknown) => ({ op, ...(path !== undefined ? { path } : {}), ...(value !== undefined ? { value } : {}) }) as never;

  it("names the members added and removed, in the forms Okta and Entra send", () => {
    expect(splitGroupPatch([op("add", "members", [{ value: "a" }, { value: "b" }]), op("remove", 'members[value eq "c"]'), op("remove", "members", [{ value: "d" }])])).toEqual({
      members: { reset: false, add: ["a", "b"], remove: ["c", "d"] },
      attributes: [],
    });
    expect(splitGroupPatch([op("add", "urn:ietf:params:scim:schemas:core:2.0:Group:members", { value: "a" })]).members).toEqual({ reset: false, add: ["a"], remove: [] });
  });

  it("applies operations in order: a later add undoes a removal, a later removal an add", () => {
    expect(splitGroupPatch([op("remove", 'members[value eq "a"]'), op("add", "members", [{ value: "a" }]), op("add", "members", [{ value: "b" }]), op("remove", 'members[value eq "b"]')]).members).toEqual({ reset: false, add: ["a"], remove: ["b"] });
  });

  it("makes the list whole on a replace, or a removal of every member, after which removals only take from it", () => {
    expect(splitGroupPatch([op("replace", "members", [{ value: "a" }, { value: "b" }]), op("remove", 'members[value eq "a"]')]).members).toEqual({ reset: true, add: ["b"], remove: [] });
    expect(splitGroupPatch([op("remove", "members"), op("add", "members", [{ value: "c" }])]).members).toEqual({ reset: true, add: ["c"], remove: [] });
  });

  it("splits a value object into its members and the rest, and leaves other attributes to the generic patch", () => {
    expect(splitGroupPatch([op("replace", undefined, { displayName: "Staff", members: [{ value: "a" }] }), op("replace", "externalId", "x")])).toEqual({
      members: { reset: true, add: ["a"], remove: [] },
      attributes: [op("replace", undefined, { displayName: "Staff" }), op("replace", "externalId", "x")],
    });
    expect(splitGroupPatch([op("replace", "displayName", "Staff")])).toEqual({ members: null, attributes: [op("replace", "displayName", "Staff")] });
  });

  it("refuses member paths it cannot read, member ids that are no document id, and a value object that is none", () => {
    for (const operations of [[op("add", 'members[value eq "a"]', [{ value: "a" }])], [op("remove", 'members[display eq "Ann"]')], [op("add", "members", [{ value: "../x" }])], [op("add", "members", "a")], [op("replace", undefined, ["a"])]]) {
      expect(() => splitGroupPatch(operations)).toThrow(ScimError);
    }
  });
});
