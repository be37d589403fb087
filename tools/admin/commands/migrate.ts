/** `migrate`: data written in an older shape, moved to the current one (idempotent, resumable). */
import type { Command } from "commander";
import { migrateMembers } from "../../../functions/src/businesses/members-migration";
import { migrateSeats } from "../../../functions/src/businesses/seats-migration";
import type { Cli } from "../cli";

export function registerMigrateCommands(program: Command, { action }: Cli): void {
  const migrate = program.command("migrate").description("move data written in an older shape to the current one; safe to run again, and goes on where a stopped run left off");
  migrate
    .command("members")
    .description("businesses whose members are still in the business's document (before §25): each member gets a document of its own, then the old fields go")
    .action(action((ctx) => migrateMembers(ctx)));
  migrate
    .command("seats")
    .description("seats given before the seat shards (§25): each counted in its holder's home shard; safe while the API serves")
    .action(action((ctx) => migrateSeats(ctx)));
}
