import { initializeApp, type App } from "firebase-admin/app";
import { onRequest } from "firebase-functions/v2/https";
import { onSchedule } from "firebase-functions/v2/scheduler";
import { onDocumentCreated, onDocumentWritten } from "firebase-functions/v2/firestore";
import type { ServerResponse } from "node:http";
import type { Express } from "express";
import { assertServable, configurationWarnings, loadConfig, params } from "./config";
import { cloudLogger } from "./core/logger";
import { requestIdFor } from "./core/request-context";

const REGION = "us-central1";
let firebaseApp: App | undefined;
let app: Promise<Express> | undefined;

/** The Admin SDK, initialised once per instance for whichever function runs first. */
const adminApp = () => (firebaseApp ??= initializeApp());

/**
 * Built on the first request, when params and secrets are readable; kept for the instance's life.
 * The app's modules load here, not at module load, so deploy-time discovery and cold starts load
 * little more than firebase-functions.
 */
function productionApp(): Promise<Express> {
  app ??= (async () => {
    const [{ createApp }, { buildDeps }] = await Promise.all([import("./app"), import("./deps")]);
    const config = loadConfig();
    assertServable(config);
    for (const warning of configurationWarnings(config)) cloudLogger.error(warning);
    return createApp(await buildDeps(adminApp(), config, cloudLogger));
  })();
  return app;
}

let startFailureLogged = false;

/**
 * The configuration is unusable (e.g. PUBLIC_BASE_URL unset): the instance serves nothing but a
 * 503 problem, and says why in one log line.
 */
function refuseToStart(error: Error, callerRequestId: string | string[] | undefined, res: ServerResponse): void {
  if (!startFailureLogged) cloudLogger.error(`api cannot start: ${error.message}`);
  startFailureLogged = true;
  const requestId = requestIdFor(typeof callerRequestId === "string" ? callerRequestId : undefined);
  res
    .writeHead(503, { "Content-Type": "application/problem+json", "Retry-After": "60", "Cache-Control": "private, no-store", "X-Request-Id": requestId })
    .end(JSON.stringify({ type: "about:blank", title: "Service Unavailable", status: 503, code: "unavailable", detail: "The service is not configured; see its logs.", requestId }));
}

// Cloud Functions sends SIGTERM (and some seconds' grace) before it shuts an instance down: write
// the download counts it holds first. Without another SIGTERM listener, exit as Node would have.
process.once("SIGTERM", async () => {
  const { drainDownloadCounters } = await import("./marketplace/download-counter");
  await Promise.race([drainDownloadCounters(), new Promise((resolve) => setTimeout(resolve, 8_000).unref())]);
  if (process.listenerCount("SIGTERM") === 0) process.exit(0);
});

export const api = onRequest(
  {
    region: REGION,
    // With the search catalog of 50,000 modules an instance holds about 230 MiB after its first search, more as searches decode the postings they touch (docs/guides/search.md).
    memory: "1GiB",
    timeoutSeconds: 120,
    concurrency: 80,
    secrets: [params.moduleSigningKeys, params.stripeWebhookSecret, params.stripeSecretKey, params.webhookSecretsKey],
    invoker: "public",
  },
  async (req, res) => {
    let handler: Express;
    try {
      handler = await productionApp();
    } catch (error) {
      refuseToStart(error as Error, req.headers["x-request-id"], res);
      return;
    }
    handler(req, res);
  },
);

/** Hourly: removes stored packages and installers that no document references (cleanup/service.ts). */
export const cleanup = onSchedule({ schedule: "every 60 minutes", region: REGION, timeoutSeconds: 540 }, async () => {
  const [{ removeOrphanedObjects }, { bucketStore }] = await Promise.all([import("./cleanup/service"), import("./core/storage")]);
  const config = loadConfig();
  const clock = () => new Date();
  const [{ getFirestore }, { getStorage }] = await Promise.all([import("firebase-admin/firestore"), import("firebase-admin/storage")]);
  const result = await removeOrphanedObjects({
    db: getFirestore(adminApp()),
    store: bucketStore(getStorage(adminApp()).bucket(config.storageBucket), clock),
    clock,
  });
  cloudLogger.info("orphaned objects removed", { checked: result.checked, removed: result.removed.length, paths: result.removed.slice(0, 100) });
});

/**
 * Every 30 minutes: the search catalog's snapshot, from which a cold instance starts without
 * reading the modules collection (marketplace/search-catalog.ts). It is built as any instance's
 * catalog is: from the last snapshot and the change feed since, so it never reads the collection
 * either, except once in a new project.
 */
export const searchSnapshot = onSchedule({ schedule: "every 30 minutes", region: REGION, timeoutSeconds: 300, memory: "1GiB", secrets: [params.moduleSigningKeys] }, async () => {
  const [{ buildDeps }, { marketplaceSearch, writeSearchSnapshot }] = await Promise.all([import("./deps"), import("./marketplace/search-catalog")]);
  const deps = await buildDeps(adminApp(), loadConfig(), cloudLogger);
  const written = await writeSearchSnapshot(marketplaceSearch(deps), deps.store, deps.clock());
  cloudLogger.info("search snapshot written", written);
});

/**
 * Every 10 minutes: advances or halts the releases' automatic ramps (releases/service.ts
 * tickRamps, which `release tick` runs too); a step's hours are met within 10 minutes of their end.
 */
export const releaseRamps = onSchedule({ schedule: "every 10 minutes", region: REGION, timeoutSeconds: 120 }, async () => {
  const [{ tickRamps }, { getFirestore }, { getAuth }, { getStorage }, { bucketStore }, { systemActor }] = await Promise.all([
    import("./releases/service"),
    import("firebase-admin/firestore"),
    import("firebase-admin/auth"),
    import("firebase-admin/storage"),
    import("./core/storage"),
    import("./core/audit-log"),
  ]);
  const config = loadConfig();
  const clock = () => new Date();
  const moves = await tickRamps({
    db: getFirestore(adminApp()),
    auth: getAuth(adminApp()),
    store: bucketStore(getStorage(adminApp()).bucket(config.storageBucket), clock),
    clock,
    actor: systemActor("release-ramps"),
  });
  cloudLogger.info("release ramps ticked", { moves: moves.filter((move) => move.outcome !== "wait") });
});

/** The dependencies of the webhooks' functions: built once per instance. */
let webhookDeps: Promise<import("./deps").Deps> | undefined;
const dispatchDeps = () =>
  (webhookDeps ??= (async () => {
    const { buildDeps } = await import("./deps");
    return buildDeps(adminApp(), loadConfig(), cloudLogger);
  })());

/** How long after its start a webhook function may begin an attempt: each ends within 15 s and its record, well within the function's 120 s. */
const WEBHOOK_ATTEMPTS_FOR_MS = 60_000;

/**
 * Webhooks (§21): each event the services record in the outbox is fanned out to its endpoints and
 * sent at once, from the moment it is committed; a delivery waits here for a slot of a busy
 * endpoint, and for a retry due within the function's time (webhooks/dispatch.ts deliverWithin).
 */
export const webhookEvents = onDocumentCreated(
  { document: "events/{eventId}", region: REGION, timeoutSeconds: 120, secrets: [params.moduleSigningKeys, params.webhookSecretsKey] },
  async (event) => {
    const startBefore = performance.now() + WEBHOOK_ATTEMPTS_FOR_MS;
    const [{ fanOut, deliverWithin }, deps] = await Promise.all([import("./webhooks/dispatch"), dispatchDeps()]);
    await deliverWithin(deps, await fanOut(deps, event.params.eventId), startBefore);
  },
);

/** Every minute: webhook deliveries that are due, endpoint by endpoint, and events a trigger missed (webhooks/sweep.ts). */
export const webhookSweep = onSchedule({ schedule: "every 1 minutes", region: REGION, timeoutSeconds: 120, secrets: [params.moduleSigningKeys, params.webhookSecretsKey] }, async () => {
  const startBefore = performance.now() + WEBHOOK_ATTEMPTS_FOR_MS;
  const [{ sweepWebhooks }, deps] = await Promise.all([import("./webhooks/sweep"), dispatchDeps()]);
  const swept = await sweepWebhooks(deps, startBefore);
  if (swept.events + swept.attempts + swept.deferred > 0) cloudLogger.info("webhooks swept", swept);
});

/**
 * The TUF repository (§23) takes each publish and revocation as it is committed (tuf/follower.ts);
 * only these functions hold its online key.
 */
export const tufEvents = onDocumentCreated(
  { document: "events/{eventId}", region: REGION, timeoutSeconds: 60, secrets: [params.moduleSigningKeys, params.tufOnlineKey] },
  async (event) => {
    if (event.data?.get("tufPending") !== true) return;
    const [{ applyEvents }, deps] = await Promise.all([import("./tuf/follower"), dispatchDeps()]);
    await applyEvents(deps, [event.params.eventId]);
  },
);

/**
 * Seats follow a business's paid quantity (§25): each subscription write that leaves its seats
 * pending runs the seat balancer, a bounded batch per transaction (seats/balance.ts).
 */
export const seatBalance = onDocumentWritten({ document: "subscriptions/{businessId}", region: REGION, timeoutSeconds: 300, secrets: [params.moduleSigningKeys] }, async (event) => {
  if (event.data?.after.get("seatsPending") !== true) return;
  const [{ balanceSeats }, deps] = await Promise.all([import("./seats/balance"), dispatchDeps()]);
  const moved = await balanceSeats(deps, event.params.businessId);
  if (moved.seated + moved.unseated > 0) cloudLogger.info("seats balanced", { businessId: event.params.businessId, ...moved });
});

/** Every minute: seats a trigger missed or left half-way (an instance stopped). */
export const seatSweep = onSchedule({ schedule: "every 1 minutes", region: REGION, timeoutSeconds: 300, secrets: [params.moduleSigningKeys] }, async () => {
  const [{ sweepSeats }, deps] = await Promise.all([import("./seats/balance"), dispatchDeps()]);
  const swept = await sweepSeats(deps);
  if (swept > 0) cloudLogger.info("seats swept", { businesses: swept });
});

/**
 * Every minute: what the changes of the last minute counted (§28), folded into the month documents
 * of each module, publisher and the marketplace (analytics/count-folder.ts); figures are at most
 * about two minutes behind.
 */
export const metricFold = onSchedule({ schedule: "every 1 minutes", region: REGION, timeoutSeconds: 120 }, async () => {
  const [{ foldCounts }, { getFirestore }] = await Promise.all([import("./analytics/count-folder"), import("firebase-admin/firestore")]);
  const folded = await foldCounts(getFirestore(adminApp()), { budgetMs: 50_000 });
  if (folded.records + folded.devices > 0) cloudLogger.info("counts folded", { ...folded });
});

/**
 * A SCIM group deleted or the SCIM settings changed (§25): the members follow, a bounded batch per
 * transaction (scim/directory-jobs.ts); the sweep below finishes what an instance left.
 */
export const scimDirectoryJob = onDocumentCreated({ document: "scimDirectoryJobs/{jobId}", region: REGION, timeoutSeconds: 540, secrets: [params.moduleSigningKeys] }, async (event) => {
  const [{ runDirectoryJob }, { directoryJobStore }, deps] = await Promise.all([import("./scim/directory-jobs"), import("./scim/directory-job-store"), dispatchDeps()]);
  const job = event.data ? directoryJobStore(deps.db).read(event.data) : null;
  if (!job) return;
  const moved = await runDirectoryJob(deps, job);
  cloudLogger.info("scim directory job done", { ...job, members: moved });
});

/** Every minute: SCIM directory jobs a trigger missed or left half-way. */
export const scimDirectorySweep = onSchedule({ schedule: "every 1 minutes", region: REGION, timeoutSeconds: 540, secrets: [params.moduleSigningKeys] }, async () => {
  const [{ sweepDirectoryJobs }, deps] = await Promise.all([import("./scim/directory-jobs"), dispatchDeps()]);
  const swept = await sweepDirectoryJobs(deps);
  if (swept > 0) cloudLogger.info("scim directory jobs swept", { jobs: swept });
});

/** Hourly: the verified domains whose daily check is due (§22); a TXT record missing 7 days in a row releases its domain. */
export const domainChecks = onSchedule({ schedule: "every 60 minutes", region: REGION, timeoutSeconds: 540, secrets: [params.moduleSigningKeys] }, async () => {
  const [{ recheckDomains }, deps] = await Promise.all([import("./domains/recheck"), dispatchDeps()]);
  const result = await recheckDomains(deps);
  if (result.checked > 0 || result.unreachable > 0) cloudLogger.info("verified domains checked", result);
});

/** Every 5 minutes: changes a trigger missed, and the online roles due for re-signing (timestamp, snapshot, bins). */
export const tufMaintenance = onSchedule({ schedule: "every 5 minutes", region: REGION, timeoutSeconds: 300, memory: "1GiB", secrets: [params.moduleSigningKeys, params.tufOnlineKey] }, async () => {
  const [{ sweepTuf }, deps] = await Promise.all([import("./tuf/follower"), dispatchDeps()]);
  const swept = await sweepTuf(deps);
  if (swept.events > 0 || swept.resigned?.timestamp) cloudLogger.info("tuf repository maintained", swept);
});
