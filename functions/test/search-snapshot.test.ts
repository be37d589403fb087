import request from "supertest";
import { createApp } from "../src/app";
import type { Logger } from "../src/core/logger";
import { localDeps } from "../src/local";
import { SNAPSHOT_PATH } from "../src/marketplace/catalog-snapshot";
import { moduleStore } from "../src/marketplace/module-store";
import { marketplaceSearch, writeSearchSnapshot } from "../src/marketplace/search-catalog";
import { createDeveloper, eventually, publishModule, resetEmulators, testApp, testDeps } from "./support/harness";

/** A cold instance starts its search catalog from the snapshot (§18) and is as current as a warm one (§13). */

const api = "/api/v1";

/** A new instance: its own Admin SDK app and Firestore client, so its own catalog, loaded at its first search. */
async function coldInstance(name: string) {
  const logged: { message: string; fields?: Record<string, unknown> }[] = [];
  const record = (message: string, fields?: Record<string, unknown>) => void logged.push({ message, fields });
  const logger: Logger = { info: record, warn: record, error: record };
  const deps = await localDeps({ serviceAccount: JSON.parse(process.env.TEST_SERVICE_ACCOUNT!), env: process.env, logger, appName: name });
  return { app: createApp(deps), logged };
}

const idsOf = (body: { items: { id: string }[] }) => body.items.map((item) => item.id);

describe("a cold instance's search catalog (§18)", () => {
  const queries = ["q=chart", "q=chrts", "q=plot%20chart", "q=notes&sort=name", "q=tool&facets=true"];

  beforeAll(async () => {
    await resetEmulators();
    const acme = await createDeveloper("acme");
    await publishModule(acme, { id: "acme.charts", name: "Charts Pro", summary: "Charts and plots.", version: "1.0.0", tags: ["chart", "plot"] });
    await publishModule(acme, { id: "acme.notes", name: "Notes", summary: "Notes for charts.", version: "1.0.0", tags: ["notes"] });
    await publishModule(acme, { id: "acme.toolbox", name: "Toolbox", summary: "A tool for everything.", version: "1.0.0" });
  }, 60_000);

  it("loads the snapshot with its text index, answers as a warm instance does, and applies what changed since", async () => {
    const warm = await testApp();
    const deps = await testDeps();
    await writeSearchSnapshot(marketplaceSearch(deps), deps.store, deps.clock());
    // Published after the snapshot: the cold instance finds it through the change feed.
    const late = await createDeveloper("late");
    await publishModule(late, { id: "late.chartist", name: "Chartist", summary: "Charts, late.", version: "1.0.0" });

    const cold = await coldInstance("cold-from-index");
    for (const query of queries) {
      const [fromSnapshot, fromWarm] = await Promise.all([request(cold.app).get(`${api}/modules?${query}`), request(warm).get(`${api}/modules?${query}`)]);
      expect(fromSnapshot.status).toBe(200);
      expect(fromSnapshot.body).toEqual(fromWarm.body);
    }
    expect(idsOf((await request(cold.app).get(`${api}/modules?q=chart`)).body)).toContain("late.chartist");
    // Its first search did not wait for the feed's listener, which opened afterwards: a change
    // made elsewhere shows within the feed's delay.
    await publishModule(late, { id: "late.plotter", name: "Plotter", summary: "Plots, later still.", version: "1.0.0" });
    await eventually(async () => expect(idsOf((await request(cold.app).get(`${api}/modules?q=plotter`)).body)).toEqual(["late.plotter"]));
    expect(cold.logged).toContainEqual({ message: "search catalog loaded from its snapshot", fields: expect.objectContaining({ modules: 3, format: "packed" }) });
  }, 60_000);

  it("still loads a snapshot of the JSON format versions before wrote, indexing its entries again", async () => {
    const deps = await testDeps();
    const { entries } = await marketplaceSearch(deps).current();
    const stored = await moduleStore(deps.db).getModules([...entries.keys()]);
    // As they were written: every entry with its description.
    const modules = [...entries.values()].map((entry, i) => ({ ...entry, description: stored[i]?.description ?? "" }));
    await deps.store.delete(SNAPSHOT_PATH);
    await deps.store.write("search/catalog.json", Buffer.from(JSON.stringify({ writtenAt: Date.now(), modules })), { contentType: "application/json" });

    const cold = await coldInstance("cold-legacy");
    const warm = await testApp();
    for (const query of queries) {
      expect((await request(cold.app).get(`${api}/modules?${query}`)).body).toEqual((await request(warm).get(`${api}/modules?${query}`)).body);
    }
    expect(cold.logged).toContainEqual({ message: "search catalog loaded from its snapshot", fields: expect.objectContaining({ modules: 5, format: "legacy" }) });
  }, 60_000);

  it("answers from the collection when the snapshot cannot be read, and says so", async () => {
    const deps = await testDeps();
    const good = await writeSearchSnapshot(marketplaceSearch(deps), deps.store, deps.clock());
    const chunks: Buffer[] = [];
    for await (const chunk of deps.store.read(SNAPSHOT_PATH)) chunks.push(chunk as Buffer);
    // A gzip stream cut short, then one that is not a snapshot at all.
    const cases = [
      ["cold-truncated", Buffer.concat(chunks).subarray(0, good.bytes >> 1), "the search snapshot cannot be read"],
      ["cold-foreign", Buffer.from("{}"), "the search snapshot is of another format or other fields; the next one replaces it"],
    ] as const;
    for (const [name, bytes, said] of cases) {
      await deps.store.write(SNAPSHOT_PATH, bytes, { contentType: "application/gzip" });
      const cold = await coldInstance(name);
      const warm = await testApp();
      for (const query of queries) {
        expect((await request(cold.app).get(`${api}/modules?${query}`)).body).toEqual((await request(warm).get(`${api}/modules?${query}`)).body);
      }
      expect(cold.logged.map((entry) => entry.message)).toEqual(expect.arrayContaining([said, "search catalog built from the modules collection (no recent snapshot)"]));
    }
  }, 60_000);
});
