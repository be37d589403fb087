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

  it("keeps the counts of a failed write and writes them with the next", async () => {
    const written: DownloadCount[][] = [];
    let fail = true;
    const errors: number[] = [];
    const counter = groupCommitCounter(
      async (counts) => {
        if (fail) throw new Error("Firestore is down");
        written.push(counts);
      },
      (_error, pending) => errors.push(pending),
    );
    counter.count(entry);
    await new Promise((resolve) => setImmediate(resolve));
    expect(errors).toEqual([1]);
    fail = false;
    counter.count(entry);
    await counter.drain();
    expect(written).toEqual([[{ ...entry, downloads: 2 }]]);
  });
});
