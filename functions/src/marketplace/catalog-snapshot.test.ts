import { gzipSync } from "node:zlib";
import { decodeSnapshot, encodeSnapshot, snapshotWrittenAt, type ListedModule } from "./catalog-snapshot";
import { findModules, newTextIndex, ratingPrior, type IndexedModule } from "./ranking";

const publisher = (id: string, displayName = id) => ({ id, displayName, verifiedDomain: null });
type Module = ListedModule & IndexedModule;
const listed = (id: string, fields: Partial<Module> = {}): Module => ({
  id,
  name: id.split(".")[1],
  summary: `About ${id}.`,
  description: "",
  tags: [],
  category: null,
  publisherId: id.split(".")[0],
  publisher: publisher(id.split(".")[0]),
  entitlement: null,
  price: null,
  updatedAt: 1_700_000_000_000,
  downloads: 0,
  rating: null,
  latestVersion: "1.0.0",
  versions: [{ version: "1.0.0", minAppVersion: null, maxAppVersion: null, yanked: false, revoked: false, publishedAt: new Date(1_700_000_000_000), hasIcon: false }],
  ...fields,
});

const modules = [
  listed("contoso.charts", {
    name: "Charts Pro",
    description: "Plot any table.",
    tags: ["charts", "plot"],
    category: "data",
    entitlement: "pro",
    downloads: 50,
    rating: { count: 3, sum: 14 },
    price: { model: "one_time", amount: 999, currency: "eur", interval: null, trialDays: 0, perSeat: false },
    latestVersion: "2.0.0",
    versions: [
      { version: "2.0.0", minAppVersion: "3.0.0", maxAppVersion: null, yanked: false, revoked: false, publishedAt: new Date(1_700_000_100_000), hasIcon: true },
      { version: "1.0.0", minAppVersion: null, maxAppVersion: "2.9.9", yanked: true, revoked: true, publishedAt: null, hasIcon: false },
    ],
  }),
  listed("contoso.notes", { name: "Sticky Notes", tags: ["notes"] }),
  // One publisher whose profile changed between two of its modules' reads: each keeps its own.
  listed("acme.plotter", { publisher: publisher("acme", "Acme") }),
  listed("acme.chart-kit", { publisher: publisher("acme", "Acme Inc."), summary: "Chart widgets, «ünïcode» 📈." }),
];

describe("the search snapshot's bytes (§18)", () => {
  it("give back every module as it was but its description, and an index that finds as the one written", async () => {
    const index = newTextIndex();
    index.addAll(modules);
    const bytes = await encodeSnapshot(1_700_000_200_000, modules, index);
    expect(snapshotWrittenAt(bytes)).toBe(1_700_000_200_000);
    const snapshot = (await decodeSnapshot(bytes))!;
    expect(snapshot.writtenAt).toBe(1_700_000_200_000);
    expect(snapshot.modules).toEqual(modules.map(({ description: _description, ...module }) => module));
    const entries = new Map(modules.map((module) => [module.id, module]));
    for (const q of ["chart", "chrts", "plot table", "notes", "stxcky nxtez", "acme"]) {
      const asked = { q, facets: true };
      const [written, loaded] = [index, snapshot.index!].map((each) => findModules(each, entries, asked, ratingPrior(modules)));
      expect(loaded.ranked).toEqual(written.ranked);
      expect(loaded.facets()).toEqual(written.facets());
      expect(loaded.suggestion()).toEqual(written.suggestion());
    }
  });

  it("are told apart from other bytes", async () => {
    for (const other of [Buffer.from('{"writtenAt":1,"modules":[]}'), Buffer.alloc(0), gzipSync("MKT-SEARCH-0\n and more")]) {
      expect(snapshotWrittenAt(other)).toBeNull();
      expect(await decodeSnapshot(other)).toBeNull();
    }
  });
});
