/** `release`: the desktop installers: publish, rollouts and automatic ramps, yank, health (§7, §19). */
import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import { ARCHES, CHANNELS, PLATFORMS } from "../../../functions/src/releases/rules";
import { backfillSha512, listReleasesFor, publishRelease, releaseHealth, releaseStatus, removeRelease, setRamp, setRollout, stopRamp, tickRamps, unyankRelease, yankRelease } from "../../../functions/src/releases/service";
import { oneOf, type Cli } from "../cli";
import { uploadProgress } from "../output";

interface PublishOptions {
  file: string;
  version: string;
  platform: string;
  arch: string;
  channel?: string;
  notes?: string;
  replace?: boolean;
  rollout?: string;
  blockmap?: string;
  ramp?: string;
  every?: string;
  maxFailureRate?: string;
  maxCrashRate?: string;
  minReports?: string;
}

export function registerReleaseCommands(program: Command, { action, jsonOutput, io }: Cli): void {
  const release = program.command("release").description("desktop installer releases");
  release
    .command("publish")
    .description("upload an installer and publish its release")
    .requiredOption("--file <path>", "the installer file")
    .requiredOption("--version <semver>", "release version")
    .requiredOption("--platform <platform>", oneOf(PLATFORMS))
    .requiredOption("--arch <arch>", oneOf(ARCHES))
    .option("--channel <channel>", `${oneOf(CHANNELS)} (default stable)`)
    .option("--notes <text>", 'release notes (with --replace: kept unless given; --notes "" clears them)')
    .option("--replace", "overwrite an existing release of the same version, platform, arch and channel")
    .option("--rollout <percentage>", "share of callers offered the release, 0-100 (default 100)")
    .option("--blockmap <file>", "the .blockmap electron-builder wrote beside the installer: differential updates (checked against the installer)")
    .option("--ramp <steps>", "an automatic ramp, e.g. 1,5,25,50,100 (with --every; see release ramp)")
    .option("--every <hours>", "with --ramp: the least hours a step lasts")
    .option("--max-failure-rate <rate>", "with --ramp (default 0.02)")
    .option("--max-crash-rate <rate>", "with --ramp (default 0.01)")
    .option("--min-reports <n>", "with --ramp (default 50)")
    .action(
      action(async (ctx, options: PublishOptions, command: Command) => {
        const { file, blockmap, ramp, every, maxFailureRate, maxCrashRate, minReports, ...fields } = options;
        if ((ramp === undefined) !== (every === undefined)) throw new Error("--ramp and --every go together.");
        const info = await stat(file).catch(() => null);
        if (!info?.isFile()) throw new Error(`No file at '${file}'.`);
        const published = await publishRelease(
          ctx,
          { ...fields, replace: fields.replace ?? false, fileName: path.basename(file) } as Parameters<typeof publishRelease>[1],
          {
            content: createReadStream(file),
            size: info.size,
            ...(blockmap ? { blockmap: await readFile(blockmap).catch(() => Promise.reject(new Error(`No file at '${blockmap}'.`))) } : {}),
            onProgress: jsonOutput(command) ? undefined : uploadProgress(io.stderr),
          },
        );
        if (ramp === undefined) return published;
        return setRamp(ctx, { releaseId: published.id, steps: ramp, every: every!, maxFailureRate, maxCrashRate, minReports } as Parameters<typeof setRamp>[1]);
      }),
    );
  release
    .command("ramp")
    .description("ramp a release's rollout through steps automatically: it advances when a step has lasted and is healthy, and halts itself when a rate is exceeded")
    .argument("<releaseId>")
    .option("--steps <percentages>", "rising percentages, e.g. 1,5,25,50,100")
    .option("--every <hours>", "the least hours a step lasts (decimals allowed, e.g. 0.5)")
    .option("--max-failure-rate <rate>", "halt above this share of failed installs (default 0.02)")
    .option("--max-crash-rate <rate>", "halt above this share of crashed launches (default 0.01)")
    .option("--min-reports <n>", "reports a rate needs before it halts or lets a step advance (default 50)")
    .option("--off", "stop the ramp, keeping the rollout where it is")
    .action(
      action((ctx, releaseId: string, options: { steps?: string; every?: string; maxFailureRate?: string; maxCrashRate?: string; minReports?: string; off?: boolean }) => {
        if (options.off) return stopRamp(ctx, { releaseId });
        if (!options.steps || !options.every) throw new Error("Give --steps and --every (or --off).");
        return setRamp(ctx, { releaseId, ...options } as Parameters<typeof setRamp>[1]);
      }),
    );
  release
    .command("tick")
    .description("advance or halt every running ramp now, as the scheduled function does")
    .action(action((ctx) => tickRamps(ctx)));
  release
    .command("status")
    .description("a release's rollout, its ramp (step, when the next is due) and its health")
    .argument("<releaseId>")
    .action(action((ctx, releaseId: string) => releaseStatus(ctx, { releaseId })));
  release
    .command("list")
    .description("list releases, highest semver first")
    .option("--platform <platform>", oneOf(PLATFORMS))
    .option("--channel <channel>", oneOf(CHANNELS))
    .action(action((ctx, options: { platform?: string; channel?: string }) => listReleasesFor(ctx, options as Parameters<typeof listReleasesFor>[1])));
  release
    .command("rollout")
    .description("offer a release to a share of callers (staged rollout); takes effect on the next request")
    .argument("<releaseId>")
    .requiredOption("--percentage <0-100>", "share of callers; raising it only adds callers")
    .action(action((ctx, releaseId: string, options: { percentage: string }) => setRollout(ctx, { releaseId, percentage: options.percentage as unknown as number })));
  release
    .command("halt")
    .description("stop offering a release to anyone new (rollout 0)")
    .argument("<releaseId>")
    .action(action((ctx, releaseId: string) => setRollout(ctx, { releaseId, percentage: 0 })));
  release
    .command("yank")
    .description("withdraw a release: out of the list, redirects and feeds; its own download answers 410")
    .argument("<releaseId>")
    .option("--reason <text>")
    .action(action((ctx, releaseId: string, options: { reason?: string }) => yankRelease(ctx, { releaseId, reason: options.reason })));
  release
    .command("unyank")
    .description("put a yanked release back")
    .argument("<releaseId>")
    .action(action((ctx, releaseId: string) => unyankRelease(ctx, { releaseId })));
  release
    .command("health")
    .description("how the update went on the apps that reported: counts per event, failure and crash rates with the reports behind each")
    .argument("<releaseId>")
    .action(action((ctx, releaseId: string) => releaseHealth(ctx, { releaseId })));
  release
    .command("backfill-sha512")
    .description("compute the SHA-512 of releases stored without one (idempotent)")
    .action(action((ctx) => backfillSha512(ctx)));
  release
    .command("remove")
    .description("remove a release and its installer")
    .argument("<releaseId>")
    .action(action((ctx, releaseId: string) => removeRelease(ctx, { releaseId })));
}
