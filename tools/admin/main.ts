/**
 * The operator CLI: `npm run admin -- <command>` or `marketplace-admin <command>`. Each command
 * turns its arguments into one call of a service operation of `functions/src` (which validates
 * them) and prints what it returns; each command group has a file in commands/.
 * Exit codes: 0 done, 1 the operation failed, 2 the command line is wrong.
 */
import { Command, CommanderError } from "commander";
import { ApiError, exitCodeFor } from "../../functions/src/core/errors";
import { commandLine, LOCAL, UsageError, type Io } from "./cli";
import { registerAuditCommands } from "./commands/audit";
import { registerBusinessCommands } from "./commands/businesses";
import { registerMetricsCommands } from "./commands/metrics";
import { registerMigrateCommands } from "./commands/migrate";
import { registerModuleCommands } from "./commands/modules";
import { registerNoticeCommands } from "./commands/notices";
import { registerPublisherCommands } from "./commands/publishers";
import { registerPurchaseCommands } from "./commands/purchases";
import { registerReleaseCommands } from "./commands/release";
import { registerReviewCommands } from "./commands/reviews";
import { registerTufCommands } from "./commands/tuf";
import { registerUserCommands } from "./commands/users";
import { registerWebhookCommands } from "./commands/webhooks";

export type { Io } from "./cli";

export async function main(argv: string[], io: Io): Promise<number> {
  let exitCode = 0;
  const program = new Command("marketplace-admin")
    .description("Operator tool of the Marketplace API: installers, entitlements, businesses, subscriptions, module purchases.")
    .option("--emulators", `use the local emulators (${LOCAL.FIRESTORE_EMULATOR_HOST}, ${LOCAL.FIREBASE_AUTH_EMULATOR_HOST}, ${LOCAL.STORAGE_EMULATOR_HOST}; project ${LOCAL.projectId})`)
    .option("--project <id>", "Firebase project (with Application Default Credentials)")
    .option("--bucket <name>", "Storage bucket (default: STORAGE_BUCKET, else <project>.appspot.com)")
    .option("--database <id>", "a Firestore database other than (default): e.g. a backup restored for a restore drill")
    .option("--json", "print JSON instead of tables")
    .option("--actor <name>", "who you are in the audit log (default: MARKETPLACE_OPERATOR, else your login name)")
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) })
    .showHelpAfterError("(add --help for usage)");

  const cli = commandLine(io);
  for (const register of [
    registerReleaseCommands,
    registerModuleCommands,
    registerPublisherCommands,
    registerAuditCommands,
    registerReviewCommands,
    registerNoticeCommands,
    registerUserCommands,
    registerBusinessCommands,
    registerPurchaseCommands,
    registerMetricsCommands,
    registerWebhookCommands,
    registerTufCommands,
    registerMigrateCommands,
  ]) {
    register(program, cli);
  }

  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (error) {
    exitCode = exitCodeOf(error, io);
  }
  return exitCode;
}

/** Application Default Credentials that are missing or stale, as google-auth-library reports them. */
const MISSING_CREDENTIALS = /Could not load the default credentials|Could not refresh access token|default credentials/i;

/** An operation's input field as the option that sets it: periodEnd → --period-end. */
const optionOf = (field: string) => (field ? `--${field.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}` : "input");

function exitCodeOf(error: unknown, io: Io): number {
  if (error instanceof CommanderError) {
    // Commander has printed its message already.
    return error.code === "commander.helpDisplayed" || error.code === "commander.help" || error.code === "commander.version" ? 0 : 2;
  }
  if (error instanceof UsageError) {
    io.stderr.write(`error: ${error.message}\n`);
    return 2;
  }
  if (error instanceof ApiError) {
    const lines = error.errors?.length ? error.errors.map(({ path: field, message }) => `${optionOf(field)}: ${message}`) : [error.detail];
    io.stderr.write(lines.map((line) => `error: ${line}\n`).join(""));
    return exitCodeFor(error.code);
  }
  const message = (error as Error).message ?? String(error);
  if (MISSING_CREDENTIALS.test(message)) {
    io.stderr.write(
      "error: no Application Default Credentials for --project: run `gcloud auth application-default login` " +
        "(or set GOOGLE_APPLICATION_CREDENTIALS to a service-account key), or use --emulators.\n",
    );
    return 1;
  }
  io.stderr.write(`error: ${message}\n`);
  return 1;
}

if (require.main === module) {
  main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env }).then((code) => {
    process.exitCode = code;
  });
}
