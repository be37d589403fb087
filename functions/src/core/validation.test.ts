import { namesPrototype, pathNamesPrototype, pathOfKey, pathOfString } from "./validation";

describe("names that reach an object's prototype", () => {
  it.each([
    ["__proto__", true],
    ["constructor", true],
    ["Prototype", true],
    ["__PROTO__", true],
    ["proto", false],
    ["constructors", false],
    ["name", false],
  ])("namesPrototype(%j) is %j", (name, expected) => expect(namesPrototype(name)).toBe(expected));

  it.each([
    ["__proto__.X", true],
    ["constructor.prototype.X", true],
    ["name.constructor", true],
    ['members[value eq "x"].__proto__', true],
    ["emails[constructor eq \"x\"]", true],
    ["urn:ietf:params:scim:schemas:core:2.0:User:__proto__", true],
    ["urn:x:prototype", true],
    ['members[value eq "__proto__"]', false],
    ['emails[value eq "a\\"constructor"].value', false],
    ["name.givenName", false],
    ["urn:ietf:params:scim:schemas:core:2.0:User:userName", false],
    ["", false],
  ])("pathNamesPrototype(%j) is %j", (path, expected) => expect(pathNamesPrototype(path)).toBe(expected));

  it("finds a key at any depth, and only keys", () => {
    const parsed = JSON.parse('{"a":[{"b":{"__proto__":{"X":1}}}],"c":"__proto__"}');
    expect(pathOfKey(parsed, namesPrototype)).toBe("a.0.b.__proto__");
    expect(pathOfKey({ c: "__proto__" }, namesPrototype)).toBeNull();
    expect(pathOfString({ c: "__proto__" }, namesPrototype)).toBe("c");
  });
});
