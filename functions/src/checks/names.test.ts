import fc from "fast-check";
import { areAlike, foldedNamesOf, foldName, indexKeysOf } from "./names";

describe("foldName", () => {
  it.each([
    ["Charts", "charts"],
    ["char-ts", "charts"],
    ["Char_ts Pro", "chartspro"],
    ["c0ntoso", "contoso"],
    ["he1lo", "hello"],
    ["rnodule", "module"],
    ["vvidget", "widget"],
    ["сharts", "charts"], // Cyrillic с
    ["ｃｈａｒｔｓ", "charts"], // full-width
    ["CHARTS", "charts"],
  ])("%s folds to %s", (name, folded) => expect(foldName(name)).toBe(folded));
});

describe("areAlike", () => {
  it.each([
    ["charts", "charts"],
    ["charts", "chart"],
    ["charts", "chartsx"],
    ["charts", "chsrts"],
    ["charts", "cahrts"],
  ])("%s ~ %s", (a, b) => {
    expect(areAlike(a, b)).toBe(true);
    expect(areAlike(b, a)).toBe(true);
  });

  it.each([
    ["charts", "graphs"],
    ["charts", "chrt"],
    ["charts", "stchar"],
    ["a😀b", "a😀😀bc"],
  ])("%s is not like %s", (a, b) => expect(areAlike(a, b)).toBe(false));

  it("counts a character outside the BMP once", () => {
    expect(areAlike("a😀b", "ab")).toBe(true);
    expect(areAlike("a😀b", "a😁b")).toBe(true);
  });
});

describe("foldedNamesOf", () => {
  it("folds the id's name part and the name, once each", () => {
    expect(foldedNamesOf("acme.charts", "Charts")).toEqual(["charts"]);
    expect(foldedNamesOf("acme.charts", "Acme Graphs")).toEqual(["charts", "acmegraphs"]);
  });
});

describe("indexKeysOf", () => {
  it("lets every pair of alike names share a key (property)", () => {
    const alphabet = fc.constantFrom(..."abcmnrsw😀");
    const word = fc.array(alphabet, { minLength: 1, maxLength: 8 }).map((letters) => letters.join(""));
    fc.assert(
      fc.property(word, word, (a, b) => {
        if (!areAlike(a, b)) return;
        const keys = new Set(indexKeysOf(a));
        expect(indexKeysOf(b).some((key) => keys.has(key))).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });
});
