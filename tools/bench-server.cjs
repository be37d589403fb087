// A server for `npm run bench`, in a process of its own so that its memory and CPU are its own:
// the API on the emulators named by the environment (`--api`); a bare Express handler (`--bare`),
// the baseline of public reads; the API whose downloads are not counted (`--api-uncounted`), the
// baseline of counting (§28); or the ceiling of authenticated reads (`--ceiling`): a handler
// that does only the Firestore reads the same answers need (the user document, the memberships and
// the caller's purchases and the activations in parallel, then the businesses, their subscriptions
// and purchases) with everything else ready in memory.
//
// Plain JavaScript on the compiled function (functions/lib, what deploy ships), run by node
// itself: no TypeScript loader's helpers or source-mapped stack traces (the Firestore SDK records
// a stack at every call) in any of the three. It listens on a port of the system's choosing, sends
// that port over IPC once it listens, and
// answers the message "counts" with its backend call counts and the CPU time it has used, once its
// pending download counts are written, and "limits" with the writes it made per document and its
// largest commit since "limits-reset" (bench-limits.cjs).
const path = require("node:path");

// Before the Firestore client is used: every commit is recorded (bench-limits.cjs).
const writeLimits = require("./bench-limits.cjs");
const lib = (name) => require(path.join(__dirname, "..", "functions", "lib", name));
const express = require(path.join(__dirname, "..", "functions", "node_modules", "express"));
const { createApp } = lib("app");
const { backendCallCounts } = lib("core/deadline");
const { silentLogger } = lib("core/logger");
const { localDeps, localServer } = lib("local");
const { drainDownloadCounters } = lib("marketplace/download-counter");

async function main() {
  let handler;
  if (process.argv.includes("--bare")) {
    handler = express();
    handler.get("/", (_req, res) => res.json({ status: "ok" }));
  } else {
    // BENCH_VERBOSE=1 shows what the server logs, on stderr.
    const line = (level) => (message, fields) => process.stderr.write(`${level} ${message} ${JSON.stringify(fields ?? {})}\n`);
    const logger = process.env.BENCH_VERBOSE ? { info: line("INFO"), warn: line("WARN"), error: line("ERROR") } : silentLogger;
    const deps = await localDeps({ serviceAccount: JSON.parse(process.env.BENCH_SERVICE_ACCOUNT), env: process.env, logger, appName: "bench-server" });
    // The baseline of counted downloads (§28): the same API, its download counter writing nothing.
    if (process.argv.includes("--api-uncounted")) lib("marketplace/download-store").downloadStore = () => ({ add: async () => undefined });
    handler = process.argv.includes("--ceiling")
      ? await minimalReads(deps.db, process.env.BENCH_MODULE_ID, await deps.store.signedReadUrl(process.env.BENCH_STORAGE_PATH, { ttlSeconds: 900 }))
      : createApp(deps);
  }
  const server = localServer(handler).listen(0, "127.0.0.1", () => process.send?.({ port: server.address().port }));
  process.on("message", async (message) => {
    // Counts reported after every pending download count is written.
    if (message === "limits") process.send?.({ limits: writeLimits.limits() });
    if (message === "limits-reset") {
      writeLimits.reset();
      process.send?.({ limitsReset: true });
    }
    if (message === "counts") {
      const drained = await drainDownloadCounters();
      const cpu = process.cpuUsage();
      process.send?.({ counts: { ...backendCallCounts(), "CPU µs": cpu.user + cpu.system }, drained });
    }
  });
  process.on("disconnect", () => process.exit(0));
}

/** The least a server can do for GET /users/me, GET /modules with a token and a download. */
async function minimalReads(db, moduleId, signed) {
  const app = express();
  const page = (await db.collection("modules").where("listed", "==", true).orderBy("updatedAt", "desc").limit(20).get()).docs.map((doc) => ({ id: doc.id, ...doc.data() }));
  const version = (await db.doc(`modules/${moduleId}/versions/1.0.0`).get()).data();
  // The emulator's tokens are unsigned JWTs: the uid is read, not verified (the API's verification is cached too).
  const uidOf = (req) => JSON.parse(Buffer.from(req.get("authorization").split(".")[1], "base64url").toString()).user_id;
  const purchasesOf = (ownerKeys) => db.collection("purchases").where("ownerKey", "in", ownerKeys).get();
  const callerData = async (uid, withActivations) => {
    const [user, memberships, ownPurchases, activations] = await Promise.all([
      db.doc(`users/${uid}`).get(),
      db.collection(`users/${uid}/memberships`).get(),
      purchasesOf([`user:${uid}`]),
      withActivations ? db.collection(`users/${uid}/activations`).get() : null,
    ]);
    const ids = memberships.docs.map((doc) => doc.id);
    const [businesses, subscriptions, businessPurchases] =
      ids.length === 0
        ? [[], [], { docs: [] }]
        : await Promise.all([db.getAll(...ids.map((id) => db.doc(`businesses/${id}`))), db.getAll(...ids.map((id) => db.doc(`subscriptions/${id}`))), purchasesOf(ids.map((id) => `business:${id}`))]);
    return {
      user: user.data() ?? null,
      businesses: businesses.map((doc, index) => ({ ...doc.data(), member: memberships.docs[index].data() })),
      subscriptions: subscriptions.map((doc) => doc.data()),
      purchases: [...ownPurchases.docs, ...businessPurchases.docs].map((doc) => doc.data()),
      activations: activations?.docs.map((doc) => doc.data()) ?? [],
    };
  };
  app.get("/api/v1/users/me", async (req, res) => res.json(await callerData(uidOf(req), true)));
  app.get("/api/v1/modules", async (req, res) => res.json({ items: page, caller: await callerData(uidOf(req), true) }));
  app.get("/api/v1/modules/download/:id", async (req, res) => {
    await callerData(uidOf(req), false);
    res.json({ moduleId, version: "1.0.0", url: signed.url, expiresAt: signed.expiresAt.toISOString(), sha256: version.sha256, size: version.size, signature: version.signature });
  });
  return app;
}

void main();
