/**
 * The read rows of `npm run bench`: public reads against a bare Express handler, and callers'
 * reads against the minimal-reads ceiling (bench-server.cjs --ceiling), on what seedReads writes.
 */
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { addMember, createBusiness } from "../functions/src/businesses/operators";
import { systemActor } from "../functions/src/core/audit-log";
import type { Deps } from "../functions/src/deps";
import { createDeveloperAccount } from "../functions/src/developers/accounts";
import { downloadStore } from "../functions/src/marketplace/download-store";
import { moduleStore, NO_POLICY } from "../functions/src/marketplace/module-store";
import { accountPublisher } from "../functions/src/publishing/publisher";
import { publishVersion, signPackage } from "../functions/src/publishing/service";
import { publishRelease } from "../functions/src/releases/service";
import { buildPackage } from "../packages/mpkg/src/archive";
import { compare, countsOf, load, quick, report, ROUNDS, SLICE_S, type BenchServer } from "./bench-harness";

/** Distinct callers of the authenticated reads, taking turns. */
const CALLERS = 40;

type Seeded = Awaited<ReturnType<typeof seedReads>>;

/** A developer, a published module with a real package, 300 listed modules, releases, a reader. */
export async function seedReads(deps: Deps) {
  const developerUser = await deps.auth.createUser({ email: "bench@example.test", password: "bench-password" });
  const developer = await createDeveloperAccount(deps.db, { id: developerUser.uid, email: "bench@example.test", displayName: "Bench", publisherId: "bench" }, new Date());
  const moduleId = "bench.popular";
  const publisher = accountPublisher(developer, systemActor("bench"));
  await signPackage(deps, publisher, await buildPackage({ id: moduleId, name: "Popular", version: "1.0.0", summary: "Downloaded a lot." }, [{ name: "a.bin", content: randomBytes(64 * 1024) }]));
  await publishVersion(deps, publisher, moduleId, "1.0.0");
  const now = Date.now();
  for (let chunk = 0; chunk < 3; chunk += 1) {
    const batch = deps.db.batch();
    for (let i = chunk * 100; i < (chunk + 1) * 100; i += 1) {
      const id = `bench.module-${i}`;
      const listing = { name: `Module ${i}`, summary: `Tool number ${i} for ${i % 2 ? "charts" : "notes"}.`, category: i % 3 ? "data" : "productivity", ...(i % 4 ? {} : { entitlement: "pro" }) };
      moduleStore(deps.db).setModule(batch, {
        id,
        price: null,
        stripeProductId: null,
        restriction: null,
        businessId: null,
        ...listing,
        publisherId: "bench",
        developerId: developerUser.uid,
        latestVersion: "1.0.0",
        createdAt: new Date(now - i * 1000),
        updatedAt: new Date(now - i * 1000),
        listed: true,
        versionSummary: [{ version: "1.0.0", minAppVersion: null, maxAppVersion: null, yanked: false, revoked: false, publishedAt: new Date(now - i * 1000), hasIcon: false }],
        highestPublishedVersion: "1.0.0",
        revocation: null,
        policy: NO_POLICY,
      });
    }
    await batch.commit();
  }
  for (const version of ["1.0.0", "1.1.0", "1.2.0"]) {
    const bytes = randomBytes(256 * 1024);
    await publishRelease(deps, { version, platform: "win32", arch: "x64", fileName: `Setup-${version}.exe` }, { content: Readable.from([bytes]), size: bytes.length });
  }
  // 40 readers; every fourth is a member of a business with a subscription, every third has activations.
  const callers: string[] = [];
  for (let i = 0; i < CALLERS; i += 1) {
    const email = `reader-${i}@example.test`;
    const { uid } = await deps.auth.createUser({ email, password: "reader-password" });
    if (i % 4 === 0) {
      await createBusiness(deps, { id: `business-${i}`, name: `Business ${i}` });
      await addMember(deps, { id: `business-${i}`, user: uid, role: "member" });
      await deps.db.doc(`subscriptions/business-${i}`).set({ status: "active", plan: "team", currentPeriodEnd: new Date(Date.now() + 30 * 86_400_000), entitlements: ["pro"] });
    }
    if (i % 3 === 0) await deps.db.doc(`users/${uid}/activations/${moduleId}`).set({ moduleId, version: "1.0.0", activatedAt: new Date(), updatedAt: new Date() });
    callers.push((await deps.identity.signInWithPassword(email, "reader-password")).idToken);
  }
  const storagePath = (await moduleStore(deps.db).getVersion(moduleId, "1.0.0"))!.storagePath;
  return { callers, moduleId, storagePath, developer };
}

/** Each public endpoint's requests/s against a bare Express handler's. */
export async function publicReads(bare: BenchServer, api: BenchServer): Promise<void> {
  const base = `${api.origin}/api/v1`;
  console.log(`Public reads against a bare Express handler (20 connections, ${ROUNDS} rounds of ${SLICE_S} s each, taking turns):`);
  await load(`${bare.origin}/`, { seconds: SLICE_S });
  const endpoints: [string, string, number | null][] = [
    ["GET /health", "/health", 0.8],
    ["GET /signing-keys", "/signing-keys", 0.8],
    ["GET /releases", "/releases", 0.8],
    ["GET /releases/download/win32", "/releases/download/win32", null],
    ["GET /modules (anonymous)", "/modules", 0.8],
  ];
  for (const [name, route, wanted] of endpoints) {
    // Warmed up first: the listing's first request loads the search catalog.
    await load(`${base}${route}`, { amount: 2_000 });
    const comparison = await compare({ server: bare, url: `${bare.origin}/` }, { server: api, url: `${base}${route}` });
    const { target, baseline } = comparison;
    report({
      name,
      ratio: comparison.ratio,
      wanted: wanted === null ? "—" : `≥ ${wanted}`,
      ok: wanted === null ? null : comparison.ratio >= wanted && target.bad === 0,
      detail:
        `${target.rps.toFixed(0)} vs ${baseline.rps.toFixed(0)} req/s, ${target.cpuMicros.toFixed(0)} vs ${baseline.cpuMicros.toFixed(0)} µs of CPU each, ` +
        `${target.calls.toFixed(2)} Firestore calls/request; ${comparison.spread}${target.bad ? `, ${target.bad} failed` : ""}`,
    });
  }
}

/** /users/me, the listing with a token and downloads by 40 callers in turn, against the ceiling; every download answered is counted once. */
export async function callerReads(deps: Deps, api: BenchServer, ceiling: BenchServer, { callers, moduleId }: Seeded): Promise<void> {
  const base = `${api.origin}/api/v1`;
  const ceilingBase = `${ceiling.origin}/api/v1`;
  console.log(`\nCaller reads by ${callers.length} callers in turn, against the minimal-reads ceiling (${ROUNDS} rounds of ${SLICE_S} s each, taking turns):`);
  const counter = downloadStore(deps.db, deps.config.downloadShards);
  // Downloads are loaded by count, not time: requests still in flight when a timed load stops are
  // counted by the API but never answered, and every answered download must be counted once.
  const authenticated: [string, string, number, number | undefined][] = [
    ["GET /users/me", "/users/me", 0.85, undefined],
    ["GET /modules (with a token)", "/modules", 0.7, undefined],
    ["GET /modules/download/:id", `/modules/download/${moduleId}`, 0.6, quick ? 300 : 1_000],
  ];
  for (const [name, route, wanted, amount] of authenticated) {
    // Both warmed up alike: tokens verified, connections and the emulator's code paths hot.
    await load(`${ceilingBase}${route}`, { callers, amount: 2_000 });
    await load(`${base}${route}`, { callers, amount: 2_000 });
    // The warm-up's downloads are written first, so that only the rounds' are counted below.
    await countsOf(api);
    const countedBefore = await counter.total(moduleId);
    const comparison = await compare({ server: ceiling, url: `${ceilingBase}${route}` }, { server: api, url: `${base}${route}` }, { callers, amount });
    const { target, baseline } = comparison;
    const counted = amount ? (await counter.total(moduleId)) - countedBefore : null;
    report({
      name,
      ratio: comparison.ratio,
      wanted: `≥ ${wanted}`,
      ok: comparison.ratio >= wanted && target.bad === 0 && (counted === null || counted === target.ok),
      detail:
        `${target.rps.toFixed(0)} vs ${baseline.rps.toFixed(0)} req/s; ${(target.cpuMicros / 1000).toFixed(1)} vs ${(baseline.cpuMicros / 1000).toFixed(1)} ms of CPU, ` +
        `${target.calls.toFixed(2)} Firestore calls, ${target.roundTrips.toFixed(2)} round trips/request; ${comparison.spread}` +
        (counted === null ? "" : `; ${target.ok} downloads answered, ${counted} counted`) +
        (target.bad ? `, ${target.bad} failed` : ""),
    });
  }
}
