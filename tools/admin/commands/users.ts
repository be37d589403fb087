/** `entitlement`, `user`: direct grants, and what the service sees of a person. */
import type { Command } from "commander";
import { grantEntitlement, revokeEntitlement } from "../../../functions/src/users/entitlements";
import { describeUser } from "../../../functions/src/users/service";
import { type Cli } from "../cli";

export function registerUserCommands(program: Command, { action }: Cli): void {
  const entitlement = program.command("entitlement").description("direct entitlement grants");
  entitlement
    .command("grant")
    .requiredOption("--user <uid|email>")
    .requiredOption("--key <key>")
    .action(action((ctx, options: { user: string; key: string }) => grantEntitlement(ctx, options)));
  entitlement
    .command("revoke")
    .requiredOption("--user <uid|email>")
    .requiredOption("--key <key>")
    .action(action((ctx, options: { user: string; key: string }) => revokeEntitlement(ctx, options)));

  program
    .command("user")
    .description("users")
    .command("show")
    .description("profile, effective entitlements with their sources, businesses, activations and devices")
    .requiredOption("--user <uid|email>")
    .action(action((ctx, options: { user: string }) => describeUser(ctx, options)));
}
