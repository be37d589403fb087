import { findModules, newTextIndex, pageAfter, ratingPrior, smoothedRating, type IndexedModule, type SearchQuery } from "./ranking";

const entry = (id: string, fields: Partial<IndexedModule> = {}): IndexedModule => ({
  id,
  name: id.split(".")[1],
  summary: "",
  description: "",
  tags: [],
  category: null,
  publisherId: id.split(".")[0],
  entitlement: null,
  price: null,
  updatedAt: 0,
  downloads: 0,
  rating: null,
  ...fields,
});

const catalog = [
  entry("contoso.charts", { name: "Charts Pro", summary: "Bar, line and pie charts for your data.", description: "Plot any table.", tags: ["charts", "plot", "graphs"], category: "data", entitlement: "pro", updatedAt: 3, downloads: 50 }),
  entry("contoso.notes", { name: "Sticky Notes", summary: "Quick notes on your desktop.", tags: ["notes"], category: "productivity", updatedAt: 2, downloads: 500 }),
  entry("acme.plotter", { name: "Plotter", summary: "Plots data on a grid.", tags: ["plot"], category: "data", updatedAt: 1, downloads: 5, rating: { count: 200, sum: 960 } }),
  entry("acme.chart-kit", { name: "Chart Kit", summary: "Chart widgets.", category: "data", updatedAt: 4, rating: { count: 1, sum: 5 } }),
];

function find(query: SearchQuery, entries: IndexedModule[] = catalog) {
  const index = newTextIndex();
  index.addAll(entries);
  const byId = new Map(entries.map((item) => [item.id, item]));
  return findModules(index, byId, query, ratingPrior(byId.values()));
}
const search = (query: SearchQuery) => find(query).ranked;
const ids = (query: SearchQuery) => search(query).map((ranked) => ranked.entry.id);

describe("search and ranking (§18)", () => {
  it("finds by every word, as a whole word, a prefix or within the allowed edits", () => {
    expect(ids({ q: "chart plot" })).toEqual(["contoso.charts"]);
    expect(ids({ q: "chrts" })).toEqual(["contoso.charts"]);
    expect(ids({ q: "Charts Pro" })[0]).toBe("contoso.charts");
    expect(ids({ q: "plot" })).toEqual(expect.arrayContaining(["contoso.charts", "acme.plotter"]));
    expect(ids({ q: "xyz" })).toEqual([]);
    // Under 4 letters no typo is forgiven; from 4, one.
    expect(ids({ q: "nte" })).toEqual([]);
    expect(ids({ q: "notez" })).toEqual(["contoso.notes"]);
    expect(ids({ q: "stciyk notez" })).toEqual([]);
    expect(ids({ q: "stickky nots" })).toEqual(["contoso.notes"]);
  });

  it("counts a swap of two neighbouring letters as one edit (§24)", () => {
    expect(ids({ q: "chrat" })).toEqual(expect.arrayContaining(["contoso.charts", "acme.chart-kit"]));
    expect(ids({ q: "ntoes" })).toEqual(["contoso.notes"]);
    expect(ids({ q: "ntoes sitkcy" })).toEqual([]);
    // Under 4 letters still nothing is forgiven.
    expect(ids({ q: "kti" })).toEqual([]);
  });

  it("suggests another spelling within 2 edits that finds something, only when nothing was found", () => {
    expect(find({ q: "chxrts pxo" }).suggestion()).toBe("charts pro");
    // A word for each word asked, each the nearest that makes the phrase find something.
    expect(find({ q: "stxcky nxtez" }).suggestion()).toBe("sticky notes");
    expect(find({ q: "plottr" }).suggestion()).toBeNull();
    expect(find({ q: "zzzzzz" }).suggestion()).toBeNull();
    // The suggestion keeps the filters: none within them, none suggested.
    expect(find({ q: "nxtes", category: ["data"] }).suggestion()).toBeNull();
  });

  it("puts an exact name or id match first, and weighs the name above the description", () => {
    expect(ids({ q: "chart kit" })[0]).toBe("acme.chart-kit");
    expect(ids({ q: "plotter" })[0]).toBe("acme.plotter");
    expect(ids({ q: "plot" })[0]).toBe("acme.plotter");
  });

  it("counts a module with a price as paid, like one with an entitlement (§20)", () => {
    const priced = entry("acme.paid", { name: "Paid", price: { model: "one_time", amount: 900, currency: "usd", interval: null, trialDays: 0, perSeat: false, fallback: "none" } });
    const all = [...catalog, priced];
    const index = newTextIndex();
    index.addAll(all);
    const entries = new Map(all.map((item) => [item.id, item]));
    const paid = findModules(index, entries, { pricing: "paid", sort: "name" }, ratingPrior(entries.values())).ranked;
    expect(paid.map((ranked) => ranked.entry.id)).toEqual(["contoso.charts", "acme.paid"]);
    expect(findModules(index, entries, {}, ratingPrior(entries.values())).facets().pricing).toEqual([{ value: "free", count: 3 }, { value: "paid", count: 2 }]);
  });

  it("filters, sorts and counts facets over the whole result", () => {
    expect(ids({ category: ["data"], sort: "name" })).toEqual(["acme.chart-kit", "contoso.charts", "acme.plotter"]);
    expect(ids({ pricing: "paid" })).toEqual(["contoso.charts"]);
    expect(ids({ tag: ["plot"], sort: "downloads" })).toEqual(["contoso.charts", "acme.plotter"]);
    expect(ids({})).toEqual(["acme.chart-kit", "contoso.charts", "contoso.notes", "acme.plotter"]);
    // A facet's own counts ignore its own choice, so its other values stay in view.
    expect(find({ category: ["data"] }).facets()).toEqual({
      category: [{ value: "data", count: 3 }, { value: "productivity", count: 1 }],
      publisher: [{ value: "acme", count: 2 }, { value: "contoso", count: 1 }],
      tag: [{ value: "plot", count: 2 }, { value: "charts", count: 1 }, { value: "graphs", count: 1 }],
      pricing: [{ value: "free", count: 2 }, { value: "paid", count: 1 }],
    });
  });

  it("takes several values of a facet as alternatives, and facets together (§24: OR within, AND across)", () => {
    expect(ids({ category: ["data", "productivity"], sort: "name" })).toEqual(["acme.chart-kit", "contoso.charts", "acme.plotter", "contoso.notes"]);
    expect(ids({ category: ["data", "productivity"], publisher: ["contoso"], sort: "name" })).toEqual(["contoso.charts", "contoso.notes"]);
    expect(ids({ tag: ["notes", "graphs"], sort: "name" })).toEqual(["contoso.charts", "contoso.notes"]);
    expect(ids({ category: ["games"] })).toEqual([]);
    const facets = find({ category: ["data"], publisher: ["contoso"] }).facets();
    expect(facets.category).toEqual([{ value: "data", count: 1 }, { value: "productivity", count: 1 }]);
    expect(facets.publisher).toEqual([{ value: "acme", count: 2 }, { value: "contoso", count: 1 }]);
  });

  it("ranks by a smoothed rating: one 5-star review does not outrank two hundred 4.8s", () => {
    const prior = ratingPrior(catalog);
    expect(smoothedRating({ count: 200, sum: 960 }, prior)).toBeGreaterThan(smoothedRating({ count: 1, sum: 5 }, prior));
    expect(ids({ sort: "rating" }).slice(0, 2)).toEqual(["acme.plotter", "acme.chart-kit"]);
  });

  it("pages after a position without repeating or skipping", () => {
    const ranked = search({});
    const first = pageAfter(ranked, undefined, 3);
    const second = pageAfter(ranked, first.items.at(-1)!.key, 3);
    expect([...first.items, ...second.items].map((item) => item.entry.id)).toEqual(ranked.map((item) => item.entry.id));
    expect([first.more, second.more]).toEqual([true, false]);
  });
});
