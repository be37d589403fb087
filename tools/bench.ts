/**
 * `npm run bench`: speed and memory of the hot paths, against targets, on the local emulators
 * (its own ports and project). Loops are bounded; all traffic stays on 127.0.0.1.
 *
 *   inspect   .mpkg validation (every entry inflated): throughput and extra memory, 20 MiB package
 *   sign      POST /developers/modules/sign of a 5 MiB package, end to end (validate, store, sign, record)
 *   list      GET /modules with 300 listed modules: first page, search, with a token (access flags)
 */
import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import { createApp } from "../functions/src/app";
import { silentLogger } from "../functions/src/core/logger";
import { moduleStore } from "../functions/src/modules/module-store";
import { inspectPackage } from "../functions/src/modules/package";
import { createDeveloperAccount } from "../functions/src/developers/accounts";
import { localDeps } from "../functions/src/local";
import { searchTerms } from "../functions/src/modules/search";
import { generateModuleSigningKeys, throwawayServiceAccount } from "./local-keys";
import { freePort, startLocalStack } from "./local-stack";
import { buildPackage } from "./mpkg";

const PROJECT_ID = "demo-marketplace-bench";

interface Result {
  name: string;
  value: number;
  unit: string;
  target: number;
  better: "higher" | "lower";
}

const results: Result[] = [];
const record = (result: Result) => {
  results.push(result);
  const ok = result.better === "higher" ? result.value >= result.target : result.value <= result.target;
  console.log(`${ok ? "ok  " : "MISS"} ${result.name.padEnd(44)} ${result.value.toFixed(1).padStart(8)} ${result.unit.padEnd(5)} (target ${result.better === "higher" ? "≥" : "≤"} ${result.target})`);
  return ok;
};

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

async function timed<T>(run: () => Promise<T>): Promise<[T, number]> {
  const started = process.hrtime.bigint();
  const value = await run();
  return [value, Number(process.hrtime.bigint() - started) / 1e6];
}

async function main(): Promise<number> {
  const [firestore, auth, storage, api] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  for (const name of ["FIRESTORE_EMULATOR_HOST", "FIREBASE_AUTH_EMULATOR_HOST", "STORAGE_EMULATOR_HOST", "FIREBASE_STORAGE_EMULATOR_HOST"]) delete process.env[name];
  const stack = await startLocalStack({ projectId: PROJECT_ID, ports: { firestore, auth, storage } });
  Object.assign(process.env, stack.env, { GCLOUD_PROJECT: PROJECT_ID });
  let server: Server | undefined;
  try {
    const deps = await localDeps({
      serviceAccount: throwawayServiceAccount(PROJECT_ID),
      env: { ...process.env, MODULE_SIGNING_KEYS: await generateModuleSigningKeys(), RATE_LIMIT_PER_IP_PER_MINUTE: "100000", RATE_LIMIT_PER_USER_PER_MINUTE: "100000" },
      logger: silentLogger,
      appName: "bench",
    });
    server = createApp(deps).listen(api, "127.0.0.1");
    const base = `http://127.0.0.1:${api}/api/v1`;
    let allOk = true;

    // inspect ---------------------------------------------------------------------------
    const files = Array.from({ length: 40 }, (_, i) => ({
      name: `assets/${i}.bin`,
      // Half random (incompressible), half text: a realistic ratio.
      content: i % 2 ? randomBytes(512 * 1024) : Buffer.from(`line ${i} of a module asset\n`.repeat(20_000)),
    }));
    const big = await buildPackage({ id: "bench.big", name: "Big", version: "1.0.0", summary: "Benchmark package." }, files);
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    let peakRss = rssBefore;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 5);
    const inspectTimes: number[] = [];
    for (let i = 0; i < 5; i += 1) inspectTimes.push((await timed(() => inspectPackage(big)))[1]);
    clearInterval(sampler);
    const uncompressedMiB = files.reduce((sum, file) => sum + file.content.length, 0) / 1024 / 1024;
    allOk = record({ name: `inspect: ${(big.length / 1048576).toFixed(1)} MiB package (${uncompressedMiB.toFixed(0)} MiB unpacked)`, value: uncompressedMiB / (percentile(inspectTimes, 50) / 1000), unit: "MiB/s", target: 100, better: "higher" }) && allOk;
    allOk = record({ name: "inspect: extra memory at peak", value: (peakRss - rssBefore) / 1048576, unit: "MiB", target: 64, better: "lower" }) && allOk;

    // sign ------------------------------------------------------------------------------
    const developerUser = await deps.auth.createUser({ email: "bench@example.test", password: "bench-password" });
    await createDeveloperAccount(deps.db, { id: developerUser.uid, email: "bench@example.test", displayName: "Bench", publisherId: "bench" }, new Date());
    const developerToken = (await deps.identity.signInWithPassword("bench@example.test", "bench-password")).idToken;
    const signTimes: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const bytes = await buildPackage({ id: "bench.signed", name: "Signed", version: `1.0.${i}`, summary: "Benchmark." }, [{ name: "payload.bin", content: randomBytes(5 * 1024 * 1024) }]);
      const [response, ms] = await timed(() =>
        fetch(`${base}/developers/modules/sign`, { method: "POST", headers: { Authorization: `Bearer ${developerToken}`, "Content-Type": "application/octet-stream" }, body: bytes }),
      );
      if (response.status !== 201) throw new Error(`sign answered ${response.status}: ${await response.text()}`);
      signTimes.push(ms);
    }
    allOk = record({ name: "sign: 5 MiB package, p50", value: percentile(signTimes, 50), unit: "ms", target: 1500, better: "lower" }) && allOk;

    // list ------------------------------------------------------------------------------
    const now = Date.now();
    for (let chunk = 0; chunk < 3; chunk += 1) {
      const batch = deps.db.batch();
      for (let i = chunk * 100; i < (chunk + 1) * 100; i += 1) {
        const id = `bench.module-${i}`;
        const listing = { name: `Module ${i}`, summary: `Tool number ${i} for ${i % 2 ? "charts" : "notes"}.`, category: i % 3 ? "data" : "productivity", ...(i % 4 ? {} : { entitlement: "pro" }) };
        moduleStore(deps.db).setModule(batch, {
          id,
          ...listing,
          publisherId: "bench",
          developerId: developerUser.uid,
          latestVersion: "1.0.0",
          createdAt: new Date(now - i * 1000),
          updatedAt: new Date(now - i * 1000),
          listed: true,
          searchTerms: searchTerms(id, listing.name, listing.summary),
        });
      }
      await batch.commit();
    }
    await deps.auth.createUser({ email: "reader@example.test", password: "reader-password" });
    const userToken = (await deps.identity.signInWithPassword("reader@example.test", "reader-password")).idToken;
    for (const [name, path, token] of [
      ["list: first page (20), anonymous", "/modules", undefined],
      ["list: q=charts&category=data", "/modules?q=charts&category=data", undefined],
      ["list: first page with a token (access flags)", "/modules", userToken],
    ] as const) {
      const times: number[] = [];
      for (let i = 0; i < 60; i += 1) {
        const [response, ms] = await timed(() => fetch(`${base}${path}`, { headers: token ? { Authorization: `Bearer ${token}` } : {} }));
        if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
        await response.arrayBuffer();
        if (i >= 10) times.push(ms);
      }
      allOk = record({ name: `${name}, p95`, value: percentile(times, 95), unit: "ms", target: token ? 250 : 150, better: "lower" }) && allOk;
    }
    console.log(allOk ? "\nAll targets met." : "\nSome targets missed.");
    return allOk ? 0 : 1;
  } finally {
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    await stack.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
