import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { allFree, collectionsOf, dumpFirestore, listStorage, npmStart, REPOSITORY, until, untilReady, type Started } from "./support/npm-start";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";
import { freePort } from "../../tools/local-stack";
import { fetchModule, refreshedRepository } from "../../docs/examples/tuf-client";

/**
 * `npm start` as a person runs it, on ports of its own (`--ports`) and a data folder of its own
 * (`--data-dir`), without the test run's emulators: taken ports, signals, data kept across
 * restarts, and the Hosting folder with the API reference.
 */
const HOST = "127.0.0.1";

describe("npm start", () => {
  let ports: number[];
  let dataDir: string;
  const running: Started[] = [];

  beforeAll(() => {
    dataDir = path.join(mkdtempSync(path.join(tmpdir(), "marketplace-start-")), "emulator-data");
  });
  // Fresh ports for every test: a port found free long before it is used may meanwhile be the
  // local end of some connection (the emulators' own), and the Firestore emulator then cannot bind it.
  beforeEach(async () => {
    ports = await Promise.all(Array.from({ length: 4 }, freePort));
  });

  afterAll(async () => {
    for (const started of running) started.npm.kill("SIGKILL");
    rmSync(path.dirname(dataDir), { recursive: true, force: true });
  });

  const start = async (extra: string[] = [], env: NodeJS.ProcessEnv = {}) => {
    const started = npmStart(["--ports", ports.join(","), "--data-dir", dataDir, ...extra], env);
    running.push(started);
    await untilReady(started);
    return started;
  };
  const base = () => `http://${HOST}:${ports[0]}/api/v1`;
  /** How many entries the stack's audit log holds, counted by the Firestore emulator itself. */
  const auditLogSize = async () => {
    const answer = await fetch(`http://${HOST}:${ports[1]}/v1/projects/demo-marketplace/databases/(default)/documents:runAggregationQuery`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer owner" },
      body: JSON.stringify({ structuredAggregationQuery: { structuredQuery: { from: [{ collectionId: "auditLog" }] }, aggregations: [{ alias: "n", count: {} }] } }),
    });
    const [row] = (await answer.json()) as { result: { aggregateFields: { n: { integerValue: string } } } }[];
    return Number(row.result.aggregateFields.n.integerValue);
  };
  const login = (email: string, password: string) =>
    fetch(`${base()}/developers/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password }),
    });

  it("names every taken port, exits non-zero and leaves nothing running", async () => {
    const blockers: Server[] = await Promise.all(
      [ports[0], ports[2]].map(
        (port) => new Promise<Server>((resolve) => {
          const server = createServer();
          server.listen(port, HOST, () => resolve(server));
        }),
      ),
    );
    try {
      const started = npmStart(["--ports", ports.join(","), "--data-dir", dataDir]);
      expect(await started.exited).toBe(1);
      const lines = started.output().split("\n").filter((text) => text.startsWith("Port "));
      expect(lines).toEqual([
        `Port ${ports[0]} (the API and Hosting) on ${HOST} is in use by another program (another \`npm start\`?): stop it.`,
        `Port ${ports[2]} (the Auth emulator) on ${HOST} is in use by another program (another \`npm start\`?): stop it, or set FIREBASE_AUTH_EMULATOR_HOST=${HOST}:${ports[2]} to use the emulator that is there.`,
      ]);
      // And how to run beside it instead.
      expect(started.output()).toContain("npm start -- --ports <api>,<firestore>,<auth>,<storage> --data-dir <folder>");
      expect(await allFree([ports[1], ports[3]])).toBe(true);
    } finally {
      await Promise.all(blockers.map((server) => new Promise((resolve) => server.close(resolve))));
    }
  }, 60_000);

  it("keeps data across a restart, stops whole on SIGTERM to npm, and starts empty with --fresh", async () => {
    const first = await start();
    const register = await fetch(`${base()}/developers/auth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "kept@example.com", password: "kept-password", displayName: "Kept", publisherId: "kept" }),
    });
    expect(register.status).toBe(201);
    const kept = (await register.json()) as { idToken: string; refreshToken: string };
    const dana = (await (await login("dana@example.com", "marketplace-demo")).json()) as { idToken: string; refreshToken: string };
    // The TUF repository (§23) is there as soon as the API is: tuf-js, holding only 1.root.json,
    // downloads a demo module with the bytes the download endpoint describes.
    expect(first.output()).toContain("TUF repository initialised");
    const firstRoot = await (await fetch(`${base()}/tuf/metadata/1.root.json`)).text();
    const metadataDir = mkdtempSync(path.join(tmpdir(), "tuf-start-"));
    writeFileSync(path.join(metadataDir, "root.json"), firstRoot);
    const fetched = await fetchModule(await refreshedRepository({ apiBase: base(), metadataDir, idToken: () => dana.idToken }), "contoso.notes", "1.0.0", path.join(metadataDir, "notes.mpkg"));
    const described = (await (await fetch(`${base()}/modules/download/contoso.notes`, { headers: { authorization: `Bearer ${dana.idToken}` } })).json()) as { sha256: string };
    expect(createHash("sha256").update(readFileSync(fetched!.path)).digest("hex")).toBe(described.sha256);
    const auditEntries = await auditLogSize();
    expect(auditEntries).toBeGreaterThan(0);
    // The downloads just made counted and folded into the analytics' months (every 2 s here), so that what is kept is settled.
    const documentsBefore = await until("the downloads to be counted and folded", async () => {
      const documents = await dumpFirestore(`${HOST}:${ports[1]}`, "demo-marketplace");
      const collections = collectionsOf(documents);
      return collections.includes("metricMonths") && !collections.includes("pendingCounts") ? documents : null;
    }, 20_000);
    const objectsBefore = await listStorage(`http://${HOST}:${ports[3]}`, "demo-marketplace.appspot.com");
    // The round trip below covers every collection this data has, subcollections included.
    expect(collectionsOf(documentsBefore).length).toBeGreaterThanOrEqual(15);
    expect(objectsBefore.size).toBeGreaterThan(5);

    first.npm.kill("SIGTERM");
    await first.exited;
    await until("every port to be free", () => allFree(ports), 30_000);
    expect(first.output()).toContain(`Data kept in`);

    const second = await start();
    expect(second.output()).toContain("Data loaded from");
    // Export → import keeps every document of every collection, field for field, and every object.
    const documentsAfter = await dumpFirestore(`${HOST}:${ports[1]}`, "demo-marketplace");
    expect(collectionsOf(documentsAfter)).toEqual(collectionsOf(documentsBefore));
    expect(Object.fromEntries(documentsAfter)).toEqual(Object.fromEntries(documentsBefore));
    expect(Object.fromEntries(await listStorage(`http://${HOST}:${ports[3]}`, "demo-marketplace.appspot.com"))).toEqual(Object.fromEntries(objectsBefore));
    // The repository is kept, not made again.
    expect(second.output()).not.toContain("TUF repository initialised");
    expect(await (await fetch(`${base()}/tuf/metadata/1.root.json`)).text()).toBe(firstRoot);
    expect((await login("kept@example.com", "kept-password")).status).toBe(200);
    // Sessions survive the restart: ID tokens from before it, and refresh tokens traded after it,
    // for a user the seed never touches and for a demo user it does.
    for (const session of [kept, dana]) {
      const me = await fetch(`${base()}/developers/tokens`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${session.idToken}` }, body: JSON.stringify({ name: "after restart" }) });
      expect({ status: me.status, body: me.status === 201 ? null : await me.text() }).toEqual({ status: 201, body: null });
      const refreshed = await fetch(`${base()}/developers/auth/refresh`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ refreshToken: session.refreshToken }) });
      const { idToken } = (await refreshed.json()) as { idToken: string };
      expect((await fetch(`${base()}/developers/me`, { headers: { authorization: `Bearer ${idToken}` } })).status).toBe(200);
    }
    // The demo seed stays idempotent on top of kept data, in the audit log too (the two tokens above are the only new entries).
    expect(await auditLogSize()).toBe(auditEntries + 2);
    expect((await login("dana@example.com", "marketplace-demo")).status).toBe(200);
    second.npm.kill("SIGTERM");
    await until("every port to be free", () => allFree(ports), 30_000);

    const fresh = await start(["--fresh"]);
    expect(fresh.output()).not.toContain("Data loaded from");
    const gone = await login("kept@example.com", "kept-password");
    expect(gone.status).toBe(401);
    expect(((await gone.json()) as { code: string }).code).toBe("invalid_credentials");
    fresh.npm.kill("SIGTERM");
    await until("every port to be free", () => allFree(ports), 30_000);
  }, 180_000);

  it("runs the desktop app example (§29): installs with the SDK, verifies with the stack stopped, updates and uninstalls", async () => {
    const appData = mkdtempSync(path.join(tmpdir(), "desktop-app-"));
    // As the guide runs it: plain Node importing @marketplace/desktop (the bundle npm start builds).
    const example = (step: string) =>
      execFileSync(process.execPath, [path.join(REPOSITORY, "docs", "examples", "desktop-app", "main.mjs"), step], {
        cwd: REPOSITORY,
        env: { ...process.env, MARKETPLACE_API: base(), MARKETPLACE_DATA: appData, FIREBASE_AUTH_EMULATOR_HOST: `${HOST}:${ports[2]}` },
        encoding: "utf8",
      });
    try {
      const first = await start();
      const installed = example("install");
      expect(installed).toContain("contoso.charts");
      expect(installed).toMatch(/installed contoso\.charts@1\.0\.0 in /);
      first.npm.kill("SIGTERM");
      await first.exited;
      await until("every port to be free", () => allFree(ports), 30_000);

      expect(example("verify")).toContain("{ ok: true }");

      const second = await start();
      expect(example("update")).toMatch(/now contoso\.charts@1\.1\.0 in /);
      expect(example("uninstall").trim()).toBe("[]");
      second.npm.kill("SIGTERM");
      await until("every port to be free", () => allFree(ports), 30_000);
    } finally {
      rmSync(appData, { recursive: true, force: true });
    }
  }, 180_000);

  it("takes the Firestore emulator from firebase-tools' cache, and stops whole when it dies", async () => {
    // A Firebase developer's machine: the jar in firebase-tools' cache (this machine has no
    // internet to download it, so it is the google-cloud-cli's jar placed there under the name
    // firebase-tools gives it).
    const cache = mkdtempSync(path.join(tmpdir(), "firebase-emulators-"));
    const gcloud = execFileSync("sh", ["-c", "command -v gcloud"]).toString().trim();
    const cachedJar = path.join(cache, "cloud-firestore-emulator-v1.22.0.jar");
    symlinkSync(path.join(path.dirname(path.dirname(realpathSync(gcloud))), "platform", "cloud-firestore-emulator", "cloud-firestore-emulator.jar"), cachedJar);
    const started = await start([], { FIREBASE_EMULATORS_PATH: cache });
    expect(started.output()).toContain(`(firebase-tools' ${cachedJar})`);
    const firestorePid = await until("the Firestore emulator's process", async () => {
      const list = execFileSync("ps", ["-eo", "pid=,args="]).toString();
      const match = list.split("\n").find((row) => /^\s*\d+ \S*java /.test(row) && row.includes(cachedJar) && row.includes(`--port=${ports[1]}`));
      return match ? Number(match.trim().split(/\s+/)[0]) : null;
    });
    process.kill(firestorePid, "SIGTERM");
    expect(await started.exited).toBe(1);
    expect(started.output()).toContain("The Firestore emulator stopped");
    // What it could not export is said, not passed off as kept.
    expect(started.output()).toMatch(/Export incomplete: .*\n(.|\n)*but for what could not be exported \(above\): that part is the previous stop's/);
    await until("every port to be free", () => allFree(ports), 30_000);
    rmSync(cache, { recursive: true, force: true });
  }, 120_000);

  it("builds and serves the Hosting site: /docs renders every operation of the API, / the demo modules", async () => {
    const started = await start();
    const document = (await (await fetch(`${base()}/openapi.json`)).json()) as { paths: Record<string, Record<string, { operationId: string }>> };
    const operationIds = Object.values(document.paths).flatMap((operations) => Object.values(operations).map((operation) => operation.operationId));

    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    });
    try {
      const page = await browser.newPage();
      const outside: string[] = [];
      page.on("request", (request) => {
        if (!request.url().startsWith(`http://${HOST}:${ports[0]}/`)) outside.push(request.url());
      });
      const response = await page.goto(`http://${HOST}:${ports[0]}/docs`);
      expect(response?.status()).toBe(200);
      await page.waitForSelector(".opblock-summary-operation-id", { timeout: 30_000 });
      const rendered = await page.$$eval(".opblock-summary-operation-id", (nodes) => nodes.map((node) => node.textContent?.trim()));
      expect(new Set(rendered)).toEqual(new Set(operationIds));
      expect(await page.textContent(".info .title")).toContain("Marketplace API");

      // The pages (§16), built from packages/web by npm start itself, with the demo modules.
      await page.goto(`http://${HOST}:${ports[0]}/`);
      await page.waitForSelector("ul.cards a:has-text('Charts Pro')");
      await page.click("ul.cards a:has-text('Charts Pro')");
      await page.waitForSelector(".module-header h1:has-text('Charts Pro')");
      // The README's own title and summary are the header's already: the overview starts after them (§24).
      await page.waitForSelector("#panel-overview .markdown h2");
      expect(await page.locator("#panel-overview .markdown h1:has-text('Charts Pro')").count()).toBe(0);
      // The icon is its own request: read its size once it has loaded (a loaded machine answers it after the page).
      await page.waitForFunction("document.querySelector('.module-header img')?.complete === true", undefined, { timeout: 10_000 });
      expect(await page.locator(".module-header img").evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth)).toBe(128);
      expect(outside).toEqual([]);
    } finally {
      await browser.close();
      started.npm.kill("SIGTERM");
      await until("every port to be free", () => allFree(ports), 30_000);
    }
  }, 120_000);
});
