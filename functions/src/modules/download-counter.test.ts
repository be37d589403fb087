import type { DownloadCount } from "./download-store";
import { groupCommitCounter } from "./download-counter";

describe("group commit of download counts", () => {
  it("answers each download once the write holding it is durable, summing a burst into few writes", async () => {
    const writes: DownloadCount[][] = [];
    let finishWrite: (() => void) | undefined;
    const counter = groupCommitCounter(
      (counts) =>
        new Promise<void>((resolve) => {
          writes.push(counts);
          finishWrite = resolve;
        }),
    );
    const entry = { moduleId: "acme.charts", version: "1.0.0", day: "2026-11-22" };
    const first = counter.count(entry);
    await Promise.resolve();
    // While the first write is under way, the next downloads gather.
    const burst = [counter.count(entry), counter.count(entry), counter.count({ ...entry, version: "2.0.0" })];
    let firstDone = false;
    void first.then(() => (firstDone = true));
    await Promise.resolve();
    expect(firstDone).toBe(false);
    finishWrite!();
    await first;
    await new Promise((resolve) => setImmediate(resolve));
    finishWrite!();
    await Promise.all(burst);
    expect(writes).toEqual([
      [{ ...entry, downloads: 1 }],
      [{ ...entry, downloads: 2 }, { ...entry, version: "2.0.0", downloads: 1 }],
    ]);
  });

  it("fails every download of a write that fails, and goes on with the next", async () => {
    let fail = true;
    const counter = groupCommitCounter(async () => {
      if (fail) throw new Error("Firestore is down");
    });
    const entry = { moduleId: "acme.charts", version: "1.0.0", day: "2026-11-22" };
    await expect(counter.count(entry)).rejects.toThrow("Firestore is down");
    fail = false;
    await expect(counter.count(entry)).resolves.toBeUndefined();
  });
});
