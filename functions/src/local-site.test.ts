import express from "express";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import request from "supertest";
import { localSite } from "./local-site";

/** What reaches the function behind Hosting's rewrite: npm start's site must pass what Hosting passes, no more. */
describe("the local site in front of the API", () => {
  const api = express();
  api.get("/api/v1/echo", (req, res) => res.json({ cookie: req.headers.cookie ?? null }));
  const site = localSite(api, { hostingDir: mkdtempSync(path.join(tmpdir(), "site-")), projectId: "demo" });

  it("passes only the __session cookie to /api, as Firebase Hosting does", async () => {
    const both = await request(site).get("/api/v1/echo").set("Cookie", "mv=0123456789abcdef0123456789abcdef; __session=abc; theme=dark");
    expect(both.body).toEqual({ cookie: "__session=abc" });
    const none = await request(site).get("/api/v1/echo").set("Cookie", "mv=0123456789abcdef0123456789abcdef; theme=dark");
    expect(none.body).toEqual({ cookie: null });
    expect((await request(site).get("/api/v1/echo")).body).toEqual({ cookie: null });
  });
});
