/** `publisher`: the verified badge (§24). */
import type { Command } from "commander";
import { unverifyPublisher, verifyPublisher } from "../../../functions/src/publishers/service";
import { type Cli } from "../cli";

export function registerPublisherCommands(program: Command, { action }: Cli): void {
  const publisher = program.command("publisher").description("publishers: the verified badge on their modules (§24)");
  publisher
    .command("verify")
    .description("mark a publisher verified for a domain you checked it controls: its modules show the badge and the domain")
    .argument("<publisherId>")
    .requiredOption("--domain <domain>", "the domain shown beside the publisher's name, e.g. example.com")
    .action(action((ctx, publisherId: string, options: { domain: string }) => verifyPublisher(ctx, { publisherId, domain: options.domain })));
  publisher
    .command("unverify")
    .description("take the verified badge away")
    .argument("<publisherId>")
    .action(action((ctx, publisherId: string) => unverifyPublisher(ctx, { publisherId })));
}
