import { bucketStore, MIN_REMAINING_URL_LIFE_MS } from "../src/core/storage";
import { testBucket } from "./support/harness";

describe("signed read URLs", () => {
  it("hands out the same URL for one object while it has ten minutes left, then signs a new one", async () => {
    // Derived from now: the Storage library refuses to sign a URL whose expiry is past by the real clock.
    let now = Date.now();
    const store = bucketStore(await testBucket(), () => new Date(now));
    await store.write("modules/x/1.0.0/a.mpkg", Buffer.from("bytes"), { contentType: "application/zip" });
    const first = await store.signedReadUrl("modules/x/1.0.0/a.mpkg", { ttlSeconds: 900, fileName: "x.mpkg" });
    now += 900_000 - MIN_REMAINING_URL_LIFE_MS; // exactly ten minutes left
    expect(await store.signedReadUrl("modules/x/1.0.0/a.mpkg", { ttlSeconds: 900, fileName: "x.mpkg" })).toEqual(first);
    // Another name for the download, or another object, is another URL.
    expect((await store.signedReadUrl("modules/x/1.0.0/a.mpkg", { ttlSeconds: 900, fileName: "y.mpkg" })).url).not.toBe(first.url);
    now += 1;
    const renewed = await store.signedReadUrl("modules/x/1.0.0/a.mpkg", { ttlSeconds: 900, fileName: "x.mpkg" });
    expect(renewed.url).not.toBe(first.url);
    expect(renewed.expiresAt.getTime()).toBe(now + 900_000);
  });
});
