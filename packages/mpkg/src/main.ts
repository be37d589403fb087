import { Command, CommanderError } from "commander";
import { commandLine, type Io } from "./cli";
import { registerAccountCommands } from "./commands/account";
import { registerKeyCommands } from "./commands/keys";
import { registerPackageCommands } from "./commands/packages";
import { registerStatsCommands } from "./commands/stats";
import { registerTokenCommands } from "./commands/tokens";
import { registerVerifyCommands } from "./commands/verify";
import { ProblemError, UsageError } from "./problems";
import { DEFAULT_API } from "./session";
import { VerificationError } from "./verify";

export type { Io } from "./cli";

/**
 * `mpkg`, the publisher CLI (contract §12). Exit codes: 0 done; 1 the operation failed (the API
 * refused it, a signature does not verify, the network); 2 the command line or its input is
 * wrong (unknown option, a package the rules refuse, a 400/413/415/422 answer).
 */
export async function run(argv: string[], io: Io): Promise<number> {
  const program = new Command("mpkg")
    .description("Publish modules to the Marketplace: pack, publish, verify, yank; access tokens; author keys; download statistics.")
    .option("--api <url>", `the API's base URL, ending in /api/v1 (env MPKG_API; default ${DEFAULT_API})`)
    .option("--json", "print JSON instead of text")
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) })
    .showHelpAfterError("(add --help for usage)")
    .addHelpText(
      "after",
      `
Credentials: MPKG_TOKEN (a publisher access token mpt_…, or a trusted-publishing token mpo_…
from POST /developers/auth/oidc) for pack/publish/yank/stats in CI,
else the login saved by \`mpkg login\` (in $MPKG_CONFIG_DIR, else $XDG_CONFIG_HOME/mpkg or
~/.config/mpkg; \`mpkg logout\` forgets it). Exit codes: 0 done, 1 failed, 2 wrong command line or input.`,
    );

  const cli = commandLine(io);
  for (const register of [registerPackageCommands, registerVerifyCommands, registerTokenCommands, registerKeyCommands, registerStatsCommands, registerAccountCommands]) {
    register(program, cli);
  }

  try {
    await program.parseAsync(keyIdsAsOperands(argv), { from: "user" });
    return 0;
  } catch (error) {
    return exitCodeOf(error, io);
  }
}

/** A key id's shape: an RFC 7638 thumbprint, 43 characters of base64url. */
const KEY_ID = /^-[A-Za-z0-9_-]{42}$/;

/**
 * Key ids are base64url, so one in 32 starts with '-', and commander would take it for an
 * unknown option. A word of exactly a key id's shape (no option has it) is moved behind `--`,
 * where it can only be an operand, wherever it stood among the options.
 */
export function keyIdsAsOperands(argv: string[]): string[] {
  const end = argv.indexOf("--");
  const before = end === -1 ? argv : argv.slice(0, end);
  const after = end === -1 ? [] : argv.slice(end + 1);
  const ids = before.filter((word) => KEY_ID.test(word));
  return ids.length === 0 ? argv : [...before.filter((word) => !KEY_ID.test(word)), "--", ...ids, ...after];
}

function exitCodeOf(error: unknown, io: Io): number {
  if (error instanceof CommanderError) {
    return ["commander.helpDisplayed", "commander.help", "commander.version"].includes(error.code) ? 0 : 2;
  }
  const unreachable = networkErrorCode(error);
  const message = unreachable
    ? `cannot reach the API (${unreachable}): is it running, and are --api / MPKG_API right?`
    : error instanceof Error
      ? error.message
      : String(error);
  io.stderr.write(`error: ${message}\n`);
  if (error instanceof UsageError) return 2;
  if (error instanceof ProblemError) return error.exitCode;
  if (error instanceof VerificationError) return 1;
  return 1;
}

/** The system error code of a failed connection (fetch wraps it in `cause`), if that is what this is. */
function networkErrorCode(error: unknown): string | null {
  const code = (error as { code?: unknown; cause?: { code?: unknown } }).cause?.code ?? (error as { code?: unknown }).code;
  return typeof code === "string" && /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|UND_ERR_\w+)$/.test(code) ? code : null;
}
