import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Express } from "express";
import request from "supertest";
import { fetchModule, refreshedRepository } from "../../docs/examples/tuf-client";
import type { Deps } from "../src/deps";
import { revokeModule, unrevokeModule } from "../src/revocations/service";
import { runDeployedFunctions, type DeployedFunctions } from "../src/local-functions";
import { generateTufKey, parsePrivateKeys, signerOf, type TufSigner } from "../src/core/tuf-keys";
import { resignOnlineRoles } from "../src/tuf/changes";
import { initializeRepository } from "../src/tuf/initialize";
import { rotateKeys } from "../src/tuf/rotation";
import { repositoryStatus } from "../src/tuf/status";
import { binNames } from "../src/tuf/rules";
import { warnOfExpiry } from "../src/tuf/expiry-warnings";
import { tufRepositoryStore } from "../src/tuf/repository-store";
import {
  bearer,
  createDeveloper,
  createUser,
  eventually,
  expectProblem,
  operatorDeps,
  otherInstanceApp,
  publishModule,
  resetEmulators,
  testApp,
  testDeps,
  type TestDeveloper,
  type TestUser,
} from "./support/harness";

/**
 * Contract §23 with an off-the-shelf client: tuf-js's Updater (as docs/examples/tuf-client.ts, the
 * desktop app's guide's code, drives it), holding only the first root,
 * against the API on a real port (two instances, each keeping metadata in memory far longer than
 * the 2 s the contract allows), and through a tampering proxy.
 */
const LONG_MEMORY = { memoryCacheMs: 600_000, rateLimit: { perIpPerMinute: 1_000_000, perUserPerMinute: 1_000_000 } };
const DAY_MS = 86_400_000;
const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
const newSigner = () => signerOf(parsePrivateKeys(generateTufKey())[0]);

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; origin: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** A client of one desktop app: its own metadata folder, seeded with 1.root.json only. */
function tufClient(firstRoot: string) {
  const dir = mkdtempSync(path.join(tmpdir(), "tuf-client-"));
  writeFileSync(path.join(dir, "root.json"), firstRoot);
  return {
    dir,
    /** A refreshed updater (one per refresh, as the client code in the desktop-app guide does). */
    refreshed: (apiBase: string, user: TestUser) => refreshedRepository({ apiBase, metadataDir: dir, idToken: () => user.idToken }),
    trustedRootVersion: () => JSON.parse(readFileSync(path.join(dir, "root.json"), "utf8")).signed.version as number,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

describe("the TUF repository (§23) through tuf-js", () => {
  let deps: Deps;
  let one: Express;
  let two: Express;
  let servers: Server[] = [];
  let apiOne: string;
  let apiTwo: string;
  /** The deployed `tufEvents` and `tufMaintenance` (every second here), configured from the environment as deployed. */
  let functions: DeployedFunctions | undefined;
  const startFunctions = async () => {
    functions = await runDeployedFunctions(deps.db, { triggers: ["tufEvents"], schedules: { tufMaintenance: 1_000 }, warn: deps.logger.warn });
  };
  const environment = { ...process.env };
  /** The online key a rotation moves to: deployed beside the first from the start (TUF_ONLINE_KEY with both), as a rotation asks. */
  const nextOnlineKey = generateTufKey();
  const nextOnline = signerOf(parsePrivateKeys(nextOnlineKey)[0]);
  let rootKeys: TufSigner[];
  let targetsKey: TufSigner;
  let firstRoot: string;
  let developer: TestDeveloper;
  let user: TestUser;
  const clients: ReturnType<typeof tufClient>[] = [];

  const newClient = () => {
    const client = tufClient(firstRoot);
    clients.push(client);
    return client;
  };
  const info = async (apiBase: string, target: string, client = newClient()) => (await client.refreshed(apiBase, user)).getTargetInfo(target);

  beforeAll(async () => {
    await resetEmulators();
    deps = await testDeps();
    one = await testApp({ config: LONG_MEMORY });
    two = await otherInstanceApp({ config: LONG_MEMORY });
    const started = await Promise.all([listen(one), listen(two)]);
    servers = started.map((item) => item.server);
    [apiOne, apiTwo] = started.map((item) => `${item.origin}/api/v1`);
    developer = await createDeveloper("acme");
    user = await createUser();
    // A module published before the repository exists is one of its first targets.
    await publishModule(developer, { id: "acme.charts", version: "1.0.0" });
    rootKeys = [newSigner(), newSigner(), newSigner()];
    targetsKey = newSigner();
    expect(await initializeRepository(deps, { root: rootKeys, targets: targetsKey, online: deps.tufOnlineSigners[0] })).toMatchObject({ root: { version: 1 }, bins: { count: 1024 } });
    // A second initialisation changes nothing.
    expect(await initializeRepository(deps, { root: [newSigner(), newSigner(), newSigner()], targets: newSigner(), online: deps.tufOnlineSigners[0] })).toBeNull();
    firstRoot = (await request(one).get("/api/v1/tuf/metadata/1.root.json")).text;
    // The repository follows the outbox through the deployed functions, as on npm start.
    process.env.TUF_ONLINE_KEY = `${environment.TUF_ONLINE_KEY}\n${nextOnlineKey}`;
    await startFunctions();
  }, 60_000);

  afterAll(async () => {
    await functions?.stop();
    process.env = environment;
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    clients.forEach((client) => client.remove());
  });

  it("serves the metadata as files: timestamp.json not cached, versioned files immutable, 404 past the newest root", async () => {
    const timestamp = await request(one).get("/api/v1/tuf/metadata/timestamp.json");
    expect(timestamp.status).toBe(200);
    expect(timestamp.headers["cache-control"]).toBe("no-cache");
    expect(timestamp.body.signed).toMatchObject({ _type: "timestamp", version: 1, meta: { "snapshot.json": { version: 1 } } });
    const root = await request(one).get("/api/v1/tuf/metadata/1.root.json");
    expect(root.headers).toMatchObject({ "cache-control": "public, max-age=31536000, immutable", etag: expect.any(String), "content-type": "application/json; charset=utf-8" });
    expect(root.body.signed).toMatchObject({ _type: "root", consistent_snapshot: true, roles: { root: { threshold: 2 } } });
    expect(root.body.signatures).toHaveLength(3);
    const targets = await request(one).get("/api/v1/tuf/metadata/1.targets.json");
    expect(targets.body.signed.delegations.succinct_roles).toMatchObject({ bit_length: 10, name_prefix: "bins", threshold: 1 });
    const snapshot = await request(one).get("/api/v1/tuf/metadata/1.snapshot.json");
    expect(Object.keys(snapshot.body.signed.meta)).toHaveLength(1 + 1024);
    expect((await request(one).get(`/api/v1/tuf/metadata/1.${binNames()[0]}.json`)).status).toBe(200);
    for (const file of ["2.root.json", "0.root.json", "1.bins-400.json", "1.bins-3ff0.json", "1.nope.json", "snapshot.json", "1.root.json.bak", "..%2F1.root.json", "x".repeat(65)]) {
      const answer = await request(one).get(`/api/v1/tuf/metadata/${file}`);
      expectProblem(answer, 404, "not_found");
      expect(answer.headers["cache-control"]).toBe("private, no-store");
    }
  });

  it("lets tuf-js bootstrap from 1.root.json alone and download a module whose bytes match; the download rules hold", async () => {
    const client = newClient();
    const updater = await client.refreshed(apiOne, user);
    expect((await updater.getTargetInfo("modules/acme.charts/1.0.0.mpkg"))!.custom).toEqual({ moduleId: "acme.charts", version: "1.0.0", publisherId: "acme" });
    const fetched = await fetchModule(updater, "acme.charts", "1.0.0", path.join(client.dir, "charts.mpkg"));
    const download = await request(one).get("/api/v1/modules/download/acme.charts").set(bearer(user));
    expect(sha256(readFileSync(fetched!.path))).toBe(download.body.sha256);
    expect(fetched).toMatchObject({ sha256: download.body.sha256, length: download.body.size });
    expect(await fetchModule(updater, "acme.charts", "9.9.9", path.join(client.dir, "none.mpkg"))).toBeNull();

    // The target path answers a 302 to the signed URL, never cached; a wrong hash or name is a 404.
    const targetPath = `/api/v1/tuf/targets/modules/acme.charts/${download.body.sha256}.1.0.0.mpkg`;
    const redirect = await request(one).get(targetPath).set(bearer(user));
    expect(redirect.status).toBe(302);
    expect(redirect.headers["cache-control"]).toBe("no-store");
    expect(redirect.headers.location).toMatch(/^http/);
    expectProblem(await request(one).get(targetPath), 401, "unauthenticated");
    expectProblem(await request(one).get(targetPath.replace(/[0-9a-f]{64}/, "0".repeat(64))).set(bearer(user)), 404, "version_not_found");
    for (const name of ["1.0.0.mpkg", `${download.body.sha256}.1.0.mpkg`, `${download.body.sha256}.1.0.0.zip`, `${download.body.sha256}.9.9.9.mpkg`]) {
      expectProblem(await request(one).get(`/api/v1/tuf/targets/modules/acme.charts/${name}`).set(bearer(user)), 404, "version_not_found");
    }
    expectProblem(await request(one).get(`/api/v1/tuf/targets/modules/acme.nope/${download.body.sha256}.1.0.0.mpkg`).set(bearer(user)), 404, "module_not_found");
  });

  it("lists a paid module for everyone and downloads it only for the entitled", async () => {
    const bytes = await publishModule(developer, { id: "acme.pro", version: "1.0.0", entitlement: "pro" });
    await eventually(async () => expect((await info(apiOne, "modules/acme.pro/1.0.0.mpkg"))?.hashes).toEqual({ sha256: sha256(bytes) }));
    expectProblem(await request(one).get(`/api/v1/tuf/targets/modules/acme.pro/${sha256(bytes)}.1.0.0.mpkg`).set(bearer(user)), 403, "not_entitled");
  });

  it("shows a new version on the other instance within 2 s, drops a revoked one, takes it back when unrevoked, and keeps a yanked one", async () => {
    const client = newClient();
    await client.refreshed(apiTwo, user); // The second instance has answered before: its memory is warm.
    await publishModule(developer, { id: "acme.charts", version: "1.1.0" });
    await eventually(async () => expect(await info(apiTwo, "modules/acme.charts/1.1.0.mpkg", client)).toBeDefined());

    const before = (await repositoryStatus(deps)).timestamp.version;
    expect((await request(one).post("/api/v1/developers/modules/yank").set(bearer(developer)).send({ moduleId: "acme.charts", version: "1.0.0", reason: "broken" })).status).toBe(200);
    const operator = await operatorDeps();
    await revokeModule(operator, { moduleId: "acme.charts", version: "1.1.0", reason: "malware" });
    await eventually(async () => expect(await info(apiTwo, "modules/acme.charts/1.1.0.mpkg", client)).toBeUndefined());
    expect(await info(apiTwo, "modules/acme.charts/1.0.0.mpkg", client)).toBeDefined();
    // The yank wrote nothing; the revocation one change: bin, snapshot and timestamp.
    expect((await repositoryStatus(deps)).timestamp.version).toBe(before + 1);

    await unrevokeModule(operator, { moduleId: "acme.charts", version: "1.1.0" });
    await eventually(async () => expect(await info(apiTwo, "modules/acme.charts/1.1.0.mpkg", client)).toBeDefined());
    // A whole module revoked takes every version out.
    await revokeModule(operator, { moduleId: "acme.charts", reason: "publisher compromised" });
    await eventually(async () => {
      const updater = await client.refreshed(apiTwo, user);
      expect([await updater.getTargetInfo("modules/acme.charts/1.0.0.mpkg"), await updater.getTargetInfo("modules/acme.charts/1.1.0.mpkg")]).toEqual([undefined, undefined]);
    });
    await unrevokeModule(operator, { moduleId: "acme.charts" });
    await eventually(async () => expect(await info(apiTwo, "modules/acme.charts/1.1.0.mpkg", client)).toBeDefined());
    expect((await repositoryStatus(deps)).pendingChanges).toBe(0);
  });

  it("keeps versions growing under concurrent publishes: a version once served never changes", async () => {
    const seen = new Map<string, string>();
    let lastTimestamp = 0;
    let polling = true;
    const poll = (async () => {
      while (polling) {
        const timestamp = await request(two).get("/api/v1/tuf/metadata/timestamp.json");
        const version = timestamp.body.signed.version as number;
        expect(version).toBeGreaterThanOrEqual(lastTimestamp);
        lastTimestamp = version;
        const snapshotFile = `${timestamp.body.signed.meta["snapshot.json"].version}.snapshot.json`;
        const snapshot = await request(two).get(`/api/v1/tuf/metadata/${snapshotFile}`);
        seen.set(snapshotFile, snapshot.text);
      }
    })();
    // Names far apart, so that the package checks quarantine none of them as look-alikes.
    const names = [["aurora", "basalt"], ["cobalt", "dynamo"], ["ember", "fjord"], ["granite", "harbor"]];
    const developers = await Promise.all(["globex", "initech", "umbrella", "hooli"].map(createDeveloper));
    const published = developers.flatMap((owner, index) => names[index].map((name) => `${owner.publisherId}.${name}`));
    await Promise.all(published.map((id) => publishModule(developers.find((owner) => id.startsWith(`${owner.publisherId}.`))!, { id, name: id.split(".")[1].toUpperCase(), summary: `The ${id} tool.`, version: "1.0.0" })));
    await eventually(async () => expect((await repositoryStatus(deps)).pendingChanges).toBe(0), 10_000);
    polling = false;
    await poll;
    const updater = await newClient().refreshed(apiOne, user);
    for (const id of published) expect(await updater.getTargetInfo(`modules/${id}/1.0.0.mpkg`)).toBeDefined();
    expect(seen.size).toBeGreaterThan(0);
    for (const [file, text] of seen) expect((await request(one).get(`/api/v1/tuf/metadata/${file}`)).text).toBe(text);
  });

  it("re-signs on schedule only what expires within half its period, and everything on `tuf resign`", async () => {
    const status = await repositoryStatus(deps);
    expect(await resignOnlineRoles(deps, { all: false })).toEqual({ bins: 0, snapshot: false, timestamp: false });
    const later = { ...deps, clock: () => new Date(Date.now() + 13 * 3_600_000) };
    expect(await resignOnlineRoles(later, { all: false })).toEqual({ bins: 0, snapshot: false, timestamp: true });
    const muchLater = { ...deps, clock: () => new Date(Date.now() + 4 * DAY_MS) };
    expect(await resignOnlineRoles(muchLater, { all: false })).toEqual({ bins: 1024, snapshot: true, timestamp: true });
    const resigned = await repositoryStatus(deps);
    expect(resigned.timestamp.version).toBeGreaterThan(status.timestamp.version + 1);
    expect(resigned.bins.lowestVersion).toBeGreaterThan(status.bins.lowestVersion);
    expect(await resignOnlineRoles(deps, { all: true })).toEqual({ bins: 1024, snapshot: true, timestamp: true });
    expect(await info(apiOne, "modules/acme.charts/1.1.0.mpkg")).toBeDefined();
  }, 60_000);

  it("writes each versioned file once, serves it only once a committed state names it, and skips what an aborted change left", async () => {
    const store = tufRepositoryStore(deps.db);
    const bin = binNames()[7];
    const ahead = (await store.state())!.bins[bin].version + 1;
    const orphan = { role: bin, version: ahead, json: JSON.stringify({ signatures: [], signed: { left: "by a rotation that failed" } }) };
    // What a rotation that failed before its commit leaves: a file ahead of the state, which nothing names.
    const first = deps.db.batch();
    store.writeFile(first, orphan, new Date());
    await first.commit();
    const served = (version: number) => request(two).get(`/api/v1/tuf/metadata/${version}.${bin}.json`);
    expectProblem(await served(ahead), 404, "not_found");
    // Written once: a second writer of the version fails.
    const second = deps.db.batch();
    store.writeFile(second, { ...orphan, json: "{}" }, new Date());
    await expect(second.commit()).rejects.toMatchObject({ code: 6 });
    // The next change takes the next free version; the one left behind is never served.
    await resignOnlineRoles(deps, { all: true });
    expect((await store.state())!.bins[bin].version).toBe(ahead + 1);
    await eventually(async () => expect((await served(ahead + 1)).status).toBe(200), 3_000);
    expectProblem(await served(ahead), 404, "not_found");
    expect(await info(apiTwo, "modules/acme.charts/1.1.0.mpkg")).toBeDefined();
  }, 60_000);

  it("warns of root or targets expiring within 30 days: in `tuf status`, and once a day by an ERROR line and an email to OPERATOR_EMAILS", async () => {
    const errors: string[] = [];
    let now = Date.now() + 340 * DAY_MS;
    const soon = { ...deps, clock: () => new Date(now), logger: { ...deps.logger, error: (message: string) => errors.push(message) }, config: { ...deps.config, operatorEmails: ["ops@example.test", "oncall@example.test"] } };
    expect((await repositoryStatus(deps)).warnings).toEqual([]);
    expect((await repositoryStatus(soon)).warnings).toEqual([expect.stringMatching(/^root \(version \d+\) expires at \S+, in 2[45] days: renew it with `tuf rotate root`/), expect.stringMatching(/^targets \(version \d+\) expires at \S+, in 2[45] days/)]);
    const mails = async () => (await deps.db.collection("mail").where("message.subject", "==", "TUF root or targets metadata expire soon").get()).docs.map((doc) => doc.get("to")).sort();
    const before = (await mails()).length;
    expect(await warnOfExpiry(soon)).toHaveLength(2);
    // Every sweep of the day after that says nothing more.
    expect(await warnOfExpiry(soon)).toEqual([]);
    expect(errors).toHaveLength(1);
    expect((await mails()).slice(before)).toEqual(["oncall@example.test", "ops@example.test"]);
    now += DAY_MS;
    expect(await warnOfExpiry(soon)).toHaveLength(2);
    expect(errors).toHaveLength(2);
    expect(await warnOfExpiry(deps)).toEqual([]);
  });

  it("walks a rotated root, a rotated targets key and a rotated online key", async () => {
    const client = newClient();
    await client.refreshed(apiOne, user);
    expect(client.trustedRootVersion()).toBe(1);
    // One root key alone is not enough to rotate.
    await expect(rotateKeys(deps, "root", { currentRoot: [rootKeys[0]], next: [newSigner(), newSigner(), newSigner()] })).rejects.toThrow(/1 of the current root's \(2 needed\)/);
    const nextRoot = [newSigner(), newSigner(), newSigner()];
    await rotateKeys(deps, "root", { currentRoot: rootKeys.slice(1), next: nextRoot });
    await client.refreshed(apiOne, user);
    expect(client.trustedRootVersion()).toBe(2);

    const nextTargets = newSigner();
    await rotateKeys(deps, "targets", { currentRoot: nextRoot, targets: targetsKey, next: [nextTargets] });
    // The online key: the deployed functions hold the new key beside the old (TUF_ONLINE_KEY with both) before the rotation.
    const bothKeys = { ...deps, tufOnlineSigners: [...deps.tufOnlineSigners, nextOnline] };
    await rotateKeys(bothKeys, "online", { currentRoot: nextRoot, targets: nextTargets, next: [nextOnline] });
    const rotated = await repositoryStatus(deps);
    expect(rotated).toMatchObject({ root: { version: 4 }, onlineKeyId: nextOnline.keyId, rotating: false });
    const updater = await client.refreshed(apiTwo, user);
    expect(client.trustedRootVersion()).toBe(4);
    expect(await updater.getTargetInfo("modules/acme.charts/1.1.0.mpkg")).toBeDefined();
    // A client that only ever held 1.root.json walks the whole chain.
    expect(await info(apiOne, "modules/acme.charts/1.1.0.mpkg")).toBeDefined();
    // Changes go on, signed with the new key.
    await publishModule(developer, { id: "acme.charts", version: "1.2.0" });
    await eventually(async () => expect(await info(apiTwo, "modules/acme.charts/1.2.0.mpkg", client)).toBeDefined());
    // An instance without the key the repository names leaves changes waiting, and says why.
    await expect(resignOnlineRoles(deps, { all: true })).rejects.toThrow(/TUF_ONLINE_KEY holds no key/);
  }, 60_000);

  describe("served by a tampering mirror", () => {
    let mirror: { server: Server; origin: string };
    let tamper: (pathname: string, upstream: Response) => Promise<Buffer | null> = async () => null;

    beforeAll(async () => {
      // Forwards to the first instance, following redirects itself; `tamper` may replace a body.
      mirror = await listen(async (req, res) => {
        const upstream = await fetch(`${apiOne.replace(/\/api\/v1$/, "")}${req.url}`, { headers: req.headers.authorization ? { Authorization: req.headers.authorization } : {} });
        const replaced = await tamper(new URL(req.url!, "http://mirror").pathname, upstream.clone());
        const body = replaced ?? Buffer.from(await upstream.arrayBuffer());
        res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "application/octet-stream", "content-length": body.length });
        res.end(body);
      });
      servers.push(mirror.server);
    });
    afterEach(() => {
      tamper = async () => null;
      jest.useRealTimers();
    });

    const viaMirror = () => `${mirror.origin}/api/v1`;

    it("refuses a replayed older timestamp (rollback)", async () => {
      const client = newClient();
      const old = (await request(one).get("/api/v1/tuf/metadata/timestamp.json")).text;
      await publishModule(developer, { id: "acme.charts", version: "1.3.0" });
      await eventually(async () => expect(await info(apiOne, "modules/acme.charts/1.3.0.mpkg", client)).toBeDefined());
      tamper = async (pathname) => (pathname.endsWith("/timestamp.json") ? Buffer.from(old) : null);
      await expect(client.refreshed(viaMirror(), user)).rejects.toThrow(/version/i);
    });

    it("refuses an older snapshot served under the newer one's name (rollback)", async () => {
      const current = (await request(one).get("/api/v1/tuf/metadata/timestamp.json")).body.signed.meta["snapshot.json"].version as number;
      const older = (await request(one).get(`/api/v1/tuf/metadata/${current - 1}.snapshot.json`)).text;
      tamper = async (pathname) => (pathname.endsWith(`/${current}.snapshot.json`) ? Buffer.from(older) : null);
      await expect(newClient().refreshed(viaMirror(), user)).rejects.toThrow(/version/i);
    });

    it("refuses a timestamp past its expiry (freeze), with the client's clock two days ahead", async () => {
      const client = newClient();
      await client.refreshed(viaMirror(), user);
      // The clock is the whole process's: the functions, which would re-sign what the later clock
      // finds expired, stop while it runs ahead, so that what the client is served stays as signed.
      await functions?.stop();
      try {
        jest.useFakeTimers({ now: Date.now() + 2 * DAY_MS, doNotFake: ["hrtime", "nextTick", "performance", "queueMicrotask", "setImmediate", "clearImmediate", "setInterval", "clearInterval", "setTimeout", "clearTimeout"] });
        await expect(client.refreshed(viaMirror(), user)).rejects.toThrow(/expired/i);
      } finally {
        jest.useRealTimers();
        await startFunctions();
      }
    });

    it("refuses altered package bytes, and a package of another length", async () => {
      for (const alter of [(bytes: Buffer) => Buffer.from(bytes.map((byte, index) => (index === 100 ? byte ^ 1 : byte))), (bytes: Buffer) => Buffer.concat([bytes, Buffer.from("x")])]) {
        tamper = async (pathname, upstream) => (pathname.includes("/tuf/targets/") && upstream.ok ? alter(Buffer.from(await upstream.arrayBuffer())) : null);
        const client = newClient();
        const updater = await client.refreshed(viaMirror(), user);
        await expect(fetchModule(updater, "acme.charts", "1.1.0", path.join(client.dir, "altered.mpkg"))).rejects.toThrow(/hash|length/i);
      }
    });
  });
});
