import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort, LOCAL_PROJECT_ID } from "../../tools/local-stack";
import { allFree, cleanEnv, collectionsOf, dumpFirestore, listStorage, npmStart, REPOSITORY, until, untilReady, type Started } from "./support/npm-start";

/**
 * Every copyable shell block of the README and the guides, run as printed, in one shell, in the
 * order a newcomer meets them (the README, then each guide, which builds on the README's `$B`,
 * `$TOKEN` and `$BIZ`), against a fresh `npm start` on ports of its own: the only change to the
 * text is those ports. curl fails on any 4xx or 5xx answer (`fail-with-body`), and the shell
 * stops at the first failing command, naming the block. Then what the blocks wrote goes through
 * `npm start`'s export and import, and comes back whole.
 *
 * Not run: blocks with a placeholder in a command (`…`, this project's one spelling of "your
 * value here"), and the block of the two commands that start the stack and these tests.
 */

interface Block {
  where: string;
  text: string;
}

const GUIDES = path.join(REPOSITORY, "docs", "guides");
const DOCUMENTS = ["README.md", ...readdirSync(GUIDES).sort().map((name) => path.join("docs", "guides", name))];

function shellBlocks(document: string): Block[] {
  const lines = readFileSync(path.join(REPOSITORY, document), "utf8").split("\n");
  const blocks: Block[] = [];
  for (let at = 0; at < lines.length; at += 1) {
    if (!/^```(bash|sh|shell)\s*$/.test(lines[at])) continue;
    const end = lines.indexOf("```", at + 1);
    blocks.push({ where: `${document}:${at + 1}`, text: lines.slice(at + 1, end).join("\n") });
    at = end;
  }
  return blocks;
}

/** The commands of a block without its comments (`# → 201 { … }` shows an answer, not a placeholder). */
const commands = (text: string) =>
  text
    .split("\n")
    .filter((line) => !line.trim().startsWith("#"))
    .map((line) => line.replace(/\s#\s.*$/, ""))
    .join("\n");
const runnable = (block: Block) => !commands(block.text).includes("…") && !/^npm (start|test)\b/.test(block.text);

describe("the README's and the guides' blocks", () => {
  let started: Started | undefined;
  const scratch = mkdtempSync(path.join(tmpdir(), "docs-blocks-"));
  afterAll(async () => {
    started?.npm.kill("SIGTERM");
    await started?.exited;
    rmSync(scratch, { recursive: true, force: true });
  });

  it("run as printed on a fresh npm start", async () => {
    const blocks = DOCUMENTS.flatMap(shellBlocks);
    const run = blocks.filter(runnable);
    // Every document a newcomer pastes from has blocks that run, and most blocks do.
    expect(new Set(run.map((block) => block.where.split(":")[0]))).toEqual(
      new Set(["README.md", "docs/guides/billing.md", "docs/guides/desktop-app.md", "docs/guides/it-administrators.md", "docs/guides/operators.md", "docs/guides/publishers.md", "docs/guides/webhooks.md"]),
    );
    expect(run.length).toBeGreaterThanOrEqual(17);

    const ports = await Promise.all(Array.from({ length: 4 }, freePort));
    const dnsRecords = path.join(scratch, "dns-records.json");
    started = npmStart(["--fresh", "--ports", ports.join(","), "--data-dir", path.join(scratch, "data")], { DNS_RECORDS_FILE: dnsRecords });
    await untilReady(started, 90_000);

    const onTheseAddresses = (text: string) => text.replaceAll("127.0.0.1:5001", `127.0.0.1:${ports[0]}`).replaceAll("127.0.0.1:9099", `127.0.0.1:${ports[2]}`);
    const script = ["set -euo pipefail", ...run.map((block) => `echo "::block ${block.where}"\n${onTheseAddresses(block.text)}`), 'echo "::done"', "wait"].join("\n");
    writeFileSync(path.join(scratch, ".curlrc"), "fail-with-body\n");
    const shell = spawn("bash", ["-c", script], {
      cwd: REPOSITORY,
      detached: true,
      env: {
        ...cleanEnv(),
        CURL_HOME: scratch,
        DNS_RECORDS_FILE: dnsRecords,
        // What `npm start` on its usual ports gives `mpkg` and `npm run admin -- --emulators` without being told.
        MPKG_API: `http://127.0.0.1:${ports[0]}/api/v1`,
        MPKG_CONFIG_DIR: path.join(scratch, "mpkg"),
        // The desktop app example's (docs/examples/desktop-app/main.mjs): the API, and a data folder of this run's.
        MARKETPLACE_API: `http://127.0.0.1:${ports[0]}/api/v1`,
        MARKETPLACE_DATA: path.join(scratch, "desktop-app"),
        FIRESTORE_EMULATOR_HOST: `127.0.0.1:${ports[1]}`,
        FIREBASE_AUTH_EMULATOR_HOST: `127.0.0.1:${ports[2]}`,
        STORAGE_EMULATOR_HOST: `http://127.0.0.1:${ports[3]}`,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    shell.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    shell.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => shell.once("exit", (code) => resolve(code)));
    try {
      // The shell waits for the webhook receivers it started in the background: done when both printed their deliveries.
      const outcome = await Promise.race([
        exited.then((code) => ({ code })),
        until("both webhook receivers' deliveries", () => output.includes("::done") && /msg_\S+ webhook\.test /.test(output) && /msg_\S+ business\.invitation\.created .*milton@example\.com[^\n]*\n(.|\n)*msg_\S+ business\.invitation\.created .*milton@example\.com/.test(output), 120_000).then(() => ({ code: 0 })),
      ]);
      const failedBlock = [...output.matchAll(/::block (\S+)/g)].at(-1)?.[1];
      expect({ code: outcome.code, failedIn: outcome.code === 0 ? null : failedBlock, output: outcome.code === 0 ? null : output.slice(-4000) }).toEqual({ code: 0, failedIn: null, output: null });
      // What the blocks say they do, done: the domain verified through the local DNS, the two receivers' deliveries.
      expect(output).toMatch(/"domain":"initech\.example".*"verifiedAt":"\d{4}-/);
      expect(output).toMatch(/^200 \{"received":true,"eventId":"evt_local_\d+","outcome":"applied"\}$/m);
      expect(output).toMatch(/msg_\S+ webhook\.test /);
      // Milton's invitation reached both receivers: the README's (every event) and the guide's.
      expect(output.match(/msg_\S+ business\.invitation\.created .*milton@example\.com/g)).toHaveLength(2);
      // The example receiver refuses what its secret did not sign, and prints nothing of it.
      const forged = await fetch("http://127.0.0.1:4000/marketplace", {
        method: "POST",
        headers: { "content-type": "application/json", "webhook-id": "msg_forged", "webhook-timestamp": String(Math.floor(Date.now() / 1000)), "webhook-signature": "v1,AAAA" },
        body: JSON.stringify({ type: "webhook.test", timestamp: new Date().toISOString(), data: {} }),
      });
      expect(forged.status).toBe(400);
      await until("the receiver's refusal", () => output.includes("refused a delivery that is not signed with this secret (msg_forged)"), 5_000);
      expect(output).not.toMatch(/msg_forged webhook\.test/);

      // The operators' door: what all of that wrote survives `npm start`'s export and import
      // (`firebase emulators:export` layout) whole: every document of every collection, field for
      // field, and every Storage object. Compared once the stack is quiet (webhook deliveries and
      // download counters settled; the receivers stay up so nothing is left to retry).
      const firestore = `127.0.0.1:${ports[1]}`;
      const storage = `http://127.0.0.1:${ports[3]}`;
      const quiet = await until("the stack to be quiet", async () => {
        const first = await dumpFirestore(firestore, LOCAL_PROJECT_ID);
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        const second = await dumpFirestore(firestore, LOCAL_PROJECT_ID);
        return JSON.stringify([...first]) === JSON.stringify([...second]) ? second : null;
      }, 60_000);
      const objects = await listStorage(storage, `${LOCAL_PROJECT_ID}.appspot.com`);
      expect(collectionsOf(quiet).length).toBeGreaterThanOrEqual(25);
      started.npm.kill("SIGTERM");
      await started.exited;
      await until("every port to be free", () => allFree(ports), 30_000);
      started = npmStart(["--ports", ports.join(","), "--data-dir", path.join(scratch, "data")], { DNS_RECORDS_FILE: dnsRecords });
      await untilReady(started, 90_000);
      const imported = await dumpFirestore(firestore, LOCAL_PROJECT_ID);
      expect(collectionsOf(imported)).toEqual(collectionsOf(quiet));
      expect(Object.fromEntries(imported)).toEqual(Object.fromEntries(quiet));
      expect(Object.fromEntries(await listStorage(storage, `${LOCAL_PROJECT_ID}.appspot.com`))).toEqual(Object.fromEntries(objects));
    } finally {
      try {
        process.kill(-shell.pid!, "SIGTERM");
      } catch {
        // already gone
      }
      started.npm.kill("SIGTERM");
      await started.exited;
      await until("every port to be free", () => allFree(ports), 30_000);
      started = undefined;
    }
  }, 300_000);
});
