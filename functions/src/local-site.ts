/**
 * What Firebase Hosting does in front of the function, for local runs (`npm start`, the tests):
 * the site's files with the headers firebase.json gives them, `/api/**` to the API app, every
 * other page path to index.html (the pages route themselves), and Hosting's reserved
 * `/__/firebase/init.json` with the web app's configuration. The Auth emulator is reached
 * through this same origin, as the pages' Firebase Auth SDK is told to, so that no request of a
 * page leaves the site.
 */
import express, { type Express } from "express";
import { readFileSync } from "node:fs";
import path from "node:path";
import { createProxyMiddleware } from "http-proxy-middleware";
import { minimatch } from "minimatch";

interface HostingConfig {
  headers?: { source: string; headers: { key: string; value: string }[] }[];
}

const FIREBASE_JSON = path.join(__dirname, "..", "..", "firebase.json");

/** The paths the Firebase Auth SDK calls on an emulator (connectAuthEmulator with this origin). */
export const AUTH_EMULATOR_PATHS = ["/identitytoolkit.googleapis.com", "/securetoken.googleapis.com", "/emulator"];

export function localSite(api: Express, options: { hostingDir: string; projectId: string; authEmulatorHost?: string }): Express {
  const hosting = (JSON.parse(readFileSync(FIREBASE_JSON, "utf8")) as { hosting: HostingConfig }).hosting;
  const site = express();
  site.disable("x-powered-by");
  site.use((req, res, next) => {
    for (const rule of hosting.headers ?? []) {
      if (minimatch(req.path, rule.source)) for (const header of rule.headers) res.setHeader(header.key, header.value);
    }
    next();
  });
  if (options.authEmulatorHost) {
    const target = `http://${options.authEmulatorHost}`;
    site.use(createProxyMiddleware({ target, pathFilter: AUTH_EMULATOR_PATHS.map((prefix) => `${prefix}/**`), changeOrigin: true }));
    site.get("/__/firebase/init.json", (_req, res) => {
      res.set("Cache-Control", "no-cache").json({ apiKey: "local-emulator", authDomain: "127.0.0.1", projectId: options.projectId, emulator: true });
    });
  }
  site.use(express.static(options.hostingDir, { index: "index.html" }));
  site.use((req, res, next) => {
    if ((req.method !== "GET" && req.method !== "HEAD") || req.path.startsWith("/api/") || req.path.startsWith("/__/")) return next();
    res.sendFile(path.join(options.hostingDir, "index.html"));
  });
  site.use(api);
  return site;
}
