import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { main } from "./main";

/** The CLI's argument handling: what is refused before any backend is asked (exit code 2). */
async function run(...argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
  });
  return { code, stdout, stderr };
}

describe("operator CLI arguments", () => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), "cli-args-")), "Setup.exe");
  writeFileSync(file, "MZ");
  const publish = (...args: string[]) => run("--project", "offline", "release", "publish", "--file", file, ...args);

  it("answers --help at every level with exit 0", async () => {
    for (const args of [["--help"], ["release", "publish", "--help"], ["subscription", "set", "--help"]]) {
      expect(await run(...args)).toMatchObject({ code: 0, stdout: expect.stringMatching(/Usage:/) });
    }
  });

  it.each([
    [["frobnicate"], /unknown command/],
    [["release", "list", "--bogus"], /unknown option/],
    [["release", "list"], /Pass --project <id>/],
  ])("refuses %p with exit 2", async (args, message) => {
    const result = await run(...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it.each([
    [["--version", "1.0", "--platform", "win32", "--arch", "x64"], "error: --version: must be a semver version such as 1.2.3\n"],
    [["--version", "1.0.0", "--platform", "amiga", "--arch", "x64"], 'error: --platform: Invalid option: expected one of "win32"|"darwin"|"linux"\n'],
    [["--version", "1.0.0", "--platform", "win32", "--arch", "x64", "--channel", "nightly"], 'error: --channel: Invalid option: expected one of "stable"|"beta"\n'],
  ])("validates %p with the service's own schema, once, and names the option (exit 2)", async (args, message) => {
    expect(await publish(...args)).toMatchObject({ code: 2, stderr: message });
  });

  it("names the option of a subscription field it refuses", async () => {
    const base = ["--project", "offline", "subscription", "set", "--business", "b", "--status", "active", "--plan", "team"];
    expect(await run(...base, "--period-end", "31/12/2026")).toMatchObject({ code: 2, stderr: "error: --period-end: must be an RFC 3339 date, e.g. 2026-12-31 or 2026-12-31T00:00:00Z\n" });
    expect(await run(...base, "--period-end", "2026-12-31", "--seats", "five")).toMatchObject({ code: 2, stderr: "error: --seats: must be a whole number, e.g. 5\n" });
  });
});
