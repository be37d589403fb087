import express from "express";
import request from "supertest";
import { get, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { acceptsGzip, ifNoneMatchMatches, NO_STORE, sendBody, strongEtag, type RouteCaching } from "./http-cache";

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

  it("reads gzip from Accept-Encoding: listed or *, unless q=0", () => {
    for (const header of ["gzip", "deflate, gzip;q=0.5", "GZIP", "*", "br, *;q=0.1"]) expect(acceptsGzip(header)).toBe(true);
    for (const header of [undefined, "", "identity", "br", "gzip;q=0", "gzip; q=0.000", "*;q=0", "x-gzip2"]) expect(acceptsGzip(header)).toBe(false);
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

    describe("gzip of shared bodies answered again", () => {
      // A body served from memory: the same object every time, of 1 KiB or more.
      const page = { items: Array.from({ length: 40 }, (_, i) => ({ id: `acme.module-${i}`, summary: "A module of the catalog, listed." })) };
      const json = JSON.stringify(page);
      const pageApp = (caching: RouteCaching = "public") => express().set("etag", false).get("/", (req, res) => sendBody(req, res, 200, page, caching, policy));
      // supertest (and fetch) would decompress: the bytes as sent are what is asserted.
      const raw = (served: express.Express, headers: Record<string, string>) =>
        new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
          const server = served.listen(0, "127.0.0.1", () => {
            const { port } = server.address() as AddressInfo;
            get({ host: "127.0.0.1", port, path: "/", headers }, (response) => {
              const chunks: Buffer[] = [];
              response.on("data", (chunk: Buffer) => chunks.push(chunk));
              response.on("end", () => (server.close(), resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) })));
            }).on("error", reject);
          });
        });

      it("sends the JSON as is the first time, then its gzip (made once) to clients that accept it, with an ETag of its own", async () => {
        const served = pageApp();
        const first = await raw(served, { "Accept-Encoding": "gzip, deflate, br" });
        expect([first.headers["content-encoding"], first.headers.etag, first.headers.vary, first.body.toString()]).toEqual([undefined, strongEtag(json), "Accept-Encoding", json]);
        const second = await raw(served, { "Accept-Encoding": "gzip, deflate, br" });
        expect(second.headers["content-encoding"]).toBe("gzip");
        expect(gunzipSync(second.body).toString()).toBe(json);
        expect(Number(second.headers["content-length"])).toBe(second.body.length);
        expect(second.body.length).toBeLessThan(json.length / 4);
        expect(second.headers.etag).toBe(`${strongEtag(json).slice(0, -1)}-gzip"`);
        const notModified = await raw(served, { "Accept-Encoding": "gzip", "If-None-Match": second.headers.etag! });
        expect([notModified.status, notModified.headers["content-encoding"], notModified.body.length]).toEqual([304, undefined, 0]);
        // Either representation's tag names the same content: a client holding the JSON as is, or
        // one that no longer asks for gzip, is not sent it again (and is told the tag it holds).
        for (const [tag, accepted] of [[first.headers.etag!, "gzip"], [second.headers.etag!, "identity"]]) {
          const held = await raw(served, { "Accept-Encoding": accepted, "If-None-Match": tag });
          expect([held.status, held.headers.etag, held.body.length]).toEqual([304, tag, 0]);
        }
        // Without gzip in Accept-Encoding (or refused with q=0): the JSON and its own ETag.
        for (const accepted of [undefined, "identity", "gzip;q=0", "br"]) {
          const plain = await raw(served, accepted ? { "Accept-Encoding": accepted } : {});
          expect([plain.headers["content-encoding"], plain.headers.etag, plain.body.toString()]).toEqual([undefined, strongEtag(json), json]);
        }
      });

      it("leaves small bodies, private answers and errors uncompressed", async () => {
        const small = app("public");
        for (let i = 0; i < 2; i += 1) expect((await request(small).get("/").set("Accept-Encoding", "gzip")).headers["content-encoding"]).toBeUndefined();
        const personal = pageApp("public-anonymous");
        for (let i = 0; i < 2; i += 1) {
          const response = await request(personal).get("/").set("Accept-Encoding", "gzip").set("Authorization", "Bearer x");
          expect([response.headers["content-encoding"], response.headers["cache-control"]]).toEqual([undefined, NO_STORE]);
        }
      });
    });
  });
});
