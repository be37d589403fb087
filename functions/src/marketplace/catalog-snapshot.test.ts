import { readFileSync } from "node:fs";
import path from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { decodeSnapshot, encodeSnapshot, UnreadableSnapshot, type ListedModule } from "./catalog-snapshot";
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
    price: { model: "one_time", amount: 999, currency: "eur", interval: null, trialDays: 0, perSeat: false, fallback: "none" },
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

/** A module as a plain object: a snapshot's modules read some of their fields when first asked. */
const plain = (module: ListedModule): ListedModule => ({
  id: module.id,
  name: module.name,
  summary: module.summary,
  tags: module.tags,
  category: module.category,
  publisherId: module.publisherId,
  publisher: module.publisher,
  entitlement: module.entitlement,
  price: module.price,
  updatedAt: module.updatedAt,
  downloads: module.downloads,
  rating: module.rating,
  latestVersion: module.latestVersion,
  versions: module.versions,
});
const withoutDescription = ({ description: _description, ...module }: Module): ListedModule => module;

/** The snapshot's modules and index answer as those it was written from. */
function expectAsWritten(snapshot: NonNullable<Awaited<ReturnType<typeof decodeSnapshot>>>, index: ReturnType<typeof newTextIndex>) {
  expect(snapshot.modules.map(plain)).toEqual(modules.map(withoutDescription));
  const entries = new Map(modules.map((module) => [module.id, module]));
  for (const q of ["chart", "chrts", "plot table", "notes", "stxcky nxtez", "acme"]) {
    const asked = { q, facets: true };
    const [written, loaded] = [index, snapshot.index].map((each) => findModules(each, entries, asked, ratingPrior(modules)));
    expect(loaded.ranked).toEqual(written.ranked);
    expect(loaded.facets()).toEqual(written.facets());
    expect(loaded.suggestion()).toEqual(written.suggestion());
  }
}

/** Decoded from bytes arriving in small chunks, as from storage, with the time it heard first. */
async function decode(bytes: Buffer) {
  const heard: number[] = [];
  const chunks = Array.from({ length: Math.ceil(bytes.length / 100) }, (_, i) => bytes.subarray(i * 100, (i + 1) * 100));
  const snapshot = await decodeSnapshot(chunks, (writtenAt) => heard.push(writtenAt));
  return { snapshot, heard };
}

describe("the search snapshot's bytes (§18)", () => {
  const index = newTextIndex();
  index.addAll(modules);

  it("give back every module as it was but its description, and an index that finds as the one written", async () => {
    const bytes = await encodeSnapshot(1_700_000_200_000, modules, index);
    const { snapshot, heard } = await decode(bytes);
    expect(heard).toEqual([1_700_000_200_000]);
    expect(snapshot!.writtenAt).toBe(1_700_000_200_000);
    expectAsWritten(snapshot!, index);
    // Written again from what it gave, the same snapshot.
    const again = await decode(await encodeSnapshot(1_700_000_200_000, snapshot!.modules, snapshot!.index));
    expect(again.snapshot!.modules.map(plain)).toEqual(snapshot!.modules.map(plain));
  });

  it("of the layout before (the modules as rows), as the previous version wrote them, are read as well", async () => {
    const { snapshot, heard } = await decode(readFileSync(path.join(__dirname, "testdata", "catalog-snapshot-v1.gz")));
    expect(heard).toEqual([1_700_000_200_000]);
    expectAsWritten(snapshot!, index);
  });

  it("are told apart from other bytes, and refused when cut", async () => {
    for (const other of [Buffer.from('{"writtenAt":1,"modules":[]}'), Buffer.alloc(0), gzipSync("MKT-SEARCH-0\n and more"), gzipSync(Buffer.alloc(100))]) {
      expect(await decode(other)).toEqual({ snapshot: null, heard: [] });
    }
    const bytes = await encodeSnapshot(1_700_000_200_000, modules, index);
    await expect(decode(bytes.subarray(0, bytes.length - 9))).rejects.toThrow(new UnreadableSnapshot("unexpected end of file"));
    const plainBytes = gunzipSync(bytes);
    for (const length of [200, plainBytes.length >> 1]) await expect(decode(gzipSync(plainBytes.subarray(0, length)))).rejects.toThrow(UnreadableSnapshot);
  });

  it("pass on a failure of their source as it is", async () => {
    const failure = Object.assign(new Error("No such object"), { code: 404 });
    async function* failing() {
      yield (await encodeSnapshot(1_700_000_200_000, modules, index)).subarray(0, 100);
      throw failure;
    }
    await expect(decodeSnapshot(failing())).rejects.toBe(failure);
  });
});
