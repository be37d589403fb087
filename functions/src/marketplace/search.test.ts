import { queryTerm, searchTerms } from "./search";

describe("module search terms", () => {
  const terms = searchTerms("acme.charts", "Charts Pro", "Draw bar-charts & pie charts (2D).");

  it.each(["acme", "ac", "charts", "char", "pro", "bar", "pie", "2d", "draw"])("matches the word or prefix %p", (q) => {
    expect(terms).toContain(queryTerm(q));
  });

  it.each(["harts", "cme", "charts pro", "xyz"])("does not match %p", (q) => {
    const term = queryTerm(q);
    expect(term === null || !terms.includes(term)).toBe(true);
  });

  it("is case-insensitive and splits on anything not a letter or digit", () => {
    expect(queryTerm("CHARTS")).toBe("charts");
    expect(searchTerms("Über-Tool")).toEqual(expect.arrayContaining(["über", "tool", "ü"]));
    expect(queryTerm("a b")).toBeNull();
    expect(queryTerm("...")).toBeNull();
  });
});
