import type { Command } from "commander";
import type { Cli } from "../cli";
import { unwrap, UsageError } from "../problems";

/** `tokens create|list|revoke`: publisher access tokens for CI. */
export function registerTokenCommands(program: Command, { print, asPublisher }: Cli): void {
  const tokens = program.command("tokens").description("publisher access tokens for CI (need `mpkg login`)");
  tokens
    .command("create")
    .description("create a token; it is printed once: store it as the MPKG_TOKEN secret of your CI")
    .requiredOption("--name <name>", "what it is for, e.g. 'GitHub Actions'")
    .option("--expires-in-days <days>", "1-365 (default 90)")
    .action(async (options: { name: string; expiresInDays?: string }, command: Command) => {
      const expiresInDays = options.expiresInDays === undefined ? undefined : Number(options.expiresInDays);
      if (expiresInDays !== undefined && !Number.isInteger(expiresInDays)) throw new UsageError("--expires-in-days must be a whole number, e.g. 90.");
      const { client } = await asPublisher(command, false);
      print(command, unwrap(await client.POST("/developers/tokens", { body: { name: options.name, ...(expiresInDays !== undefined ? { expiresInDays } : {}) } })));
    });
  tokens
    .command("list")
    .description("your tokens (never their secrets)")
    .action(async (_options: object, command: Command) => {
      const { client } = await asPublisher(command, false);
      print(command, unwrap(await client.GET("/developers/tokens")).items);
    });
  tokens
    .command("revoke")
    .description("revoke a token at once")
    .argument("<id>", "the token's id (tok_…)")
    .action(async (id: string, _options: object, command: Command) => {
      const { client } = await asPublisher(command, false);
      const answer = await client.DELETE("/developers/tokens/{id}", { params: { path: { id } } });
      if (!answer.response.ok) unwrap(answer);
      print(command, { id, revoked: true });
    });
}
