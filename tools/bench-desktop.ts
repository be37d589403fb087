/**
 * The desktop SDK (§29) against the API as deployed (bench-server.cjs), with the TUF repository
 * kept by its deployed functions in this process:
 *
 *   install      a 20 MiB module through the SDK (trust refreshed, TUF walked, bytes fetched once,
 *                SHA-256 and signature checked, unpacked, confirmed, recorded) against a raw
 *                download of the same bytes (GET /modules/download/:id, then its URL), the two
 *                taking turns; the median of the runs' ratios (raw / SDK: what verification adds)
 *   verify       the offline check of an installed module, per call (certificate, policies,
 *                revocation lists, clock), over 500 calls
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { refreshedRepository } from "../docs/examples/tuf-client";
import { buildPackage } from "../packages/mpkg/src/archive";
import { createClient } from "../packages/desktop/src";
import { systemActor } from "../functions/src/core/audit-log";
import { generateTufKey, parsePrivateKeys, signerOf } from "../functions/src/core/tuf-keys";
import type { Deps } from "../functions/src/deps";
import { createDeveloperAccount } from "../functions/src/developers/accounts";
import { runDeployedFunctions } from "../functions/src/local-functions";
import { accountPublisher } from "../functions/src/publishing/publisher";
import { publishVersion, signPackage } from "../functions/src/publishing/service";
import { initializeRepository } from "../functions/src/tuf/initialize";
import { elapsedMs, median, percentile, quick, ratiosOf, report, takingTurns, type BenchServer } from "./bench-harness";

const MODULE_ID = "desktop.big";
const PAYLOAD_BYTES = 20 * 1024 * 1024;
const VERIFY_CALLS = 500;

const newSigner = () => signerOf(parsePrivateKeys(generateTufKey())[0]);

export async function desktopRows(deps: Deps, { origin }: BenchServer) {
  const apiBase = `${origin}/api/v1`;
  await initializeRepository(deps, { root: [newSigner(), newSigner(), newSigner()], targets: newSigner(), online: deps.tufOnlineSigners[0] });
  const functions = await runDeployedFunctions(deps.db, { triggers: ["tufEvents"], schedules: {}, warn: deps.logger.warn });
  const folders: string[] = [];
  const folder = (prefix: string) => {
    const made = mkdtempSync(path.join(tmpdir(), prefix));
    folders.push(made);
    return made;
  };
  try {
    const developer = await createDeveloperAccount(deps.db, { id: "bench-desktop", email: null, displayName: "Desktop", publisherId: "desktop" }, new Date());
    const publisher = accountPublisher(developer, systemActor("bench"));
    const email = "desktop@example.test";
    const password = "desktop-password";
    await deps.auth.createUser({ email, password });
    const token = (await deps.identity.signInWithPassword(email, password)).idToken;
    const metadataDir = folder("bench-tuf-");
    writeFileSync(path.join(metadataDir, "root.json"), await (await fetch(`${apiBase}/tuf/metadata/1.root.json`)).text());
    /** Signs and publishes a 20 MiB version, and waits until the TUF repository lists it. */
    const publish = async (version: string) => {
      const bytes = await buildPackage({ id: MODULE_ID, name: "Big", version, summary: "20 MiB." }, [{ name: "payload.bin", content: randomBytes(PAYLOAD_BYTES), compress: false }]);
      await signPackage(deps, publisher, bytes);
      await publishVersion(deps, publisher, MODULE_ID, version);
      for (let tries = 0; ; tries += 1) {
        const repository = await refreshedRepository({ apiBase, metadataDir, idToken: () => token });
        if (await repository.getTargetInfo(`modules/${MODULE_ID}/${version}.mpkg`)) return;
        if (tries > 100) throw new Error(`The TUF repository does not list ${MODULE_ID}@${version}.`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const client = createClient({
      apiBase,
      dataDir: folder("bench-desktop-"),
      appVersion: "2.0.0",
      platform: "linux",
      auth: { email, password },
      firebase: { apiKey: "bench", authEmulatorHost: process.env.FIREBASE_AUTH_EMULATOR_HOST },
    });

    const runs = quick ? 2 : 6;
    const rawTimes: number[] = [];
    const sdkTimes: number[] = [];
    for (let run = 0; run < runs; run += 1) {
      const version = `1.0.${run}`;
      await publish(version);
      const raw = () =>
        elapsedMs(async () => {
          const answer = (await (await fetch(`${apiBase}/modules/download/${MODULE_ID}?version=${version}`, { headers: { Authorization: `Bearer ${token}` } })).json()) as { url: string };
          await (await fetch(answer.url)).arrayBuffer();
        });
      const install = () => elapsedMs(() => client.install(MODULE_ID, { version }));
      const pair = await takingTurns(run, raw, install);
      rawTimes.push(pair.baseline);
      sdkTimes.push(pair.target);
    }
    const { ratio, spread } = ratiosOf(
      rawTimes.map((raw, run) => raw / sdkTimes[run]),
      "runs",
    );
    report({
      name: "desktop: 20 MiB install through the SDK vs a raw download",
      ratio,
      wanted: "figure",
      ok: null,
      detail: `${median(sdkTimes).toFixed(0)} ms vs ${median(rawTimes).toFixed(0)} ms (medians); ${spread}`,
    });

    const calls: number[] = [];
    for (let call = 0; call < VERIFY_CALLS; call += 1) {
      const started = performance.now();
      const verdict = await client.verify(MODULE_ID);
      calls.push(performance.now() - started);
      if (!verdict.ok) throw new Error(`verify refused: ${verdict.reason}`);
    }
    report({
      name: "desktop: verify offline, per call",
      ratio: median(calls),
      wanted: "figure",
      ok: null,
      detail: `median ${median(calls).toFixed(2)} ms, p95 ${percentile(calls, 95).toFixed(2)} ms over ${VERIFY_CALLS} calls`,
    });
  } finally {
    await functions.stop();
    folders.forEach((made) => rmSync(made, { recursive: true, force: true }));
  }
}
