import fc from "fast-check";
import type { DownloadCount } from "./download-store";
import { groupCommitCounter } from "./download-counter";

const entry = { moduleId: "acme.charts", version: "1.0.0", day: "2026-11-22" };

describe("group commit of download counts", () => {
  it("writes a burst as a few sums while the previous write is under way", async () => {
    const writes: DownloadCount[][] = [];
    let finish: (() => void) | undefined;
    const counter = groupCommitCounter((counts) => new Promise<void>((resolve) => ((finish = resolve), writes.push(counts))));
    counter.count(entry);
    await Promise.resolve();
    counter.count(entry);
    counter.count(entry);
    counter.count({ ...entry, version: "2.0.0" });
    finish!();
    const drained = counter.drain();
    await new Promise((resolve) => setImmediate(resolve));
    finish!();
    await drained;
    expect(writes).toEqual([[{ ...entry, downloads: 1 }], [{ ...entry, downloads: 2 }, { ...entry, version: "2.0.0", downloads: 1 }]]);
  });

  it("writes a failed batch again as it was, under the same id, before what was gathered since", async () => {
    const written: [DownloadCount[], string][] = [];
    const tried: string[] = [];
    let fail = true;
    const errors: number[] = [];
    const counter = groupCommitCounter(
      async (counts, id) => {
        tried.push(id);
        if (fail) throw new Error("Firestore did not answer");
        written.push([counts, id]);
      },
      (_error, pending) => errors.push(pending),
    );
    counter.count(entry);
    await new Promise((resolve) => setImmediate(resolve));
    expect(errors).toEqual([1]);
    fail = false;
    counter.count(entry);
    await counter.drain();
    // The first batch once more under its id (a write that landed unseen is refused as already there), then the new one.
    expect(written.map(([counts]) => counts)).toEqual([[{ ...entry, downloads: 1 }], [{ ...entry, downloads: 1 }]]);
    expect(written[0][1]).toBe(tried[0]);
    expect(written[1][1]).not.toBe(tried[0]);
  });

  it("splits a batch Firestore refuses outright by module, so that one module's document holds up no other's", async () => {
    const written: DownloadCount[][] = [];
    const broken = "acme.huge";
    const refused = Object.assign(new Error("document too large"), { code: 3 });
    const counter = groupCommitCounter(
      async (counts) => {
        if (counts.some((count) => count.moduleId === broken)) throw refused;
        written.push(counts);
      },
      () => {},
      (error) => (error as { code?: number }).code === 3,
    );
    counter.count(entry);
    counter.count({ ...entry, moduleId: broken });
    counter.count({ ...entry, moduleId: "acme.maps" });
    await counter.drain();
    expect(written.flat().map((count) => count.moduleId).sort()).toEqual(["acme.charts", "acme.maps"]);
  });

  it("keeps writing other modules' counts while one module's batch keeps failing", async () => {
    const written: string[] = [];
    const counter = groupCommitCounter(async (counts) => {
      if (counts.some((count) => count.moduleId === "acme.huge")) throw Object.assign(new Error("document too large"), { code: 3 });
      written.push(...counts.map((count) => count.moduleId));
    });
    counter.count({ ...entry, moduleId: "acme.huge" });
    await new Promise((resolve) => setImmediate(resolve));
    for (const moduleId of ["acme.charts", "acme.maps"]) {
      counter.count({ ...entry, moduleId });
      await counter.drain();
    }
    expect(written).toEqual(["acme.charts", "acme.maps"]);
  });

  it("counts every download exactly once whatever fails, over random sequences of faults (a write that lands unseen included)", () => {
    return fc.assert(
      fc.asyncProperty(fc.array(fc.record({ downloads: fc.integer({ min: 1, max: 5 }), fault: fc.constantFrom("none", "none", "lost", "landed-unseen") }), { minLength: 1, maxLength: 20 }), async (steps) => {
        // The store: a batch id is recorded with its counts in one commit; the same id again is refused, as create() refuses it.
        const recorded = new Set<string>();
        let total = 0;
        let step = 0;
        const counter = groupCommitCounter(async (counts, id) => {
          // Each write meets the next fault of the sequence; once they are used up, writes land.
          const fault = steps[step]?.fault ?? "none";
          step += 1;
          if (fault === "lost") throw new Error("unavailable");
          if (recorded.has(id)) return;
          recorded.add(id);
          total += counts.reduce((sum, count) => sum + count.downloads, 0);
          if (fault === "landed-unseen") throw new Error("deadline exceeded");
        });
        let expected = 0;
        for (const { downloads } of steps) {
          for (let n = 0; n < downloads; n += 1) counter.count(entry);
          expected += downloads;
          await new Promise((resolve) => setImmediate(resolve));
        }
        for (let round = 0; round < 10 && total < expected; round += 1) await counter.drain();
        expect(total).toBe(expected);
      }),
      { numRuns: 200 },
    );
  });
});
