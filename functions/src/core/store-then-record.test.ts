import { storeThenRecord, type ObjectStore } from "./storage";

/** The one "store the object, record it, undo on failure" step of signing and publishing installers. */
describe("storeThenRecord", () => {
  const objects = () => {
    const stored = new Set<string>();
    const store = {
      write: async (path: string) => void stored.add(path),
      delete: async (path: string) => void stored.delete(path),
    } as unknown as ObjectStore;
    return { stored, store };
  };
  const refused = () => Promise.reject(new Error("record refused"));

  it("keeps the object and answers what recording answered", async () => {
    const { stored, store } = objects();
    await expect(storeThenRecord(store, "a", { store: () => store.write("a", Buffer.alloc(0), { contentType: "x" }), record: async () => 7 })).resolves.toBe(7);
    expect([...stored]).toEqual(["a"]);
  });

  it("deletes the object when recording fails, and passes the recording's error on", async () => {
    const { stored, store } = objects();
    await expect(storeThenRecord(store, "a", { store: () => store.write("a", Buffer.alloc(0), { contentType: "x" }), record: refused })).rejects.toThrow("record refused");
    expect([...stored]).toEqual([]);
  });

  it("keeps the object when a record points at it after all, or when that cannot be told", async () => {
    for (const recordedAnyway of [async () => true, () => Promise.reject(new Error("backend down"))]) {
      const { stored, store } = objects();
      await expect(storeThenRecord(store, "a", { store: () => store.write("a", Buffer.alloc(0), { contentType: "x" }), record: refused, recordedAnyway })).rejects.toThrow("record refused");
      expect([...stored]).toEqual(["a"]);
    }
  });

  it("passes the recording's error on even when the deletion fails (the clean-up removes the object later)", async () => {
    const { store } = objects();
    store.delete = () => Promise.reject(new Error("delete failed"));
    await expect(storeThenRecord(store, "a", { store: async () => {}, record: refused })).rejects.toThrow("record refused");
  });

  it("records nothing when storing fails", async () => {
    const { store } = objects();
    const record = jest.fn(async () => 1);
    await expect(storeThenRecord(store, "a", { store: () => Promise.reject(new Error("upload failed")), record })).rejects.toThrow("upload failed");
    expect(record).not.toHaveBeenCalled();
  });
});
