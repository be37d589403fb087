import { execFile, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import type { AddressInfo, Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import request from "supertest";
import { freePort } from "../../tools/local-stack";
import { drainDownloadCounters } from "../src/marketplace/download-counter";
import { revokeModule, unrevokeModule } from "../src/revocations/service";
import { bearer, createUser, resetEmulators, testApp, testDeps, type TestDeveloper } from "./support/harness";

const ROOT = path.join(__dirname, "..", "..");
const MPKG = path.join(ROOT, "node_modules", ".bin", "mpkg");
const run = promisify(execFile);

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

describe("npx mpkg (§12)", () => {
  let server: Server;
  let api: string;
  let work: string;
  let developer: TestDeveloper;

  /** Runs the CLI as `npx mpkg` does (node_modules/.bin/mpkg) against the test server. */
  function mpkg(args: string[], options: { env?: Record<string, string>; input?: string; cwd?: string } = {}): Promise<Result> {
    return new Promise((resolve) => {
      const child = spawn(MPKG, args, {
        cwd: options.cwd ?? work,
        env: { ...process.env, MPKG_API: api, MPKG_CONFIG_DIR: path.join(work, "config"), MPKG_TOKEN: "", ...options.env },
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk) => (stdout += chunk));
      child.stderr.on("data", (chunk) => (stderr += chunk));
      child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
      child.stdin.end(options.input ?? "");
    });
  }
  const json = async (args: string[], options?: Parameters<typeof mpkg>[1]) => {
    const result = await mpkg(["--json", ...args], options);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    return JSON.parse(result.stdout);
  };

  function moduleFolder(name: string, manifest: Record<string, unknown>): string {
    const dir = path.join(work, name);
    mkdirSync(path.join(dir, "dist"), { recursive: true });
    mkdirSync(path.join(dir, "private"), { recursive: true });
    writeFileSync(path.join(dir, "module.json"), JSON.stringify(manifest));
    writeFileSync(path.join(dir, "dist", "index.js"), "export const hello = () => 'hello';\n");
    writeFileSync(path.join(dir, "private", "key.pem"), "not for publishing\n");
    writeFileSync(path.join(dir, "debug.log"), "noise\n");
    writeFileSync(path.join(dir, ".mpkgignore"), "private/\n*.log\n");
    return dir;
  }

  beforeAll(async () => {
    await resetEmulators();
    work = mkdtempSync(path.join(tmpdir(), "mpkg-"));
    server = (await testApp()).listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    api = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
    const registered = await request(await testApp())
      .post("/api/v1/developers/auth/register")
      .send({ email: "cli@example.test", password: "long-enough-pw", displayName: "CLI", publisherId: "acme" });
    expect(registered.status).toBe(201);
    developer = { uid: registered.body.developer.id, email: "cli@example.test", password: "long-enough-pw", idToken: registered.body.idToken, publisherId: "acme" };
  }, 60_000);

  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it("has --help everywhere, and exit 2 for a wrong command line", async () => {
    for (const args of [["--help"], ["pack", "--help"], ["publish", "--help"], ["verify", "--help"], ["yank", "--help"], ["tokens", "create", "--help"], ["keys", "generate", "--help"], ["stats", "--help"], ["login", "--help"]]) {
      const result = await mpkg(args);
      expect({ args, code: result.code }).toEqual({ args, code: 0 });
      expect(result.stdout).toContain("Usage: mpkg");
    }
    expect((await mpkg(["pack", "--bogus"])).code).toBe(2);
    expect((await mpkg(["frobnicate"])).code).toBe(2);
    expect((await mpkg(["verify", "x.mpkg"])).code).toBe(2);
    const unreachable = await mpkg(["stats", "acme.maps"], { env: { MPKG_API: `http://127.0.0.1:${await freePort()}/api/v1`, MPKG_TOKEN: `mpt_${"a".repeat(43)}` } });
    expect(unreachable).toMatchObject({ code: 1, stderr: "error: cannot reach the API (ECONNREFUSED): is it running, and are --api / MPKG_API right?\n" });
  }, 60_000);

  it("packs honouring .mpkgignore, and refuses locally, offline, what the service would refuse", async () => {
    const dir = moduleFolder("charts", { id: "acme.charts", name: "Charts", version: "1.0.0", summary: "Charts." });
    const packed = await json(["pack", dir], { env: { MPKG_API: "http://127.0.0.1:9/unreachable" } });
    expect(packed).toEqual({ file: "acme.charts-1.0.0.mpkg", moduleId: "acme.charts", version: "1.0.0", sha256: expect.stringMatching(/^[0-9a-f]{64}$/), size: expect.any(Number), files: 2 });
    const bytes = readFileSync(path.join(work, "acme.charts-1.0.0.mpkg"));
    expect(bytes.includes(Buffer.from("dist/index.js"))).toBe(true);
    expect(bytes.includes(Buffer.from("private/key.pem"))).toBe(false);
    expect(bytes.includes(Buffer.from("debug.log"))).toBe(false);

    // The README's sample module.
    const sample = await json(["pack", path.join(ROOT, "docs", "sample-module"), "--out", path.join(work, "sample.mpkg")]);
    expect(sample).toMatchObject({ moduleId: "contoso.hello", version: "1.0.0", files: 5 });
    expect(readFileSync(path.join(work, "sample.mpkg")).includes(Buffer.from("notes/"))).toBe(false);

    const bad = moduleFolder("bad", { id: "acme.bad", name: "Bad", version: "1.0", summary: "Bad." });
    const refused = await mpkg(["pack", bad]);
    expect(refused).toEqual({ code: 2, stdout: "", stderr: "error: module.json is invalid: version: must be a semver version such as 1.2.3\n" });
    const wrongId = moduleFolder("wrong-id", { id: "Acme Bad", name: "Bad", version: "1.0.0", summary: "Bad." });
    expect((await mpkg(["pack", wrongId])).stderr).toMatch(/^error: module\.json is invalid: id:/);
    const empty = path.join(work, "empty");
    mkdirSync(empty);
    expect(await mpkg(["pack", empty])).toMatchObject({ code: 2, stderr: expect.stringContaining("No module.json") });
  }, 60_000);

  it("publishes with MPKG_TOKEN, then verifies the downloaded bytes and refuses tampered ones", async () => {
    const session = await request(await testApp()).post("/api/v1/developers/tokens").set(bearer(developer)).send({ name: "CI" });
    const env = { MPKG_TOKEN: session.body.token };
    const dir = moduleFolder("maps", { id: "acme.maps", name: "Maps", version: "1.2.0", summary: "Maps." });
    const published = await json(["publish", dir], { env });
    expect(published).toEqual({ moduleId: "acme.maps", version: "1.2.0", sha256: expect.any(String), size: expect.any(Number), state: "published" });
    const listing = await request(await testApp()).get("/api/v1/modules");
    expect(listing.body.items.map((item: { id: string; latestVersion: string }) => [item.id, item.latestVersion])).toContainEqual(["acme.maps", "1.2.0"]);

    // A user downloads it; mpkg checks the bytes against the signature, online and with a saved JWKS.
    const user = await createUser();
    const download = await request(await testApp()).get("/api/v1/modules/download/acme.maps").set(bearer(user));
    const file = path.join(work, "downloaded.mpkg");
    writeFileSync(file, Buffer.from(await (await fetch(download.body.url)).arrayBuffer()));
    const verified = await json(["verify", file, "--signature", download.body.signature]);
    expect(verified).toEqual({ valid: true, moduleId: "acme.maps", version: "1.2.0", publisherId: "acme", sha256: published.sha256, size: published.size, revocationSerial: 0 });
    const jwks = path.join(work, "jwks.json");
    writeFileSync(jwks, JSON.stringify((await request(await testApp()).get("/api/v1/signing-keys")).body));
    writeFileSync(path.join(work, "signature.jws"), download.body.signature);
    const offline = { env: { MPKG_API: "http://127.0.0.1:9/offline" } };
    expect((await mpkg(["verify", file, "--signature", "@signature.jws", "--jwks", jwks], offline)).code).toBe(0);

    // Revoked (§14): refused online, and offline with a saved list; lifted: accepted again.
    await revokeModule(await testDeps(), { moduleId: "acme.maps", version: "1.2.0", reason: "Exfiltrates documents." });
    expect(await mpkg(["verify", file, "--signature", download.body.signature])).toMatchObject({ code: 1, stderr: expect.stringContaining("revoked by the marketplace: Exfiltrates documents.") });
    const revocations = path.join(work, "revocations.json");
    writeFileSync(revocations, JSON.stringify((await request(await testApp()).get("/api/v1/revocations")).body));
    expect(await mpkg(["verify", file, "--signature", "@signature.jws", "--jwks", jwks, "--revocations", revocations], offline)).toMatchObject({ code: 1, stderr: expect.stringContaining("revoked") });
    await unrevokeModule(await testDeps(), { moduleId: "acme.maps", version: "1.2.0" });
    expect((await json(["verify", file, "--signature", download.body.signature])).revocationSerial).toBe(2);

    const tampered = path.join(work, "tampered.mpkg");
    const bytes = readFileSync(file);
    bytes[bytes.length - 30] ^= 0xff;
    writeFileSync(tampered, bytes);
    expect(await mpkg(["verify", tampered, "--signature", download.body.signature])).toMatchObject({ code: 1, stderr: expect.stringContaining("not the signed package") });
    const certificate = (await request(await testApp()).post("/api/v1/modules/confirm").set(bearer(user)).send({ moduleId: "acme.maps", deviceId: "pc-1" })).body.certificate;
    expect(await mpkg(["verify", file, "--signature", certificate])).toMatchObject({ code: 1, stderr: expect.stringContaining("activation+jwt") });

    // The desktop app's offline checks: a certificate and a revocation list, with the saved keys.
    writeFileSync(path.join(work, "certificate.jwt"), certificate);
    expect(await json(["verify-certificate", "@certificate.jwt", "--jwks", jwks, "--device", "pc-1", "--module", "acme.maps"], offline)).toEqual({
      valid: true, userId: user.uid, moduleId: "acme.maps", version: "1.2.0", deviceId: "pc-1", entitlement: null, issuedAt: expect.any(String), expiresAt: expect.any(String),
    });
    expect(await mpkg(["verify-certificate", certificate, "--jwks", jwks, "--device", "pc-2"], offline)).toMatchObject({ code: 1, stderr: expect.stringContaining("another device") });
    expect(await mpkg(["verify-certificate", download.body.signature, "--jwks", jwks], offline)).toMatchObject({ code: 1, stderr: expect.stringContaining("does not verify") });
    const newest = await json(["verify-revocations", revocations, "--jwks", jwks], offline);
    expect(newest).toEqual({ valid: true, serial: 1, issuedAt: expect.any(String), expiresAt: expect.any(String), entries: [expect.objectContaining({ moduleId: "acme.maps", version: "1.2.0", reason: "Exfiltrates documents." })] });
    expect((await json(["verify-revocations"])).serial).toBe(2);
    expect(await mpkg(["verify-revocations", revocations, "--jwks", jwks, "--kept-serial", "2"], offline)).toMatchObject({ code: 1, stderr: expect.stringContaining("older than the one kept") });
    expect((await mpkg(["verify-revocations", jwks, "--jwks", jwks], offline)).code).toBe(2);

    // The same token yanks and reads statistics; it cannot manage tokens.
    expect(await json(["yank", "acme.maps", "1.2.0", "--reason", "broken"], { env })).toEqual(expect.objectContaining({ moduleId: "acme.maps", version: "1.2.0" }));
    await drainDownloadCounters();
    const stats = await json(["stats", "acme.maps"], { env });
    expect(stats.total).toBe(1);
    expect(stats.days.at(-1)).toEqual({ date: new Date().toISOString().slice(0, 10), downloads: 1, versions: { "1.2.0": 1 } });
    expect(await mpkg(["tokens", "list"], { env })).toMatchObject({ code: 2, stderr: expect.stringContaining("mpkg login") });
    expect(await mpkg(["publish", dir], { env: { MPKG_TOKEN: "mpt_revokedOrWrong0000000000000000000000000000" } })).toMatchObject({ code: 1, stderr: expect.stringContaining("access token") });
  }, 90_000);

  it("registers a new publisher, signs in with it, and lists its modules", async () => {
    const config = { MPKG_CONFIG_DIR: path.join(work, "config-new") };
    const registered = await json(["register", "--email", "new@example.test", "--publisher-id", "newco", "--display-name", "New Co", "--password-stdin"], { input: "a-long-password\n", env: config });
    expect(registered).toEqual({ email: "new@example.test", publisherId: "newco", credentials: path.join(work, "config-new", "credentials.json") });
    expect(await mpkg(["register", "--email", "new@example.test", "--publisher-id", "newco2", "--display-name", "Again", "--password-stdin"], { input: "a-long-password\n", env: config })).toMatchObject({
      code: 1, stderr: expect.stringContaining("email"),
    });
    expect(await json(["list"], { env: config })).toEqual([]);
    const folder = moduleFolder("listed", { id: "newco.listed", name: "Listed", version: "2.0.0", summary: "Listed by mpkg list." });
    await json(["publish", folder], { env: config });
    expect(await json(["list"], { env: config })).toEqual([expect.objectContaining({ id: "newco.listed", latestVersion: "2.0.0", versions: [expect.objectContaining({ version: "2.0.0", state: "published" })] })]);
    const text = await mpkg(["list"], { env: config });
    expect(text.stdout).toMatch(/newco\.listed\s+2\.0\.0\s+published\s+passed/);
  }, 60_000);

  it("takes a key id that starts with '-' for a key id, not an option", async () => {
    await json(["login", "--email", developer.email, "--password-stdin"], { input: `${developer.password}\n` });
    const kid = `-${"A".repeat(42)}`;
    for (const args of [["keys", "revoke", kid], ["keys", "revoke", kid, "--json"], ["--json", "keys", "revoke", "--", kid]]) {
      expect(await mpkg(args)).toMatchObject({ code: 1, stderr: expect.stringContaining(`no key '${kid}'`) });
    }
    await json(["logout"]);
  }, 60_000);

  it("logs in with --password-stdin, keeps a refresh token, and manages tokens with it", async () => {
    expect((await mpkg(["login", "--email", developer.email, "--password-stdin"], { input: "wrong-password\n" })).code).toBe(1);
    const login = await json(["login", "--email", developer.email, "--password-stdin"], { input: `${developer.password}\n` });
    expect(login).toEqual({ email: developer.email, publisherId: "acme", credentials: path.join(work, "config", "credentials.json") });
    const saved = JSON.parse(readFileSync(login.credentials, "utf8"));
    expect(saved).toEqual({ api, email: developer.email, refreshToken: expect.any(String) });

    const created = await json(["tokens", "create", "--name", "GitHub Actions", "--expires-in-days", "30"]);
    expect(created.token).toMatch(/^mpt_/);
    const listed = await json(["tokens", "list"]);
    expect(listed).toContainEqual(expect.objectContaining({ id: created.id, name: "GitHub Actions", lastUsedAt: null }));
    expect(JSON.stringify(listed)).not.toContain(created.token);
    const elsewhere = await mpkg(["tokens", "list"], { env: { MPKG_API: "https://marketplace.example.com/api/v1" } });
    expect(elsewhere).toMatchObject({ code: 2, stderr: expect.stringContaining(`is for ${api}, not https://marketplace.example.com/api/v1`) });
    expect(await json(["tokens", "revoke", created.id])).toEqual({ id: created.id, revoked: true });
    expect(await mpkg(["tokens", "revoke", created.id])).toMatchObject({ code: 1, stderr: expect.stringContaining(created.id) });
    expect((await mpkg(["tokens", "create", "--name", "x", "--expires-in-days", "999"])).code).toBe(2);
    expect(await json(["logout"])).toEqual({ loggedOut: true });
    expect((await mpkg(["tokens", "list"])).code).toBe(2);
  }, 60_000);

  it("generates and registers an author key, publishes signed with it, and is refused with it once revoked", async () => {
    await json(["login", "--email", developer.email, "--password-stdin"], { input: `${developer.password}\n` });
    const keyFile = path.join(work, "author-key.json");
    const generated = await json(["keys", "generate", keyFile]);
    expect(generated).toMatchObject({ file: keyFile, kid: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect((await mpkg(["keys", "generate", keyFile])).code).toBe(2);
    expect(await json(["keys", "add", keyFile, "--name", "laptop"])).toMatchObject({ kid: generated.kid, name: "laptop", revokedAt: null });
    expect(await json(["keys", "list"])).toEqual([expect.objectContaining({ kid: generated.kid, name: "laptop" })]);

    const folder = moduleFolder("authored", { id: "acme.authored", name: "Authored", version: "1.0.0", summary: "Signed by its author." });
    const published = await json(["publish", folder, "--key", keyFile]);
    expect(published).toMatchObject({ moduleId: "acme.authored", version: "1.0.0", state: "published" });
    const user = await createUser();
    const download = await request(await testApp()).get("/api/v1/modules/download/acme.authored").set(bearer(user));
    expect(download.body.authorKeyId).toBe(generated.kid);

    expect(await json(["keys", "revoke", generated.kid])).toEqual({ kid: generated.kid, revoked: true });
    const next = moduleFolder("authored-next", { id: "acme.authored", name: "Authored", version: "1.1.0", summary: "Signed by its author." });
    expect(await mpkg(["publish", next, "--key", keyFile])).toMatchObject({ code: 2, stderr: expect.stringContaining("revoked") });
    writeFileSync(path.join(work, "public-only.json"), JSON.stringify({ kty: "OKP", crv: "Ed25519", x: JSON.parse(readFileSync(keyFile, "utf8")).x }));
    expect(await mpkg(["publish", next, "--key", path.join(work, "public-only.json")])).toMatchObject({ code: 2, stderr: expect.stringContaining("no private key") });
    await json(["logout"]);
  }, 60_000);

  it("installs on its own from `npm pack` and runs without the project", async () => {
    const packDir = mkdtempSync(path.join(tmpdir(), "mpkg-pack-"));
    const { stdout } = await run("npm", ["pack", "--silent", "--pack-destination", packDir, "--workspace", "packages/mpkg"], { cwd: ROOT });
    const tarball = path.join(packDir, stdout.trim().split("\n").at(-1)!);
    const prefix = path.join(packDir, "installed");
    await run("npm", ["install", "--global", "--offline", "--no-audit", "--no-fund", "--prefix", prefix, tarball], { cwd: packDir });
    const bin = path.join(prefix, "bin", "mpkg");
    const help = await run(bin, ["--help"], { cwd: packDir });
    expect(help.stdout).toContain("Usage: mpkg");
    const dir = moduleFolder("standalone", { id: "acme.standalone", name: "Standalone", version: "0.1.0", summary: "Packed by the installed CLI." });
    const packed = JSON.parse((await run(bin, ["--json", "pack", dir, "--out", path.join(packDir, "out.mpkg")], { cwd: packDir })).stdout);
    expect(packed).toMatchObject({ moduleId: "acme.standalone", files: 2 });
    await expect(run(bin, ["pack", path.join(work, "bad")], { cwd: packDir })).rejects.toMatchObject({ code: 2 });
  }, 120_000);
});
