/**
 * What Firebase Hosting does in front of the function, for local runs (`npm start`, the tests):
 * the site's files with the headers firebase.json gives them, `/api/**` to the API app, every
 * other page path to index.html (the pages route themselves), and Hosting's reserved
 * `/__/firebase/init.json` with the web app's configuration. As Hosting does, a request to the
 * function carries no cookie but `__session`, so that what works here works deployed. The Auth emulator is reached
 * through this same origin, as the pages' Firebase Auth SDK is told to, so that no request of a
 * page leaves the site.
 */
import express, { type Express, type RequestHandler } from "express";
import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import path from "node:path";
import { minimatch } from "minimatch";
import { onlyCookie } from "./core/cookies";

interface HostingConfig {
  headers?: { source: string; headers: { key: string; value: string }[] }[];
}

const FIREBASE_JSON = path.join(__dirname, "..", "..", "firebase.json");

/** The one cookie Firebase Hosting passes to a function. */
const HOSTING_COOKIE = "__session";

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
    site.use(proxyTo(options.authEmulatorHost, AUTH_EMULATOR_PATHS));
    site.get("/__/firebase/init.json", (_req, res) => {
      res.set("Cache-Control", "no-cache").json({ apiKey: "local-emulator", authDomain: "127.0.0.1", projectId: options.projectId, emulator: true });
    });
  }
  site.use(express.static(options.hostingDir, { index: "index.html" }));
  site.use((req, res, next) => {
    if ((req.method !== "GET" && req.method !== "HEAD") || req.path.startsWith("/api/") || req.path.startsWith("/__/")) return next();
    res.sendFile(path.join(options.hostingDir, "index.html"));
  });
  // Hosting strips every cookie but __session from what it passes to a function.
  site.use("/api", (req, _res, next) => {
    const kept = onlyCookie(req.headers.cookie, HOSTING_COOKIE);
    if (kept === null) delete req.headers.cookie;
    else req.headers.cookie = kept;
    next();
  });
  site.use(api);
  return site;
}

/**
 * Passes requests under the given path prefixes on to `host` (the Auth emulator) and its answers
 * back, as they are. A few lines of node:http rather than a library: http-proxy (under
 * http-proxy-middleware 3) calls Node's deprecated util._extend, and version 4 needs Node 22.
 */
function proxyTo(host: string, prefixes: string[]): RequestHandler {
  const [hostname, port] = [host.slice(0, host.lastIndexOf(":")), Number(host.slice(host.lastIndexOf(":") + 1))];
  return (req, res, next) => {
    if (!prefixes.some((prefix) => req.path.startsWith(`${prefix}/`))) return next();
    const upstream = httpRequest({ hostname, port, method: req.method, path: req.originalUrl, headers: { ...req.headers, host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", (error) => (res.headersSent ? res.destroy(error) : next(error)));
    req.pipe(upstream);
  };
}
