import { createHash } from "node:crypto";
import { EventEmitter } from "node:events";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import http, { type IncomingMessage, type RequestOptions, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { CancellationToken, HttpExecutor } from "builder-util-runtime";
import { GenericDifferentialDownloader } from "electron-updater/out/differentialDownloader/GenericDifferentialDownloader";
import { parse } from "yaml";
import { createApp } from "../src/app";
import { localServer } from "../src/local";
import { publishRelease } from "../src/releases/service";
import { fixedBlockmap } from "../../tools/demo/blockmap";
import { operatorDeps, resetEmulators, testDeps } from "./support/harness";

/**
 * Contract §19: differential updates, proved with electron-updater's own differential downloader
 * (GenericDifferentialDownloader) against the local stack: it reads the feed's file URL, finds the
 * installed version's blockmap by writing that version into the new one's address (as
 * electron-updater's AppUpdater does), and downloads only the blocks that changed, one Range
 * request at a time (useMultipleRangeRequest: false), through the API's redirect to a signed URL.
 */

const BLOCK = 64 * 1024;

/**
 * Node's http behind electron-updater's HttpExecutor, with Electron net's redirect events: a 3xx
 * emits "redirect", and followRedirect() sends the request again where the downloader pointed it.
 */
class NodeHttpExecutor extends HttpExecutor<EventEmitter & { end(): void; abort(): void; followRedirect(): void }> {
  requests: { path: string; range: string | undefined }[] = [];
  createRequest(options: RequestOptions, callback: (response: IncomingMessage) => void) {
    const emitter = Object.assign(new EventEmitter(), {
      end: () => send(),
      abort: () => current?.destroy(),
      followRedirect: () => send(),
    });
    let current: http.ClientRequest | undefined;
    const send = () => {
      const headers = options.headers as Record<string, string> | undefined;
      this.requests.push({ path: String(options.path), range: headers?.range });
      current = http.request({ protocol: options.protocol, hostname: options.hostname, port: options.port, path: options.path, method: options.method ?? "GET", headers }, (response) => {
        const status = response.statusCode ?? 0;
        if (status >= 300 && status < 400 && response.headers.location) {
          response.resume();
          emitter.emit("redirect", status, "GET", new URL(response.headers.location, `${options.protocol}//${options.hostname}:${options.port}`).href);
          return;
        }
        callback(response);
      });
      current.on("error", (error) => emitter.emit("error", error));
      current.on("socket", (socket) => emitter.emit("socket", socket));
      current.end();
    };
    return emitter;
  }
}

describe("differential updates (§19)", () => {
  let server: Server;
  let base: string;
  let dir: string;
  const oldBytes = Buffer.alloc(4 * 1024 * 1024);
  for (let i = 0; i < oldBytes.length; i += 4) oldBytes.writeUInt32LE((i * 2654435761) >>> 0, i);
  // The new installer: the same size, with 10% of its 64 blocks changed.
  const newBytes = Buffer.from(oldBytes);
  for (const block of [3, 11, 19, 27, 35, 43]) newBytes.fill(block, block * BLOCK, block * BLOCK + BLOCK);

  beforeAll(async () => {
    await resetEmulators();
    dir = mkdtempSync(path.join(tmpdir(), "differential-"));
    const deps = await operatorDeps();
    for (const [version, bytes] of [["1.0.0", oldBytes], ["1.1.0", newBytes]] as const) {
      await publishRelease(deps, { version, platform: "win32", arch: "x64", fileName: `Marketplace-Setup-${version}.exe` }, { content: Readable.from([bytes]), size: bytes.length, blockmap: fixedBlockmap(bytes) });
    }
    server = localServer(createApp(await testDeps()));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  }, 60_000);
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it("downloads only the changed blocks of the new installer, through the feed's URLs, into identical bytes", async () => {
    const { config } = await testDeps();
    const feed = parse(await (await fetch(`${base}/updates/electron/win32/x64/latest.yml`)).text()) as { version: string; files: { url: string; size: number; sha512: string }[] };
    expect(feed.version).toBe("1.1.0");
    // The feed's URLs are built from PUBLIC_BASE_URL; this test's server listens elsewhere.
    const newUrl = new URL(feed.files[0].url.replace(config.publicBaseUrl, base));
    expect(newUrl.pathname).toBe("/api/v1/updates/electron/win32/x64/files/1.1.0/Marketplace-Setup-1.1.0.exe");
    // What electron-updater does: the new blockmap beside the new file, the old one by writing the installed version in.
    const newBlockMapUrl = `${newUrl.href}.blockmap`;
    const oldBlockMapUrl = newBlockMapUrl.replaceAll("1.1.0", "1.0.0");
    const blockmap = async (url: string) => {
      const answer = await fetch(url);
      expect(answer.status).toBe(200);
      return JSON.parse((await import("node:zlib")).gunzipSync(Buffer.from(await answer.arrayBuffer())).toString("utf8"));
    };
    const [oldBlockMap, newBlockMap] = await Promise.all([blockmap(oldBlockMapUrl), blockmap(newBlockMapUrl)]);

    const oldFile = path.join(dir, "installed.exe");
    const newFile = path.join(dir, "update.exe");
    writeFileSync(oldFile, oldBytes);
    const executor = new NodeHttpExecutor();
    const logged: string[] = [];
    const logger = { info: (message: unknown) => logged.push(String(message)), warn: (message: unknown) => logged.push(String(message)), error: (message: unknown) => logged.push(String(message)) };
    const downloader = new GenericDifferentialDownloader({ size: feed.files[0].size, sha512: feed.files[0].sha512 }, executor, {
      newUrl,
      oldFile,
      newFile,
      logger,
      requestHeaders: null,
      isUseMultipleRangeRequest: false,
      cancellationToken: new CancellationToken(),
    });
    await downloader.download(oldBlockMap, newBlockMap);

    expect(createHash("sha256").update(readFileSync(newFile)).digest("hex")).toBe(createHash("sha256").update(newBytes).digest("hex"));
    // Bytes that came back: the ranges sent to the storage (a redirected request is sent again there).
    const ranges = executor.requests.filter((request) => !request.path.startsWith("/api/v1/")).map((request) => request.range).filter((range): range is string => range !== undefined);
    const fetched = ranges.map((range) => /bytes=(\d+)-(\d+)/.exec(range)!).reduce((sum, match) => sum + Number(match[2]) - Number(match[1]) + 1, 0);
    expect(fetched).toBe(6 * BLOCK);
    expect(fetched).toBeLessThan(newBytes.length / 2);
    // The first range went through the API's redirect; the rest straight to the signed URL.
    expect(executor.requests[0].path).toContain("/updates/electron/win32/x64/files/1.1.0/");
    expect(logged.some((line) => line.startsWith("Redirect to"))).toBe(true);
  }, 60_000);

  it("answers 404 for a blockmap the release has none of, and refuses a blockmap that does not fit the installer", async () => {
    const deps = await operatorDeps();
    await publishRelease(deps, { version: "0.9.0", platform: "linux", arch: "x64", fileName: "Marketplace-0.9.0.AppImage" }, { content: Readable.from([oldBytes]), size: oldBytes.length });
    expect((await fetch(`${base}/updates/electron/linux/x64/files/0.9.0/Marketplace-0.9.0.AppImage.blockmap`, { redirect: "manual" })).status).toBe(404);
    expect((await fetch(`${base}/updates/electron/linux/x64/files/0.9.0/Marketplace-0.9.0.AppImage`, { redirect: "manual" })).status).toBe(302);
    await expect(
      publishRelease(deps, { version: "0.9.1", platform: "linux", arch: "x64", fileName: "Marketplace-0.9.1.AppImage" }, { content: Readable.from([newBytes]), size: newBytes.length, blockmap: fixedBlockmap(newBytes.subarray(1)) }),
    ).rejects.toMatchObject({ code: "invalid_request", detail: expect.stringContaining("add up to") });
    await expect(
      publishRelease(deps, { version: "0.9.1", platform: "linux", arch: "x64", fileName: "Marketplace-0.9.1.AppImage" }, { content: Readable.from([newBytes]), size: newBytes.length, blockmap: Buffer.from("not gzip") }),
    ).rejects.toMatchObject({ code: "invalid_request" });
    expect((await fetch(`${base}/updates/electron/linux/x64/files/0.9.1/Marketplace-0.9.1.AppImage`, { redirect: "manual" })).status).toBe(404);
  });
});
