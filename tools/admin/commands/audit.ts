/** `audit`: who did what, newest first. */
import type { Command } from "commander";
import { listAudit } from "../../../functions/src/audit/service";
import { type Cli } from "../cli";

export function registerAuditCommands(program: Command, { action }: Cli): void {
  program
    .command("audit")
    .description("the audit log")
    .command("list")
    .description("newest entries first")
    .option("--target <id>", "a module (its versions' entries included), moduleId@version, release id, business id, uid or SHA-256")
    .option("--since <date>", "RFC 3339 date or date-time")
    .option("--limit <n>", "at most this many (default 100)")
    .action(action((ctx, options: { target?: string; since?: string; limit?: string }) => listAudit(ctx, options)));
}
