import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Express } from "express";
import request from "supertest";
import { refreshedRepository } from "../../docs/examples/tuf-client";
import { createClient, DesktopError, type DesktopClientOptions } from "../../packages/desktop/src";
import { issueCertificate } from "../src/activations/certificate";
import { packagePath } from "../src/core/storage-paths";
import { generateTufKey, parsePrivateKeys, signerOf } from "../src/core/tuf-keys";
import type { Deps } from "../src/deps";
import { runDeployedFunctions, type DeployedFunctions } from "../src/local-functions";
import { revokeModule } from "../src/revocations/service";
import { initializeRepository } from "../src/tuf/initialize";
import type { PackageEntry } from "../../packages/mpkg/src/archive";
import { bearer, createDeveloper, createUser, eventually, operatorDeps, publishModule, resetEmulators, testApp, testBucket, testDeps, type TestDeveloper, type TestUser } from "./support/harness";

/**
 * Contract §29: the desktop app's SDK (packages/desktop) against the API on a real port, with the
 * TUF repository kept by its deployed functions; through a proxy that can stop answering
 * (offline), answer 503, or tamper with what passes.
 */
const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
const newSigner = () => signerOf(parsePrivateKeys(generateTufKey())[0]);

type Tamper = (req: IncomingMessage, res: ServerResponse, forward: () => Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>) => Promise<boolean>;

/** A proxy in front of the API: `tamper` may answer a request itself (true) or let it through. */
async function proxyTo(target: string) {
  const state: { offline: boolean; tamper: Tamper | null; seen: string[] } = { offline: false, tamper: null, seen: [] };
  const forward = (req: IncomingMessage, body: Buffer) =>
    new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>((resolve, reject) => {
      const upstream = httpRequest(`${target}${req.url}`, { method: req.method, headers: { ...req.headers, host: new URL(target).host } }, (answer) => {
        const chunks: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => chunks.push(chunk));
        answer.on("end", () => resolve({ status: answer.statusCode ?? 502, headers: answer.headers, body: Buffer.concat(chunks) }));
      });
      upstream.on("error", reject);
      upstream.end(body);
    });
  const server: Server = createServer((req, res) => {
    if (state.offline) {
      req.socket.destroy();
      return;
    }
    state.seen.push(`${req.method} ${req.url}`);
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", async () => {
      const body = Buffer.concat(chunks);
      const through = () => forward(req, body);
      if (state.tamper && (await state.tamper(req, res, through))) return;
      const answer = await through();
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { state, server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe("the desktop app's SDK (§29)", () => {
  let deps: Deps;
  let app: Express;
  let apiServer: Server;
  let proxy: Awaited<ReturnType<typeof proxyTo>>;
  let functions: DeployedFunctions | undefined;
  let developer: TestDeveloper;
  const folders: string[] = [];

  const newDataDir = () => {
    const folder = mkdtempSync(path.join(tmpdir(), "desktop-sdk-"));
    folders.push(folder);
    return folder;
  };
  const sdk = (user: TestUser, options: Partial<DesktopClientOptions> = {}) =>
    createClient({
      apiBase: `${proxy.origin}/api/v1`,
      dataDir: options.dataDir ?? newDataDir(),
      appVersion: "2.0.0",
      platform: "linux",
      auth: { email: user.email, password: user.password },
      firebase: { apiKey: "test-api-key", authEmulatorHost: process.env.FIREBASE_AUTH_EMULATOR_HOST },
      ...options,
    });

  /** Publishes a version and waits until the TUF repository lists it. */
  async function publish(manifest: Record<string, unknown>, files: PackageEntry[] = []) {
    const bytes = await publishModule(developer, { summary: "A module.", ...manifest }, files, app);
    const metadataDir = newDataDir();
    writeFileSync(path.join(metadataDir, "root.json"), (await request(app).get("/api/v1/tuf/metadata/1.root.json")).text);
    await eventually(async () => {
      const repository = await refreshedRepository({ apiBase: `${proxy.origin}/api/v1`, metadataDir, idToken: () => "" });
      expect(await repository.getTargetInfo(`modules/${manifest.id}/${manifest.version}.mpkg`)).toBeDefined();
    }, 10_000);
    return bytes;
  }

  const refusal = async (promise: Promise<unknown>) => {
    const error = await promise.then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(DesktopError);
    return error as DesktopError;
  };

  beforeAll(async () => {
    await resetEmulators();
    deps = await testDeps();
    app = await testApp({ config: { rateLimit: { perIpPerMinute: 1_000_000, perUserPerMinute: 1_000_000 } } });
    apiServer = createServer(app);
    await new Promise<void>((resolve) => apiServer.listen(0, "127.0.0.1", resolve));
    proxy = await proxyTo(`http://127.0.0.1:${(apiServer.address() as AddressInfo).port}`);
    await initializeRepository(deps, { root: [newSigner(), newSigner(), newSigner()], targets: newSigner(), online: deps.tufOnlineSigners[0] });
    functions = await runDeployedFunctions(deps.db, { triggers: ["tufEvents"], schedules: {}, warn: deps.logger.warn });
    developer = await createDeveloper("acme");
  }, 60_000);

  afterEach(() => {
    proxy.state.offline = false;
    proxy.state.tamper = null;
  });

  afterAll(async () => {
    await functions?.stop();
    await Promise.all([apiServer, proxy.server].map((server) => new Promise((resolve) => server.close(resolve))));
    folders.forEach((folder) => rmSync(folder, { recursive: true, force: true }));
  });

  it("installs, verifies, updates and uninstalls a module, its files unpacked and its device activation freed", async () => {
    await publish({ id: "acme.tool", name: "Tool", version: "1.0.0" }, [{ name: "main.js", content: "module.exports = 1;\n" }]);
    const user = await createUser();
    const client = sdk(user);
    const progress: number[] = [];
    const installed = await client.install("acme.tool", { onProgress: ({ transferred }) => progress.push(transferred) });
    expect(installed).toEqual({ moduleId: "acme.tool", version: "1.0.0", path: expect.stringContaining(path.join("modules", "acme.tool")) });
    expect(readFileSync(path.join(installed.path, "main.js"), "utf8")).toBe("module.exports = 1;\n");
    expect(JSON.parse(readFileSync(path.join(installed.path, "module.json"), "utf8"))).toMatchObject({ id: "acme.tool", version: "1.0.0" });
    expect(progress.at(-1)).toBeGreaterThan(0);
    expect(client.installed()).toEqual([installed]);
    expect(await client.verify("acme.tool")).toEqual({ ok: true });
    // The download is counted once: the TUF repository vouches for the bytes, they are fetched from the download's URL.
    expect(proxy.state.seen.filter((line) => line.includes("/tuf/targets/"))).toEqual([]);

    await publish({ id: "acme.tool", name: "Tool", version: "1.1.0" }, [{ name: "main.js", content: "module.exports = 2;\n" }]);
    expect(await client.checkForUpdates()).toEqual([expect.objectContaining({ moduleId: "acme.tool", installedVersion: "1.0.0", version: "1.1.0" })]);
    const updated = await client.update("acme.tool");
    expect(updated.version).toBe("1.1.0");
    expect(readFileSync(path.join(updated.path, "main.js"), "utf8")).toBe("module.exports = 2;\n");
    expect(existsSync(installed.path)).toBe(false);
    expect(await client.verify("acme.tool")).toEqual({ ok: true });

    const profile = async () => (await request(app).get("/api/v1/users/me").set(bearer(user))).body;
    expect((await profile()).activations[0].devices.map((device: { deviceId: string }) => device.deviceId)).toEqual([client.deviceId]);
    await client.uninstall("acme.tool");
    expect(client.installed()).toEqual([]);
    expect(existsSync(updated.path)).toBe(false);
    expect((await profile()).activations.flatMap((activation: { devices: unknown[] }) => activation.devices)).toEqual([]);
    expect(await client.verify("acme.tool")).toEqual({ ok: false, code: "not_installed", reason: expect.any(String) });
  }, 60_000);

  it("installs the version compatible with the app, and refuses with the API's problem code", async () => {
    await publish({ id: "acme.maps", name: "Maps", version: "1.0.0", maxAppVersion: "1.9.9" });
    await publish({ id: "acme.maps", name: "Maps", version: "2.0.0", minAppVersion: "2.0.0" });
    const user = await createUser();
    expect((await sdk(user, { appVersion: "1.5.0" }).install("acme.maps")).version).toBe("1.0.0");
    expect((await sdk(user, { appVersion: "2.1.0" }).install("acme.maps")).version).toBe("2.0.0");
    const refused = await refusal(sdk(user, { appVersion: "1.5.0" }).install("acme.nothing"));
    expect([refused.code, refused.status]).toEqual(["module_not_found", 404]);
    expect((await refusal(sdk(user, { appVersion: "0.1.0-" }).install("acme.maps"))).code).toBe("invalid_request");
  }, 60_000);

  it("keeps working offline until the certificate expires, and refuses a clock moved back", async () => {
    await publish({ id: "acme.offline", name: "Offline", version: "1.0.0" });
    const user = await createUser();
    let now = new Date();
    const dataDir = newDataDir();
    const client = sdk(user, { dataDir, clock: () => now });
    await client.install("acme.offline");
    proxy.state.offline = true;
    expect(await client.verify("acme.offline")).toEqual({ ok: true });
    expect(await client.entitlements()).toMatchObject({ offline: true, items: expect.any(Array) });
    // A new process of the app, offline from its start, reads what was kept.
    const restarted = sdk(user, { dataDir, clock: () => now });
    expect(await restarted.verify("acme.offline")).toEqual({ ok: true });
    expect((await refusal(restarted.install("acme.offline"))).code).toBe("offline");

    now = new Date(now.getTime() + 31 * 24 * 60 * 60 * 1000);
    expect(await restarted.verify("acme.offline")).toMatchObject({ ok: false, code: "certificate_expired" });
    expect((await refusal(restarted.entitlements())).code).toBe("offline");
    // Moving the clock back does not bring the certificate back.
    now = new Date(now.getTime() - 30 * 24 * 60 * 60 * 1000);
    expect(await restarted.verify("acme.offline")).toMatchObject({ ok: false, code: "clock_rollback" });
  }, 60_000);

  it("refuses a flipped byte in Storage, a replayed TUF timestamp and a swapped download, with nothing installed", async () => {
    const bytes = await publish({ id: "acme.target", name: "Target", version: "1.0.0" });
    const other = await publish({ id: "acme.other", name: "Other", version: "1.0.0" });
    const user = await createUser();
    const dataDir = newDataDir();
    const client = sdk(user, { dataDir });
    const nothingInstalled = () => {
      expect(client.installed()).toEqual([]);
      expect(readdirSync(path.join(dataDir, "modules"))).toEqual([]);
      expect(existsSync(path.join(dataDir, "staging")) ? readdirSync(path.join(dataDir, "staging")) : []).toEqual([]);
    };

    // A flipped byte in the stored package.
    const file = (await testBucket()).file(packagePath("acme.target", "1.0.0", sha256(bytes)));
    const flipped = Buffer.from(bytes);
    flipped[flipped.length >> 1] ^= 0xff;
    await file.save(flipped);
    expect(await refusal(client.install("acme.target"))).toMatchObject({ code: "integrity_failed", message: expect.stringContaining("not the signed package") });
    nothingInstalled();
    await file.save(bytes);

    // The download answer of another package, as a tampering proxy could serve it.
    proxy.state.tamper = async (req, res, forward) => {
      if (!req.url?.includes("/modules/download/acme.target")) return false;
      const real = await forward();
      const swapped = (await request(app).get("/api/v1/modules/download/acme.other").set(bearer(user))).body;
      res.writeHead(real.status, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ ...swapped, moduleId: "acme.target" }));
      return true;
    };
    expect(await refusal(client.install("acme.target"))).toMatchObject({ code: "integrity_failed", message: expect.stringContaining("not the package the TUF repository signed") });
    nothingInstalled();
    expect(sha256(other)).not.toBe(sha256(bytes));

    // An old timestamp replayed once the client has seen a newer one.
    proxy.state.tamper = null;
    const old = await request(app).get("/api/v1/tuf/metadata/timestamp.json");
    const freshDir = newDataDir();
    await publish({ id: "acme.target", name: "Target", version: "1.0.1" });
    const fresh = sdk(user, { dataDir: freshDir });
    await fresh.install("acme.other");
    proxy.state.tamper = async (req, res) => {
      if (!req.url?.endsWith("/tuf/metadata/timestamp.json")) return false;
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(old.text);
      return true;
    };
    const replayed = await refusal(fresh.install("acme.target"));
    expect(replayed).toMatchObject({ code: "integrity_failed", message: expect.stringMatching(/TUF repository's metadata does not verify: .*timestamp/i) });
    expect(fresh.installed().map((module) => module.moduleId)).toEqual(["acme.other"]);
    expect(readdirSync(path.join(freshDir, "modules"))).toEqual(["acme.other"]);
  }, 60_000);

  it("refuses, offline, a version revoked once the revocation list was refreshed", async () => {
    await publish({ id: "acme.revoked", name: "Revoked", version: "1.0.0" });
    const user = await createUser();
    const client = sdk(user);
    await client.install("acme.revoked");
    await revokeModule(await operatorDeps(), { moduleId: "acme.revoked", version: "1.0.0", reason: "malware" });
    await client.refresh();
    proxy.state.offline = true;
    expect(await client.verify("acme.revoked")).toEqual({ ok: false, code: "module_revoked", reason: expect.stringContaining("malware") });
  }, 60_000);

  it("holds a perpetual-fallback holder to the certificate's maxVersion, offline", async () => {
    await publish({ id: "acme.fallback", name: "Fallback", version: "1.1.0" });
    const user = await createUser();
    const dataDir = newDataDir();
    const client = sdk(user, { dataDir });
    await client.install("acme.fallback");
    // The certificate the service issues once only a fallback licence holds the module (§27): it keeps versions up to 1.0.x.
    const now = Math.floor(Date.now() / 1000);
    const holding = (maxVersion: string) =>
      issueCertificate(deps.signingKeys, { sub: user.uid, moduleId: "acme.fallback", version: "1.1.0", deviceId: client.deviceId, entitlement: null, maxVersion, iat: now, exp: now + 86_400 });
    const stateFile = path.join(dataDir, "state.json");
    const withCertificate = async (certificate: string) => {
      const state = JSON.parse(readFileSync(stateFile, "utf8"));
      state.installed["acme.fallback"].certificate = certificate;
      writeFileSync(stateFile, JSON.stringify(state));
    };
    proxy.state.offline = true;
    await withCertificate(await holding("1.0.9"));
    expect(await sdk(user, { dataDir }).verify("acme.fallback")).toEqual({ ok: false, code: "fallback_version_exceeded", reason: expect.stringContaining("1.0.9") });
    await withCertificate(await holding("1.1.0"));
    expect(await sdk(user, { dataDir }).verify("acme.fallback")).toEqual({ ok: true });
  }, 60_000);

  it("refuses a module the business's policy blocks, with the admin's reason", async () => {
    await publish({ id: "acme.blocked", name: "Blocked", version: "1.0.0" });
    const owner = await createUser();
    const business = (await request(app).post("/api/v1/businesses").set(bearer(owner)).send({ name: "Policy Corp" })).body.id as string;
    const policy = await request(app)
      .put(`/api/v1/businesses/${business}/policy`)
      .set(bearer(owner))
      .send({ mode: "open", rules: [{ effect: "block", module: "acme.blocked", reason: "Not approved by IT." }] });
    expect(policy.status).toBe(200);
    const client = sdk(owner);
    const refused = await refusal(client.install("acme.blocked"));
    expect([refused.code, refused.status, refused.details.reason]).toEqual(["blocked_by_policy", 403, "Not approved by IT."]);
    expect(client.installed()).toEqual([]);
  }, 60_000);

  it("refuses a fourth device, with nothing installed on it", async () => {
    await publish({ id: "acme.devices", name: "Devices", version: "1.0.0" });
    const user = await createUser();
    for (let device = 0; device < 3; device += 1) await sdk(user).install("acme.devices");
    const fourth = sdk(user);
    expect((await refusal(fourth.install("acme.devices"))).code).toBe("device_limit_reached");
    expect(fourth.installed()).toEqual([]);
  }, 60_000);

  it("leaves the installed version loadable when the app is killed mid-update", async () => {
    await publish({ id: "acme.crash", name: "Crash", version: "1.0.0" });
    const user = await createUser();
    const dataDir = newDataDir();
    const before = await sdk(user, { dataDir }).install("acme.crash");
    await publish({ id: "acme.crash", name: "Crash", version: "1.1.0" });
    // The update has downloaded, verified and unpacked 1.1.0 and moved it beside 1.0.0; it is killed while confirming it.
    let confirming!: () => void;
    const reachedConfirm = new Promise<void>((resolve) => (confirming = resolve));
    proxy.state.tamper = async (req) => {
      if (req.method !== "POST" || !req.url?.endsWith("/modules/confirm")) return false;
      confirming();
      return true; // never answered
    };
    const child = spawn(process.execPath, ["--import", "tsx", path.join(__dirname, "support", "desktop-install.ts"), `${proxy.origin}/api/v1`, dataDir, user.email, user.password, "acme.crash"], {
      cwd: path.join(__dirname, "..", ".."),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise((resolve) => child.once("exit", resolve));
    await Promise.race([reachedConfirm, exited.then(() => Promise.reject(new Error(`the update ended before its confirm: ${output}`)))]);
    expect(output).toContain("progress");
    expect(readdirSync(path.join(dataDir, "modules", "acme.crash"))).toHaveLength(2);
    child.kill("SIGKILL");
    await exited;
    proxy.state.tamper = null;

    // The app starts again: 1.0.0 is what is installed, and loads; what the killed update left is gone.
    const restarted = sdk(user, { dataDir });
    expect(restarted.installed()).toEqual([before]);
    expect(await restarted.verify("acme.crash")).toEqual({ ok: true });
    expect(JSON.parse(readFileSync(path.join(before.path, "module.json"), "utf8")).version).toBe("1.0.0");
    expect(readdirSync(path.join(dataDir, "modules", "acme.crash"))).toEqual([path.basename(before.path)]);
    expect((await restarted.update("acme.crash")).version).toBe("1.1.0");
  }, 60_000);

  it("stops an install when its signal is aborted, with nothing installed", async () => {
    await publish({ id: "acme.cancel", name: "Cancel", version: "1.0.0" }, [{ name: "payload.bin", content: randomBytes(4 * 1024 * 1024), compress: false }]);
    const user = await createUser();
    const dataDir = newDataDir();
    const client = sdk(user, { dataDir });
    const controller = new AbortController();
    const refused = await refusal(client.install("acme.cancel", { signal: controller.signal, onProgress: ({ transferred }) => transferred > 0 && controller.abort() }));
    expect(refused.code).toBe("cancelled");
    expect(client.installed()).toEqual([]);
    expect(readdirSync(path.join(dataDir, "modules"))).toEqual([]);
    expect((await client.install("acme.cancel")).version).toBe("1.0.0");
  }, 60_000);

  it("retries a 503 after its Retry-After, and gives up after three tries", async () => {
    await publish({ id: "acme.retry", name: "Retry", version: "1.0.0" });
    const user = await createUser();
    let refused = 0;
    proxy.state.tamper = async (req, res) => {
      if (!req.url?.includes("/modules/download/acme.retry") || refused >= 2) return false;
      refused += 1;
      res.writeHead(503, { "Content-Type": "application/problem+json", "Retry-After": "1" });
      res.end(JSON.stringify({ type: "about:blank", title: "Service Unavailable", status: 503, code: "unavailable", detail: "Try again." }));
      return true;
    };
    const client = sdk(user);
    expect((await client.install("acme.retry")).version).toBe("1.0.0");
    expect(refused).toBe(2);
    refused = -10;
    const gaveUp = await refusal(sdk(user).install("acme.retry"));
    expect([gaveUp.code, gaveUp.status]).toEqual(["unavailable", 503]);
  }, 60_000);
});
