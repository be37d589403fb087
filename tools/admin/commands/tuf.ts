/** `tuf`: the TUF repository's keys, versions and expiries (§23). */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { parsePrivateKeys, signerOf } from "../../../functions/src/core/tuf-keys";
import type { AdminContext } from "../../../functions/src/local";
import { resignOnlineRoles } from "../../../functions/src/tuf/changes";
import { initializeRepository } from "../../../functions/src/tuf/initialize";
import { rotateKeys, type RotatedRole } from "../../../functions/src/tuf/rotation";
import { repositoryStatus } from "../../../functions/src/tuf/status";
import { ensureTufKeyFile, ensureTufKeyFolder, readTufKeyFolder, writeNewKeys } from "../../tuf-keys";
import { UsageError, stderrLogger, type GlobalOptions, type Cli } from "../cli";

export function registerTufCommands(program: Command, { action, io }: Cli): void {
  // The TUF repository (§23): the operators' ceremony and maintenance.
  const LOCAL_TUF = path.join(__dirname, "..", "..", "..", ".local", "tuf");
  const keysFolder = (command: Command, given: string | undefined) => {
    if (given) return path.resolve(given);
    if (command.optsWithGlobals<GlobalOptions>().emulators) return path.join(LOCAL_TUF, "offline");
    throw new UsageError("Pass --keys <folder> with the offline keys (root-1..3.pem, targets.pem).");
  };
  /** TUF_ONLINE_KEY, else with --emulators the local stack's key. */
  const onlineKeyText = (command: Command) => {
    if (io.env.TUF_ONLINE_KEY) return io.env.TUF_ONLINE_KEY;
    const local = path.join(LOCAL_TUF, "online.pem");
    return command.optsWithGlobals<GlobalOptions>().emulators && existsSync(local) ? readFileSync(local, "utf8") : "";
  };
  const tufDeps = (ctx: AdminContext, command: Command) => ({ ...ctx, logger: stderrLogger(io), tufOnlineSigners: parsePrivateKeys(onlineKeyText(command)).map(signerOf) });
  const tuf = program.command("tuf").description("the TUF repository of modules (§23): keys, versions, expiries");
  tuf
    .command("init")
    .description("make the keys a folder lacks and the repository's first root, targets, bins, snapshot and timestamp; prints where the offline keys went")
    .option("--keys <folder>", "where the offline keys are (or are written): root-1..3.pem, targets.pem (default with --emulators: .local/tuf/offline)")
    .action(
      action(async (ctx, options: { keys?: string }, command: Command) => {
        const folder = keysFolder(command, options.keys);
        const written = ensureTufKeyFolder(folder);
        const configured = onlineKeyText(command);
        const onlineFile = configured ? null : path.join(folder, "online.pem");
        const [online] = parsePrivateKeys(onlineFile ? ensureTufKeyFile(onlineFile) : configured).map(signerOf);
        const offline = readTufKeyFolder(folder);
        const status = await initializeRepository({ ...ctx, logger: stderrLogger(io), tufOnlineSigners: [online] }, { root: offline.root, targets: offline.targets!, online });
        if (!status) throw new Error("The TUF repository is initialised already: see `tuf status`.");
        return {
          ...status,
          offlineKeys: folder,
          written: written.length,
          onlineKey: onlineFile ? `${onlineFile}: store it as the TUF_ONLINE_KEY secret, then keep this file offline or delete it` : "TUF_ONLINE_KEY",
        };
      }),
    );
  tuf
    .command("status")
    .description("each role's version and expiry, the bins, the online key's id, and changes not taken yet")
    .action(action((ctx) => repositoryStatus(ctx)));
  tuf
    .command("resign")
    .description("now: timestamp, snapshot and every bin, each with a new version and a fresh expiry (with TUF_ONLINE_KEY)")
    .action(action(async (ctx, _options: object, command: Command) => (await resignOnlineRoles(tufDeps(ctx, command), { all: true })) ?? { initialised: false }));
  tuf
    .command("rotate")
    .description("new keys for a role: a new root version signed by the current root keys (and a new root's own), so clients walk to it")
    .argument("<role>", "root, targets or online")
    .option("--keys <folder>", "the current offline keys (default with --emulators: .local/tuf/offline)")
    .option("--new-keys <folder>", "where the new keys are written (a new folder); with --emulators by default they replace the rotated ones in place, the old ones kept under retired/")
    .action(
      action(async (ctx, role: string, options: { keys?: string; newKeys?: string }, command: Command) => {
        if (!["root", "targets", "online"].includes(role)) throw new UsageError(`<role> must be root, targets or online, got '${role}'.`);
        const rotated = role as RotatedRole;
        const emulators = command.optsWithGlobals<GlobalOptions>().emulators ?? false;
        if (!options.newKeys && !emulators) throw new UsageError("Pass --new-keys <folder>: the new keys are written there.");
        const folder = keysFolder(command, options.keys);
        const current = readTufKeyFolder(folder);
        const staging = options.newKeys ? path.resolve(options.newKeys) : path.join(folder, `new-${Date.now()}`);
        const fresh = writeNewKeys(staging, rotated);
        const status = await rotateKeys(tufDeps(ctx, command), rotated, { currentRoot: current.root, targets: current.targets, next: fresh.signers }).catch((error: Error) => {
          // Keys of a rotation that did not happen must not be mistaken for the current ones.
          for (const file of fresh.files) rmSync(file, { force: true });
          throw error;
        });
        if (options.newKeys) {
          return { ...status, newKeys: fresh.files, ...(rotated === "online" ? { next: "put online.pem into the TUF_ONLINE_KEY secret and redeploy: changes wait until the functions hold it" } : {}) };
        }
        // The local stack: the new keys take the old ones' place; the old ones go to retired/.
        const retired = path.join(folder, "retired", new Date().toISOString().replace(/[:.]/g, "-"));
        mkdirSync(retired, { recursive: true });
        const placed = fresh.files.map((file) => {
          const target = rotated === "online" ? path.join(LOCAL_TUF, "online.pem") : path.join(folder, path.basename(file));
          if (existsSync(target)) renameSync(target, path.join(retired, path.basename(target)));
          renameSync(file, target);
          return target;
        });
        rmSync(staging, { recursive: true, force: true });
        return { ...status, newKeys: placed, retired, ...(rotated === "online" ? { next: "restart npm start: its functions sign with the new key from then on" } : {}) };
      }),
    );
}
