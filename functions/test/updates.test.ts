import { createHash } from "node:crypto";
import type { AddressInfo } from "node:net";
import type { RequestListener, Server } from "node:http";
import { connect } from "node:net";
import { Readable } from "node:stream";
// electron-updater's own parsing of a generic provider's channel file, without Electron.
import { parseUpdateInfo, resolveFiles } from "electron-updater/out/providers/Provider";
import { LOCAL_PUBLIC_BASE_URL } from "../src/config";
import { localServer } from "../src/local";
import { cohortOf } from "../src/releases/rules";
import { publishRelease, setRollout, yankRelease } from "../src/releases/service";
import { expectProblem, resetEmulators, testApp, testDeps } from "./support/harness";
import request from "supertest";

/** The update feeds as stock updaters read them (API §8). */
describe("update feeds", () => {
  let server: Server;
  let base: string;
  const bytesOf = new Map<string, Buffer>();

  async function publish(version: string, platform: "win32" | "darwin" | "linux", arch: "x64" | "arm64", channel: "stable" | "beta", rollout = 100) {
    const bytes = Buffer.from(`installer ${version} ${platform} ${arch} ${channel}\n`.repeat(2000));
    const release = await publishRelease(await testDeps(), { version, platform, arch, channel, rollout, fileName: `Setup-${version}.exe`, notes: `Notes of ${version}.` }, { content: Readable.from([bytes]), size: bytes.length });
    bytesOf.set(release.id, bytes);
    return release;
  }

  beforeAll(async () => {
    await resetEmulators();
    await publish("1.0.0", "win32", "x64", "stable");
    await publish("1.1.0", "win32", "x64", "stable", 10);
    await publish("1.2.0-beta.1", "win32", "x64", "beta");
    await publish("2.0.0", "darwin", "arm64", "stable");
    // The app links to PUBLIC_BASE_URL, so it is built once the server's address is known.
    const built: { app?: RequestListener } = {};
    server = localServer((req, res) => built.app!(req, res)).listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
    built.app = await testApp({ config: { publicBaseUrl: base } });
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const inside = Array.from({ length: 500 }, (_, i) => `device-${i}`).find((id) => cohortOf(id, "win32-x64-stable-1.1.0") < 10)!;
  const outside = Array.from({ length: 500 }, (_, i) => `device-${i}`).find((id) => cohortOf(id, "win32-x64-stable-1.1.0") >= 10)!;
  const feed = async (path: string, stagingId?: string) => {
    const response = await fetch(`${base}/updates/electron/${path}`, { headers: stagingId ? { "X-User-Staging-Id": stagingId } : {} });
    return { response, text: await response.text() };
  };

  it("serves a channel file electron-updater parses, pointing at an installer whose bytes match its sha512", async () => {
    const feedUrl = new URL(`${base}/updates/electron/win32/x64/latest.yml`);
    const { response, text } = await feed("win32/x64/latest.yml", inside);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/yaml/);
    const info = parseUpdateInfo(text, "latest.yml", feedUrl);
    expect(info).toMatchObject({ version: "1.1.0", releaseNotes: "Notes of 1.1.0." });
    expect(info.stagingPercentage).toBeUndefined();
    const [file] = resolveFiles(info, feedUrl);
    // The version is a path segment, so electron-updater's derived old-blockmap address resolves (§19).
    expect(file.url.pathname).toBe("/api/v1/updates/electron/win32/x64/files/1.1.0/Setup-1.1.0.exe");
    const installer = Buffer.from(await (await fetch(file.url)).arrayBuffer());
    expect(installer.equals(bytesOf.get("win32-x64-stable-1.1.0")!)).toBe(true);
    expect(createHash("sha512").update(installer).digest("base64")).toBe(file.info.sha512);
  });

  it("follows the cohort rule: a staged release for callers inside, the previous one outside, and the percentage without a staging id", async () => {
    expect(parseUpdateInfo((await feed("win32/x64/latest.yml", outside)).text, "latest.yml", new URL(base)).version).toBe("1.0.0");
    const unstaged = await feed("win32/x64/latest.yml");
    const info = parseUpdateInfo(unstaged.text, "latest.yml", new URL(base));
    expect(info).toMatchObject({ version: "1.1.0", stagingPercentage: 10 });
    expect(unstaged.response.headers.get("cache-control")).toMatch(/^public/);
    expect((await feed("win32/x64/latest.yml", inside)).response.headers.get("cache-control")).toBe("private, no-store");
    expect((await fetch(`${base}/updates/electron/win32/x64/latest.yml?stagingId=${inside}`)).status).toBe(200);
  });

  it("serves each channel file of its platform only", async () => {
    expect(parseUpdateInfo((await feed("win32/x64/beta.yml")).text, "beta.yml", new URL(base)).version).toBe("1.2.0-beta.1");
    expect(parseUpdateInfo((await feed("darwin/arm64/latest-mac.yml")).text, "latest-mac.yml", new URL(base)).version).toBe("2.0.0");
    const app = await testApp();
    expectProblem(await request(app).get("/api/v1/updates/electron/win32/x64/latest-mac.yml"), 404, "not_found");
    expectProblem(await request(app).get("/api/v1/updates/electron/linux/x64/latest-linux.yml"), 404, "release_not_found");
    expectProblem(await request(app).get("/api/v1/updates/electron/win32/x64/nightly.yml"), 400, "invalid_request");
  });

  it("answers the JSON update check with the offered release, 204 when current, 400 for a version that is not semver", async () => {
    const app = await testApp();
    const newer = await request(app).get("/api/v1/updates/win32/x64/stable/1.0.0").set("X-User-Staging-Id", inside);
    expect(newer.status).toBe(200);
    expect(newer.body).toEqual({
      version: "1.1.0",
      name: "1.1.0",
      notes: "Notes of 1.1.0.",
      pub_date: expect.any(String),
      url: expect.stringMatching(/\/api\/v1\/releases\/win32-x64-stable-1\.1\.0\/download$/),
      sha256: createHash("sha256").update(bytesOf.get("win32-x64-stable-1.1.0")!).digest("hex"),
      sha512: createHash("sha512").update(bytesOf.get("win32-x64-stable-1.1.0")!).digest("base64"),
      size: bytesOf.get("win32-x64-stable-1.1.0")!.length,
    });
    expect((await request(app).get("/api/v1/updates/win32/x64/stable/1.0.0").set("X-User-Staging-Id", outside)).status).toBe(204);
    expect((await request(app).get("/api/v1/updates/win32/x64/stable/1.1.0").set("X-User-Staging-Id", inside)).status).toBe(204);
    expectProblem(await request(app).get("/api/v1/updates/win32/x64/stable/latest"), 400, "invalid_request");
  });

  it("links to PUBLIC_BASE_URL whatever Host the request names, or none (HTTP/1.0)", async () => {
    const { port } = server.address() as AddressInfo;
    const raw = (head: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(port, "127.0.0.1", () => socket.write(`${head}Connection: close\r\n\r\n`));
        let text = "";
        socket.on("data", (chunk) => (text += chunk.toString()));
        socket.on("end", () => resolve(text.split("\r\n\r\n").slice(1).join("\r\n\r\n")));
        socket.on("error", reject);
      });
    const expected = `${base}/updates/electron/win32/x64/files/1.0.0/Setup-1.0.0.exe`;
    const forgeries = ["HTTP/1.1\r\nHost: evil.example\r\n", "HTTP/1.1\r\nHost: evil.example\r\nX-Forwarded-Host: evil.example\r\nX-Forwarded-Proto: http\r\n", "HTTP/1.0\r\n"];
    for (const forged of forgeries) {
      const feed = await raw(`GET /api/v1/updates/electron/win32/x64/latest.yml ${forged}X-User-Staging-Id: ${outside}\r\n`);
      expect(feed).toContain(`url: ${expected}`);
      expect(feed).not.toMatch(/evil|undefined/);
      // Without a staging id the check offers the staged 1.1.0 (its percentage is the client's to apply).
      expect(JSON.parse(await raw(`GET /api/v1/updates/win32/x64/stable/0.1.0 ${forged}`)).url).toBe(`${base}/releases/win32-x64-stable-1.1.0/download`);
    }
    // Left unset on the emulators, it is the local stack's own address, not the caller's Host.
    const unset = await request(await testApp()).get("/api/v1/updates/win32/x64/stable/0.1.0").set("Host", "evil.example");
    expect(unset.body.url).toBe(`${LOCAL_PUBLIC_BASE_URL}/releases/win32-x64-stable-1.1.0/download`);
  });

  it("takes a halt and a yank into account on the next request", async () => {
    const deps = await testDeps();
    await setRollout(deps, { releaseId: "win32-x64-stable-1.1.0", percentage: 0 });
    expect(parseUpdateInfo((await feed("win32/x64/latest.yml", inside)).text, "latest.yml", new URL(base)).version).toBe("1.0.0");
    expect(parseUpdateInfo((await feed("win32/x64/latest.yml")).text, "latest.yml", new URL(base)).version).toBe("1.0.0");
    await setRollout(deps, { releaseId: "win32-x64-stable-1.1.0", percentage: 100 });
    await yankRelease(deps, { releaseId: "win32-x64-stable-1.1.0", reason: "broken" });
    expect(parseUpdateInfo((await feed("win32/x64/latest.yml", inside)).text, "latest.yml", new URL(base)).version).toBe("1.0.0");
    expect((await fetch(`${base}/releases/win32-x64-stable-1.1.0/download`, { redirect: "manual" })).status).toBe(410);
  });
});
