import { main } from "../../../tools/admin/main";

/** Runs the CLI in this process against the test emulators; returns its exit code and output. */
export async function runAdmin(argv: string[], options: { terminal?: boolean } = {}) {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text), isTTY: options.terminal ?? false, columns: 120 } as { write(text: string): unknown; isTTY: boolean },
    env: process.env,
  });
  return { code, stdout, stderr };
}

export const admin = (...argv: string[]) => runAdmin(argv);

export const json = async (...argv: string[]) => {
  const result = await admin("--json", ...argv);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  return JSON.parse(result.stdout);
};
