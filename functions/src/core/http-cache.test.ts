import express from "express";
import request from "supertest";
import { ifNoneMatchMatches, NO_STORE, sendBody, strongEtag, type RouteCaching } from "./http-cache";

describe("HTTP caching rules", () => {
  it("makes a strong ETag of the body's SHA-256, the same for the same bytes only", () => {
    expect(strongEtag("{}")).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(strongEtag("{}")).toBe(strongEtag("{}"));
    expect(strongEtag("{}")).not.toBe(strongEtag("{ }"));
  });

  it("matches If-None-Match by weak comparison: *, lists, W/ prefixes, nothing else", () => {
    const etag = '"abc"';
    expect(ifNoneMatchMatches(undefined, etag)).toBe(false);
    expect(ifNoneMatchMatches("*", etag)).toBe(true);
    expect(ifNoneMatchMatches('"abc"', etag)).toBe(true);
    expect(ifNoneMatchMatches('"x", W/"abc"', etag)).toBe(true);
    expect(ifNoneMatchMatches('"abcd"', etag)).toBe(false);
    expect(ifNoneMatchMatches("abc", etag)).toBe(false);
  });

  describe("sendBody", () => {
    const policy = { maxAgeSeconds: 30, sMaxAgeSeconds: 120 };
    // As createApp sets it up: no ETags but the ones set here.
    const app = (caching: RouteCaching | undefined, status = 200, cacheControl?: string) =>
      express().set("etag", false).get("/", (req, res) => {
        if (cacheControl) res.set("Cache-Control", cacheControl);
        sendBody(req, res, status, { a: 1 }, caching, policy);
      });

    it("shares public answers with an ETag and answers a match with an empty 304", async () => {
      const first = await request(app("public")).get("/");
      expect([first.status, first.headers["cache-control"], first.body]).toEqual([200, "public, max-age=30, s-maxage=120", { a: 1 }]);
      expect(first.headers.etag).toBe(strongEtag(JSON.stringify({ a: 1 })));
      const again = await request(app("public")).get("/").set("If-None-Match", first.headers.etag);
      expect([again.status, again.text]).toEqual([304, ""]);
    });

    it("shares public-anonymous answers only without Authorization, and always varies by it", async () => {
      const anonymous = await request(app("public-anonymous")).get("/");
      expect([anonymous.headers["cache-control"], anonymous.headers.vary]).toEqual(["public, max-age=30, s-maxage=120", "Authorization"]);
      const personal = await request(app("public-anonymous")).get("/").set("Authorization", "Bearer x");
      expect([personal.headers["cache-control"], personal.headers.etag, personal.headers.vary]).toEqual([NO_STORE, undefined, "Authorization"]);
    });

    it("never shares errors, routes without a rule, or answers that set their own Cache-Control", async () => {
      for (const [caching, status, own] of [["public", 404, undefined], [undefined, 200, undefined], ["public", 200, "no-store"]] as const) {
        // The tag a shared answer would carry: a private one is never validated against it.
        const response = await request(app(caching, status, own)).get("/").set("If-None-Match", strongEtag(JSON.stringify({ a: 1 })));
        expect([response.status, response.headers.etag, response.headers["cache-control"]]).toEqual([status, undefined, own ?? NO_STORE]);
      }
    });
  });
});
