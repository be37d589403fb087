/** `notices`, `flaggers`, `trader`: the Digital Services Act's notices (§30), the trusted flaggers whose notices come first, and traders. */
import type { Command } from "commander";
import { listNotices, listTrustedFlaggers, setTrustedFlagger, showNotice } from "../../../functions/src/notices/service";
import { showTrader } from "../../../functions/src/traders/service";
import { type Cli } from "../cli";

export function registerNoticeCommands(program: Command, { action }: Cli): void {
  const notices = program.command("notices").description("notices about modules and reviews (§30): the queue, one notice");
  notices
    .command("list")
    .description("the queue: trusted flaggers' notices first, then the oldest first")
    .option("--status <status>", "open (default) or decided")
    .option("--limit <n>", "at most this many (default 100)")
    .action(action((ctx, options: { status?: string; limit?: string }) => listNotices(ctx, options)));
  notices
    .command("show")
    .description("one notice, with its reporter")
    .argument("<id>")
    .action(action((ctx, id: string) => showNotice(ctx, id)));

  const flaggers = program.command("flaggers").description("trusted flaggers (Art. 22): accounts whose notices come first");
  flaggers
    .command("add")
    .description("names a trusted flagger by the verified email of their account (an audit entry)")
    .argument("<email>")
    .action(action((ctx, email: string) => setTrustedFlagger(ctx, email, true)));
  flaggers
    .command("remove")
    .description("no longer a trusted flagger (an audit entry)")
    .argument("<email>")
    .action(action((ctx, email: string) => setTrustedFlagger(ctx, email, false)));
  flaggers
    .command("list")
    .description("the trusted flaggers")
    .action(action((ctx) => listTrustedFlaggers(ctx)));

  program
    .command("trader")
    .description("traders (Art. 30): who sells")
    .command("show")
    .description("a publisher's trader declaration, and the developer who made it")
    .argument("<publisherId>")
    .action(action((ctx, publisherId: string) => showTrader(ctx, publisherId)));
}
