import { adjacentSwaps, words } from "./search";

describe("words", () => {
  it("splits on anything not a letter or digit, in lower case, in any script", () => {
    expect(words("Draw bar-charts & pie charts (2D).")).toEqual(["draw", "bar", "charts", "pie", "charts", "2d"]);
    expect(words("Über-Tool")).toEqual(["über", "tool"]);
    expect(words("  -- ")).toEqual([]);
  });
});

describe("adjacentSwaps", () => {
  it("swaps each pair of neighbouring letters once, never giving the word back", () => {
    expect(adjacentSwaps("chrat")).toEqual(["hcrat", "crhat", "chart", "chrta"]);
    expect(adjacentSwaps("aab")).toEqual(["aba"]);
    expect(adjacentSwaps("a")).toEqual([]);
  });
});
