import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { freePort } from "../../tools/local-stack";
import { generateModuleSigningKeys } from "../../tools/local-keys";

/**
 * What `firebase deploy` ships, run by the Functions emulator: the compiled `lib/`, discovered
 * through firebase.json, with its params and secret, serving /api/v1 through `api`.
 */
const root = path.join(__dirname, "..", "..");
const functionsDir = path.join(root, "functions");
const secretFile = path.join(functionsDir, ".secret.local");
// The emulator writes the params' values here when the file is missing.
const paramsFile = path.join(functionsDir, ".env.local");

describe("the deployable function in the Functions emulator", () => {
  let emulator: ChildProcess | undefined;
  let createdSecret = false;
  const hadParamsFile = existsSync(paramsFile);
  let config: string | undefined;

  afterAll(async () => {
    if (emulator?.pid && emulator.exitCode === null) {
      const exited = new Promise((resolve) => emulator!.once("exit", resolve));
      process.kill(-emulator.pid, "SIGINT");
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
      if (emulator.exitCode === null) process.kill(-emulator.pid, "SIGKILL");
    }
    if (createdSecret) rmSync(secretFile, { force: true });
    if (!hadParamsFile) rmSync(paramsFile, { force: true });
    if (config) rmSync(config, { force: true });
  });

  it("loads lib/ and answers /api/v1 through the api function", async () => {
    await promisify(execFile)("npm", ["run", "build"], { cwd: functionsDir });
    if (!existsSync(secretFile)) {
      writeFileSync(secretFile, `MODULE_SIGNING_KEYS=${JSON.stringify(await generateModuleSigningKeys())}\n`);
      createdSecret = true;
    }
    const [functionsPort, hubPort, loggingPort, eventarcPort, tasksPort] = await Promise.all(Array.from({ length: 5 }, freePort));
    const projectId = "demo-marketplace-smoke";
    config = path.join(root, `.firebase-smoke-${process.pid}.json`);
    writeFileSync(
      config,
      JSON.stringify({
        functions: [{ source: "functions", codebase: "default", runtime: "nodejs24" }],
        emulators: {
          functions: { host: "127.0.0.1", port: functionsPort },
          hub: { host: "127.0.0.1", port: hubPort },
          logging: { host: "127.0.0.1", port: loggingPort },
          eventarc: { host: "127.0.0.1", port: eventarcPort },
          tasks: { host: "127.0.0.1", port: tasksPort },
          ui: { enabled: false },
        },
      }),
    );
    let output = "";
    emulator = spawn(
      path.join(root, "node_modules", ".bin", "firebase"),
      ["emulators:start", "--only", "functions", "--project", projectId, "--config", config],
      { cwd: root, detached: true, stdio: ["ignore", "pipe", "pipe"] },
    );
    emulator.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    emulator.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));

    const base = `http://127.0.0.1:${functionsPort}/${projectId}/us-central1/api/api/v1`;
    const deadline = Date.now() + 90_000;
    let health: Response | null = null;
    while (Date.now() < deadline && emulator.exitCode === null) {
      health = await fetch(`${base}/health`).catch(() => null);
      if (health?.status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    if (health?.status !== 200) throw new Error(`The Functions emulator did not serve the api function:\n${output.slice(-3000)}`);
    expect(await health.json()).toEqual({ status: "ok" });

    const keys = await fetch(`${base}/signing-keys`);
    expect(keys.status).toBe(200);
    expect(((await keys.json()) as { keys: unknown[] }).keys).toHaveLength(1);

    const unknown = await fetch(`${base}/nope`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  }, 150_000);
});
