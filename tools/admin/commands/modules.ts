/** `module`, `review`, `blocklist`: module summaries, revocations (the kill switch), quarantined versions, refused files. */
import type { Command } from "commander";
import { addToBlocklist, listBlocklist, removeFromBlocklist } from "../../../functions/src/checks/blocklist";
import { approveVersion, listQuarantined, rejectVersion } from "../../../functions/src/publishing/review";
import { rebuildVersionSummaries } from "../../../functions/src/publishing/service";
import { listRevocations, revokeModule, unrevokeModule } from "../../../functions/src/revocations/service";
import { type Cli } from "../cli";

export function registerModuleCommands(program: Command, { action }: Cli): void {
  const module = program.command("module").description("modules");
  module
    .command("rebuild-summaries")
    .description("recompute every module's summary of published versions and file published names for the look-alike check (idempotent)")
    .action(action((ctx) => rebuildVersionSummaries(ctx)));
  module
    .command("revoke")
    .description("revoke a version (or, without --version, every version): never downloaded or confirmed again, refused by the app even offline")
    .argument("<moduleId>")
    .option("--version <semver>")
    .requiredOption("--reason <text>", "shown to the publisher and in the signed revocation list")
    .action(action((ctx, moduleId: string, options: { version?: string; reason: string }) => revokeModule(ctx, { moduleId, ...options })));
  module
    .command("unrevoke")
    .description("lift a version's revocation (or, without --version, the module's and every version's)")
    .argument("<moduleId>")
    .option("--version <semver>")
    .action(action((ctx, moduleId: string, options: { version?: string }) => unrevokeModule(ctx, { moduleId, ...options })));
  module
    .command("revocations")
    .description("the revocation list as it stands, with its serial")
    .action(action((ctx) => listRevocations(ctx)));

  const review = program.command("review").description("versions quarantined by the package checks (look-alike names)");
  review
    .command("list")
    .description("quarantined versions with their findings, oldest first")
    .action(action((ctx) => listQuarantined(ctx)));
  review
    .command("approve")
    .description("let the publisher publish a quarantined version")
    .argument("<moduleId>")
    .argument("<version>")
    .option("--note <text>")
    .action(action((ctx, moduleId: string, version: string, options: { note?: string }) => approveVersion(ctx, { moduleId, version, ...options })));
  review
    .command("reject")
    .description("reject a quarantined version: its package is deleted and the publisher sees the reason")
    .argument("<moduleId>")
    .argument("<version>")
    .requiredOption("--reason <text>")
    .action(action((ctx, moduleId: string, version: string, options: { reason: string }) => rejectVersion(ctx, { moduleId, version, ...options })));

  const blocklist = program.command("blocklist").description("SHA-256s of files and packages refused at sign");
  blocklist
    .command("add")
    .description("refuse a file or package by its SHA-256; published packages with it are revoked")
    .argument("<sha256>")
    .requiredOption("--reason <text>")
    .action(action((ctx, sha256: string, options: { reason: string }) => addToBlocklist(ctx, { sha256, ...options })));
  blocklist
    .command("remove")
    .argument("<sha256>")
    .action(action((ctx, sha256: string) => removeFromBlocklist(ctx, { sha256 })));
  blocklist
    .command("list")
    .action(action((ctx) => listBlocklist(ctx)));
}
