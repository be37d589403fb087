/**
 * What uploads and cold starts cost, for `npm run bench`: a sign against sha256 and one raw upload,
 * the API's memory under concurrent signs, and loading the built function against a minimal one.
 */
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { systemActor } from "../functions/src/core/audit-log";
import type { Deps } from "../functions/src/deps";
import { createDeveloperAccount } from "../functions/src/developers/accounts";
import { accountPublisher } from "../functions/src/publishing/publisher";
import { signPackage } from "../functions/src/publishing/service";
import { buildPackage } from "../packages/mpkg/src/archive";
import { elapsedMs, FUNCTIONS_DIR, median, PROJECT_ID, quick, ratiosOf, report, takingTurns, type BenchServer } from "./bench-harness";
import { rssOf } from "./bench-search";

/**
 * Sign (validate, check, store, sign, record) against sha256 + one raw upload of the same bytes:
 * a 20 MiB binary package (hashed, nothing to scan), and a 25 MiB package of 25 text files just
 * under 1 MiB each, every one of them scanned for secrets (the worst case of the package checks).
 */
export async function signCost(deps: Deps) {
  const developer = await createDeveloperAccount(deps.db, { id: "bench-signer", email: null, displayName: "Signer", publisherId: "signer" }, new Date());
  const publisher = accountPublisher(developer, systemActor("bench"));
  const runs = quick ? 2 : 6;
  const kinds = {
    "sign 20 MiB binary vs sha256 + one raw upload": (version: string) =>
      buildPackage({ id: "signer.big", name: "Big", version, summary: "20 MiB." }, [{ name: "payload.bin", content: randomBytes(20 * 1024 * 1024), compress: false }]),
    "sign 25 MiB of text, every file scanned, vs the same": (version: string) =>
      buildPackage(
        { id: "signer.text", name: "Text", version, summary: "25 MiB of text." },
        Array.from({ length: 25 }, (_, file) => ({ name: `src/file-${file}.js`, content: `// ${randomBytes(520_000).toString("hex")}\n`, compress: false })),
      ),
  };
  for (const [name, build] of Object.entries(kinds)) {
    const signTimes: number[] = [];
    const rawTimes: number[] = [];
    for (let i = 0; i < runs; i += 1) {
      const bytes = await build(`1.0.${i}`);
      const raw = () =>
        elapsedMs(async () => {
          createHash("sha256").update(bytes).digest("hex");
          await deps.store.write(`bench/raw-${i}.bin`, bytes, { contentType: "application/octet-stream" });
        });
      const sign = () => elapsedMs(() => signPackage(deps, publisher, bytes));
      const pair = await takingTurns(i, raw, sign);
      rawTimes.push(pair.baseline);
      signTimes.push(pair.target);
    }
    const { ratio, spread } = ratiosOf(rawTimes.map((raw, i) => raw / signTimes[i]), "runs");
    report({
      name,
      ratio,
      wanted: "≥ 0.8",
      ok: ratio >= 0.8,
      detail: `${median(signTimes).toFixed(0)} ms vs ${median(rawTimes).toFixed(0)} ms (medians); ${spread}`,
    });
  }
}

/** Peak RSS growth of the API's process under 16 concurrent 20 MiB signs. */
export async function signMemory(base: string, deps: Deps, { child: api }: BenchServer) {
  await deps.auth.createUser({ uid: "bench-mem", email: "mem@example.test", password: "memory-password" });
  await createDeveloperAccount(deps.db, { id: "bench-mem", email: "mem@example.test", displayName: "Memory", publisherId: "memory" }, new Date());
  const token = (await deps.identity.signInWithPassword("mem@example.test", "memory-password")).idToken;
  const payload = randomBytes(20 * 1024 * 1024);
  const packages = await Promise.all(
    Array.from({ length: 16 }, (_, i) => buildPackage({ id: "memory.big", name: "Big", version: `2.0.${i}`, summary: "20 MiB." }, [{ name: "payload.bin", content: payload, compress: false }])),
  );
  const before = rssOf(api.pid!);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(api.pid!))), 10);
  const statuses = await Promise.all(
    packages.map((bytes) =>
      fetch(`${base}/developers/modules/sign`, { method: "POST", headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/octet-stream" }, body: bytes }).then((response) => response.status),
    ),
  );
  clearInterval(sampler);
  const growthMiB = (peak - before) / 1048576;
  const unbounded = 16 * 20 * 2;
  report({
    name: "memory: 16 concurrent 20 MiB signs",
    ratio: growthMiB / unbounded,
    wanted: "≤ 1",
    ok: growthMiB < unbounded && statuses.every((status) => status === 201),
    detail: `peak RSS +${growthMiB.toFixed(0)} MiB (MAX_CONCURRENT_SIGNS ${deps.config.maxConcurrentSigns}; unbounded would hold ≥ ${unbounded} MiB); answers ${[...new Set(statuses)].join(",")}`,
  });
}

/** Loading the built function (main built it), against a minimal function with the Admin SDK: the median of 6 pairs' ratios. */
export async function coldLoad() {
  const dir = mkdtempSync(path.join(tmpdir(), "cold-"));
  const minimal = path.join(dir, "minimal.js");
  writeFileSync(
    minimal,
    `const r = require("module").createRequire(${JSON.stringify(path.join(FUNCTIONS_DIR, "package.json"))});
     const { initializeApp } = r("firebase-admin/app"); r("firebase-admin/firestore"); r("firebase-admin/storage"); r("firebase-admin/auth");
     const { onRequest } = r("firebase-functions/v2/https");
     exports.api = onRequest((req, res) => { initializeApp(); res.send("ok"); });`,
  );
  const time = (file: string) =>
    elapsedMs(() => {
      const result = spawnSync(process.execPath, ["-e", `require(${JSON.stringify(file)})`], { cwd: FUNCTIONS_DIR, env: { ...process.env, GCLOUD_PROJECT: PROJECT_ID } });
      if (result.status !== 0) throw new Error(result.stderr.toString());
    });
  const serviceTimes: number[] = [];
  const baselineTimes: number[] = [];
  for (let run = 0; run < 6; run += 1) {
    const pair = await takingTurns(run, () => time(minimal), () => time(path.join(FUNCTIONS_DIR, "lib", "index.js")));
    baselineTimes.push(pair.baseline);
    serviceTimes.push(pair.target);
  }
  const { ratio, spread } = ratiosOf(serviceTimes.map((service, run) => service / baselineTimes[run]), "pairs");
  report({
    name: "cold load vs a minimal function with the Admin SDK",
    ratio,
    wanted: "≤ 1.3",
    ok: ratio <= 1.3,
    detail: `${median(serviceTimes).toFixed(0)} ms vs ${median(baselineTimes).toFixed(0)} ms (medians); ${spread}`,
  });
}
