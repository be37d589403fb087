import { createHash } from "node:crypto";
import type { Express } from "express";
import request from "supertest";
import type { LocalStripe } from "../../tools/local-stack/stripe-server";
import { utcDay } from "../src/core/time";
import { downloadStore } from "../src/marketplace/download-store";
import { admin, json } from "./support/admin";
import { appsWithLocalStripe } from "./support/local-stripe";
import { cloudLogger } from "../src/core/logger";
import { bearer, createDeveloper, createUser, declareTrader, eventually, expectProblem, foldCounts, otherInstanceApp, publishModule, resetEmulators, testDeps, type TestDeveloper, type TestUser } from "./support/harness";

const api = "/api/v1";
const BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36";
const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

/**
 * Analytics (§28) end to end: downloads, installs, an uninstall, active devices, page views (a
 * repeat and a crawler not counted), a purchase, a trial and a refund through the local Stripe,
 * read back per day with splits and as CSV whose sums equal the JSON's totals, on another
 * instance too.
 */
describe("analytics (§28)", () => {
  let stripe: LocalStripe;
  let app: Express;
  let other: Express;
  const today = utcDay(new Date());

  const local = appsWithLocalStripe();
  beforeAll(async () => {
    ({ stripe, app, other } = local);
  });
  /** What a test started and must stop, whether it passed or not. */
  const afterThis: (() => void)[] = [];
  afterEach(() => afterThis.splice(0).forEach((stop) => stop()));
  beforeEach(async () => {
    await resetEmulators();
    stripe.events.length = 0;
  });

  const submit = async (url: string) => expect((await fetch(url, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: "", redirect: "manual" })).status).toBe(303);
  const metrics = (who: { idToken: string } | Record<string, string>, moduleId: string | null, query: Record<string, string> = {}, instance = app) =>
    request(instance)
      .get(moduleId ? `${api}/developers/modules/${moduleId}/metrics` : `${api}/developers/metrics`)
      .query(query)
      .set("idToken" in who ? bearer(who as { idToken: string }) : (who as Record<string, string>));
  const view = (moduleId: string, headers: Record<string, string>) => {
    const sent = request(app).post(`${api}/modules/${moduleId}/views`);
    for (const [name, value] of Object.entries(headers)) sent.set(name, value);
    return sent;
  };
  const confirm = (who: TestUser, body: Record<string, unknown>) => request(app).post(`${api}/modules/confirm`).set(bearer(who)).send(body);

  async function sellingModule(publisherId: string, moduleId: string): Promise<TestDeveloper> {
    const developer = await createDeveloper(publisherId);
    const opened = await request(app).post(`${api}/developers/payouts/account`).set(bearer(developer));
    await submit(`${opened.body.onboardingUrl}/complete`);
    await declareTrader(developer, app);
    await publishModule(developer, { id: moduleId, name: "Charts", version: "1.0.0", summary: "Charts." });
    await publishModule(developer, { id: moduleId, name: "Charts", version: "1.1.0", summary: "Charts." });
    return developer;
  }

  /** CSV rows as objects (the test's own reading of RFC 4180's simple case: no field here is quoted). */
  const rowsOf = (csv: string) => {
    const [header, ...rows] = csv.trimEnd().split("\r\n").map((line) => line.split(","));
    return rows.map((row) => Object.fromEntries(header.map((name, index) => [name, name === "date" || name === "version" || name === "platform" ? row[index] : Number(row[index])])));
  };
  const sumOf = (rows: Record<string, string | number>[], column: string) => rows.reduce((sum, row) => sum + Number(row[column] ?? 0), 0);

  it("counts each figure exactly, splits it by version and platform, and its CSV sums to the JSON's totals", async () => {
    const developer = await sellingModule("acme", "acme.charts");
    const [ann, bob, carol, dave] = await Promise.all([createUser(), createUser(), createUser(), createUser()]);

    // Page views: a browser's first and second visit are one visitor (the __session cookie, the one Hosting passes to a function), a crawler is not counted, a signed-in user is one more.
    const first = await view("acme.charts", { "User-Agent": BROWSER });
    expect(first.status).toBe(204);
    const cookie = /^__session=([0-9a-f]{32}); Max-Age=31536000; Path=\/; HttpOnly; SameSite=Lax$/.exec(first.headers["set-cookie"]?.[0] ?? "");
    expect(cookie).not.toBeNull();
    expect((await view("acme.charts", { "User-Agent": BROWSER, Cookie: `__session=${cookie![1]}` })).headers["set-cookie"]).toBeUndefined();
    expect((await view("acme.charts", { "User-Agent": GOOGLEBOT })).status).toBe(204);
    expect((await view("acme.charts", { "User-Agent": BROWSER, Cookie: `__session=${cookie![1]}`, ...bearer(ann) })).status).toBe(204);
    expectProblem(await view("acme.nothing", { "User-Agent": BROWSER }), 404, "module_not_found");

    // Installs on two devices (one repeated, not a new install), an uninstall, and active devices from update checks.
    expect((await confirm(ann, { moduleId: "acme.charts", version: "1.0.0", deviceId: "ann-pc", platform: "win32" })).status).toBe(200);
    expect((await confirm(ann, { moduleId: "acme.charts", version: "1.0.0", deviceId: "ann-pc", platform: "win32" })).status).toBe(200);
    expect((await confirm(bob, { moduleId: "acme.charts", version: "1.1.0", deviceId: "bob-mac", platform: "darwin" })).status).toBe(200);
    expect((await confirm(carol, { moduleId: "acme.charts", version: "1.1.0", deviceId: "carol-box", platform: "linux" })).status).toBe(200);
    // An app that does not say its platform: counted under unknown, so the platform split still sums to the total.
    expect((await confirm(dave, { moduleId: "acme.charts", version: "1.0.0", deviceId: "dave-pc" })).status).toBe(200);
    expect((await request(app).delete(`${api}/modules/activations/acme.charts/devices/carol-box`).set(bearer(carol))).status).toBe(204);
    const check = { appVersion: "1.0.0", installed: [{ moduleId: "acme.charts", version: "1.1.0" }, { moduleId: "acme.unknown", version: "1.0.0" }], deviceId: "bob-mac", platform: "darwin" };
    expect((await request(app).post(`${api}/modules/updates`).set(bearer(bob)).send(check)).status).toBe(200);
    expect((await request(other).post(`${api}/modules/updates`).set(bearer(bob)).send(check)).status).toBe(200);
    // Counted from what happened only: a device that never confirmed the module, and a version never published, change no figure.
    expect((await request(app).post(`${api}/modules/updates`).set(bearer(bob)).send({ ...check, deviceId: "bob-laptop" })).status).toBe(200);
    expect((await request(app).post(`${api}/modules/updates`).set(bearer(bob)).send({ ...check, installed: [{ moduleId: "acme.charts", version: "7.0.0-made.up" }] })).status).toBe(200);
    expectProblem(await request(app).post(`${api}/modules/updates`).set(bearer(bob)).send({ ...check, platform: "solaris" }), 400, "invalid_request");
    expectProblem(await confirm(ann, { moduleId: "acme.charts", deviceId: "ann-pc", platform: "amiga" }), 400, "invalid_request");

    // Downloads, counted within moments.
    for (const version of ["1.0.0", "1.1.0", "1.1.0"]) expect((await request(app).get(`${api}/modules/download/acme.charts`).query({ version }).set(bearer(ann))).status).toBe(200);

    // A subscription with a trial, converted by its first paid invoice; a one-time buyer refunded in part.
    const priced = await request(app).put(`${api}/developers/modules/acme.charts/pricing`).set(bearer(developer)).send({ model: "subscription", amount: 500, interval: "month", trialDays: 7 });
    expect(priced.status).toBe(200);
    const checkout = await request(app).post(`${api}/modules/acme.charts/checkout`).set(bearer(bob)).send({});
    await submit(`${checkout.body.url}/pay`);
    const subscriptionId = String(stripe.events.find((event) => event.type === "customer.subscription.created")!.data.object.id);
    const invoice = await stripe.renew(subscriptionId);
    await fetch(`${stripe.url}/v1/refunds`, { method: "POST", headers: { Authorization: "Bearer sk_test_local", "Content-Type": "application/x-www-form-urlencoded" }, body: `payment_intent=${invoice.payment_intent}&amount=200` });

    // Refunded as from Stripe's Dashboard, without the application fee: net is §20's earnings' net to the cent.
    const expected = { downloads: 3, installs: 4, uninstalls: 1, activeDevices: 3, pageViews: 2, purchases: 1, trials: 1, trialConversions: 1, revenue: { usd: 500 }, refunds: { usd: 200 }, net: { usd: 500 - 75 - 200 } };
    await eventually(async () => {
      await foldCounts();
      expect((await metrics(developer, "acme.charts", { from: today, to: today }, other)).body.totals).toEqual(expected);
    }, 10_000);
    const earnings = await request(app).get(`${api}/developers/earnings`).query({ from: today, to: today }).set(bearer(developer));
    expect(earnings.body.totals).toEqual([expect.objectContaining({ currency: "usd", net: expected.net.usd })]);
    // Stripe gives the fee's share back later (its Dashboard's "refund application fee"): both move together.
    await fetch(`${stripe.url}/v1/refunds`, { method: "POST", headers: { Authorization: "Bearer sk_test_local", "Content-Type": "application/x-www-form-urlencoded" }, body: `payment_intent=${invoice.payment_intent}&amount=100&refund_application_fee=true` });
    await eventually(async () => {
      await foldCounts();
      const [figures, paid] = [(await metrics(developer, "acme.charts", { from: today, to: today })).body.totals, (await request(app).get(`${api}/developers/earnings`).query({ from: today, to: today }).set(bearer(developer))).body.totals[0]];
      expect(figures.refunds).toEqual({ usd: 300 });
      expect(figures.net).toEqual({ usd: paid.net });
    }, 10_000);
    Object.assign(expected, { refunds: { usd: 300 }, net: { usd: (await request(app).get(`${api}/developers/earnings`).query({ from: today, to: today }).set(bearer(developer))).body.totals[0].net } });

    const byPlatform = (await metrics(developer, "acme.charts", { from: today, to: today, split: "platform", metrics: "installs,activeDevices,pageViews" })).body;
    const value = (metric: string, split: string) => byPlatform.series.find((entry: { metric: string; split: string }) => entry.metric === metric && entry.split === split)?.points[0].value;
    expect([value("installs", "win32"), value("installs", "darwin"), value("installs", "linux"), value("installs", "unknown")]).toEqual([1, 1, 1, 1]);
    // Carol's box was removed: active today are ann's PC, bob's Mac and dave's PC (bob's laptop never confirmed the module).
    expect([value("activeDevices", "win32"), value("activeDevices", "darwin"), value("activeDevices", "linux"), value("activeDevices", "unknown")]).toEqual([1, 1, undefined, 1]);
    expect(value("pageViews", "unknown")).toBe(2);
    const byVersion = (await metrics(developer, "acme.charts", { from: today, to: today, split: "version", metrics: "downloads" })).body.series;
    expect(byVersion.map((entry: { split: string; points: { value: number }[] }) => [entry.split, entry.points[0].value])).toEqual([["1.0.0", 1], ["1.1.0", 2]]);

    // Thirty days, by day: the CSV's columns sum to the JSON's totals; split, too.
    for (const query of [{}, { split: "version" }, { split: "platform", interval: "week" }] as Record<string, string>[]) {
      const json = (await metrics(developer, "acme.charts", query)).body;
      const csv = await metrics(developer, "acme.charts", { ...query, format: "csv" });
      expect(csv.headers["content-type"]).toMatch(/^text\/csv/);
      const rows = rowsOf(csv.text);
      for (const metric of ["downloads", "installs", "uninstalls", "pageViews", "purchases", "trials", "trialConversions"]) expect([metric, sumOf(rows, metric)]).toEqual([metric, json.totals[metric]]);
      for (const metric of ["revenue", "refunds", "net"]) expect([metric, sumOf(rows, `${metric}_usd`)]).toEqual([metric, json.totals[metric].usd]);
    }
    const accepted = await metrics({ ...bearer(developer), Accept: "text/csv" }, "acme.charts");
    expect(accepted.text.split("\r\n")[0]).toBe("date,downloads,installs,uninstalls,activeDevices,pageViews,purchases,trials,trialConversions,revenue_eur,revenue_gbp,revenue_usd,refunds_eur,refunds_gbp,refunds_usd,net_eur,net_gbp,net_usd");

    // Over all of the publisher's modules, by an access token; the operators' CLI over the marketplace.
    const token = (await request(app).post(`${api}/developers/tokens`).set(bearer(developer)).send({ name: "reports" })).body.token;
    expect((await metrics({ Authorization: `Bearer ${token}` }, null, { from: today, to: today })).body.totals).toEqual(expected);
    expect((await json("metrics", "--module", "acme.charts", "--from", today, "--to", today)).totals).toEqual(expected);
    const csvCli = await admin("metrics", "--csv", "--from", today, "--to", today);
    expect(rowsOf(csvCli.stdout)).toEqual([expect.objectContaining({ date: today, downloads: 3, pageViews: 2, revenue_usd: 500, refunds_usd: 300 })]);
    const table = await admin("metrics", "--module", "acme.charts", "--from", today, "--to", today, "--split", "platform");
    expect(table.stdout).toMatch(/platform/);
    expect((await admin("metrics", "--from", "yesterday")).code).toBe(2);
    expect((await admin("metrics", "--interval", "year")).code).toBe(2);
    // Versions are a module's own: the marketplace's figures are split by platform only.
    expect((await admin("metrics", "--split", "version")).code).toBe(2);
  });

  it("refuses bad queries with 400 and changes nothing, and shows a module's figures to its owner only", async () => {
    const developer = await sellingModule("acme", "acme.charts");
    const stranger = await createDeveloper("globex");
    for (const query of [{ from: "2026-02-30" }, { from: "2026-05-02", to: "2026-05-01" }, { metrics: "downloads,visits" }, { interval: "year" }, { split: "country" }, { format: "xml" }, { from: "2010-01-01", to: "2026-01-01" }, { bogus: "1" }] as Record<string, string>[]) {
      expectProblem(await metrics(developer, "acme.charts", query), 400, "invalid_request");
    }
    expectProblem(await metrics(stranger, "acme.charts"), 403, "not_owner");
    expectProblem(await metrics(developer, "acme.nothing"), 404, "module_not_found");
    expect((await request(app).get(`${api}/developers/modules/acme.charts/metrics`)).status).toBe(401);
    // A month by month view of 25 months: every bucket there, zeros included.
    const long = (await metrics(developer, "acme.charts", { from: "2024-11-01", to: "2026-11-30", interval: "month", metrics: "downloads" })).body;
    expect(long.series[0].points).toHaveLength(25);
    expect(long.series[0].points[0]).toEqual({ date: "2024-11-01", value: 0 });
  });

  it("cannot be forged from outside: 200 update checks naming made-up versions from new devices answer 200, count nothing and write no figure", async () => {
    const owner = await sellingModule("acme", "acme.charts");
    const forger = await createUser();
    const { db } = await testDeps();
    // Nothing a forger sends reaches a figure, nor waits to: no month, no pending record, no device activity.
    const monthDocuments = async () =>
      (await Promise.all(["metricMonths", "publisherMetricMonths", "pendingCounts", "deviceActivity"].map((name) => db.collection(name).get()))).flatMap((snapshot) =>
        snapshot.docs.map((doc) => [doc.ref.path, JSON.stringify(doc.data()).length]),
      );
    const before = await monthDocuments();
    for (let round = 0; round < 10; round += 1) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          request(app)
            .post(`${api}/modules/updates`)
            .set(bearer(forger))
            .send({ appVersion: "1.0.0", installed: [{ moduleId: "acme.charts", version: `1.0.0-${"x".repeat(200)}.${round * 20 + index}` }], deviceId: `forged-${round}-${index}`, platform: "linux" }),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    }
    expect(await monthDocuments()).toEqual(before);
    await foldCounts();
    expect((await metrics(owner, "acme.charts", { from: today, to: today, metrics: "activeDevices" })).body.totals).toEqual({ activeDevices: 0 });
  });

  it("counts a batch of downloads once when its write is repeated after it landed", async () => {
    const owner = await sellingModule("acme", "acme.charts");
    const deps = await testDeps();
    const store = downloadStore(deps.db, deps.config.downloadShards);
    const counts = [{ moduleId: "acme.charts", version: "1.0.0", day: today, downloads: 3 }];
    await store.add(counts, "batch-landed-unseen", new Date());
    // The same batch again, as after a lost answer or the client library's own retry: refused as already there, and answered as done.
    await store.add(counts, "batch-landed-unseen", new Date());
    expect(await store.total("acme.charts")).toBe(3);
    await foldCounts();
    expect((await metrics(owner, "acme.charts", { from: today, to: today, metrics: "downloads" })).body.totals).toEqual({ downloads: 3 });
  });

  it("counts page views exactly under concurrency: 100 visitors at once count 100, one visitor's 50 views at once count 1", async () => {
    const owner = await sellingModule("acme", "acme.charts");
    const distinct = await Promise.all(Array.from({ length: 100 }, (_, index) => view("acme.charts", { "User-Agent": `${BROWSER} visitor-${index}` })));
    expect(distinct.every((answer) => answer.status === 204)).toBe(true);
    const cookie = "0123456789abcdef0123456789abcdef";
    const repeated = await Promise.all(Array.from({ length: 50 }, () => view("acme.charts", { "User-Agent": BROWSER, Cookie: `__session=${cookie}` })));
    expect(repeated.every((answer) => answer.status === 204)).toBe(true);
    await foldCounts();
    expect((await metrics(owner, "acme.charts", { from: today, to: today, metrics: "pageViews" })).body.totals).toEqual({ pageViews: 101 });
  });

  it("counts at production rates: 200 concurrent confirms over two instances never write a month document, and an update check writes one document per device and day", async () => {
    const owner = await sellingModule("acme", "acme.charts");
    await publishModule(owner, { id: "acme.maps", name: "Maps", version: "2.0.0", summary: "Maps." });
    const { db } = await testDeps();
    const month = db.doc(`metricMonths/acme.charts_${today.slice(0, 7)}`);
    const writes: number[] = [];
    const stopWatching = month.onSnapshot((snapshot) => snapshot.exists && writes.push(Date.now()));
    afterThis.push(stopWatching);
    const users = await Promise.all(Array.from({ length: 200 }, () => createUser()));
    const instances = [app, await otherInstanceApp()];
    const answers = await Promise.all(users.map((user, index) => request(instances[index % 2]).post(`${api}/modules/confirm`).set(bearer(user)).send({ moduleId: "acme.charts", version: "1.0.0", deviceId: `pc-${index}`, platform: "win32" })));
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
    // Counting wrote each device's own document, and nothing every confirm shares.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(writes).toEqual([]);
    expect((await db.collection("deviceActivity").where("countsPending", "==", true).get()).size).toBe(200);

    // An update check naming two modules from a device that holds both: one document written, once a day.
    const [first] = users;
    expect((await request(app).post(`${api}/modules/confirm`).set(bearer(first)).send({ moduleId: "acme.maps", version: "2.0.0", deviceId: "pc-0", platform: "win32" })).status).toBe(200);
    await foldCounts();
    const device = db.doc(`deviceActivity/${createHash("sha256").update(`${first.uid}\npc-0`).digest("hex")}`);
    const updated = async () => (await device.get()).updateTime!.toMillis();
    const pendingBefore = (await db.collection("pendingCounts").get()).size;
    const before = await updated();
    const check = { appVersion: "1.0.0", installed: [{ moduleId: "acme.charts", version: "1.1.0" }, { moduleId: "acme.maps", version: "2.0.0" }], deviceId: "pc-0", platform: "win32" };
    expect((await request(app).post(`${api}/modules/updates`).set(bearer(first)).send(check)).status).toBe(200);
    const afterFirst = await updated();
    expect(afterFirst).toBeGreaterThan(before);
    for (let repeat = 0; repeat < 3; repeat += 1) expect((await request(app).post(`${api}/modules/updates`).set(bearer(first)).send(check)).status).toBe(200);
    expect(await updated()).toBe(afterFirst);
    expect((await db.collection("pendingCounts").get()).size).toBe(pendingBefore);

    // The deployed folder (the exported scheduled function) takes it all: exact figures, nothing left waiting.
    const { metricFold } = await import("../src/index");
    const logged = jest.spyOn(cloudLogger, "info").mockImplementation(() => undefined);
    try {
      await metricFold.run({ scheduleTime: new Date().toISOString(), jobName: "metricFold" } as Parameters<typeof metricFold.run>[0]);
      expect(logged.mock.calls).toEqual([["counts folded", expect.objectContaining({ devices: 1 })]]);
    } finally {
      logged.mockRestore();
    }
    stopWatching();
    expect((await db.collection("deviceActivity").where("countsPending", "==", true).get()).size).toBe(0);
    expect((await db.collection("pendingCounts").get()).size).toBe(0);
    const totals = (await metrics(owner, "acme.charts", { from: today, to: today, metrics: "installs,activeDevices" })).body.totals;
    expect(totals).toEqual({ installs: 200, activeDevices: 200 });
    const byVersion = (await metrics(owner, "acme.charts", { from: today, to: today, split: "version", metrics: "activeDevices" })).body.series;
    expect(byVersion.map((entry: { split: string; points: { value: number }[] }) => [entry.split, entry.points[0].value])).toEqual([["1.0.0", 199], ["1.1.0", 1]]);
    // Over the publisher's modules: one document a month, the same figures.
    expect((await metrics(owner, null, { from: today, to: today, metrics: "installs,activeDevices" })).body.totals).toEqual({ installs: 201, activeDevices: 201 });
  });

  it("does not count again a device seen before activity was kept one document per device", async () => {
    const owner = await sellingModule("acme", "acme.charts");
    const user = await createUser();
    const { db } = await testDeps();
    // As a confirm wrote it before: one document per module, user and device, active today.
    const legacy = createHash("sha256").update(`acme.charts\n${user.uid}\nold-pc`).digest("hex");
    await db.doc(`deviceActivity/${legacy}`).set({ moduleId: "acme.charts", lastDay: today, version: "1.0.0", platform: "win32" });
    expect((await confirm(user, { moduleId: "acme.charts", version: "1.0.0", deviceId: "old-pc", platform: "win32" })).status).toBe(200);
    await foldCounts();
    // An install (the activation is new to the device), but no active day counted twice.
    expect((await metrics(owner, "acme.charts", { from: today, to: today, metrics: "installs,activeDevices" })).body.totals).toEqual({ installs: 1, activeDevices: 0 });
    const device = await db.doc(`deviceActivity/${createHash("sha256").update(`${user.uid}\nold-pc`).digest("hex")}`).get();
    expect(device.get("modules")).toEqual({ "acme.charts": { lastDay: today, version: "1.0.0", platform: "win32" } });
  });
});
