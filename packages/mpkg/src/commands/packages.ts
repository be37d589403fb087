import { readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import { uploadProgress } from "../../../../tools/admin/output";
import { authorSignature } from "../author-keys";
import type { Cli } from "../cli";
import { inspectPackageBytes, packageFileName, packDirectory } from "../pack";
import { unwrap, UsageError } from "../problems";
import { uploadPackage } from "../upload";

/** `pack`, `publish`, `list`, `yank` and `unyank`: a publisher's packages and versions. */
export function registerPackageCommands(program: Command, { io, globals, apiOf, print, asPublisher }: Cli): void {
  program
    .command("pack")
    .description("check module.json with the service's rules and write <id>-<version>.mpkg (honours .mpkgignore)")
    .argument("[dir]", "the module's folder", ".")
    .option("--out <file>", "where to write the package (default ./<id>-<version>.mpkg)")
    .action(async (dir: string, options: { out?: string }, command: Command) => {
      const packed = await packDirectory(dir);
      const out = options.out ?? packageFileName(packed.manifest);
      await writeFile(out, packed.bytes);
      print(command, { file: out, moduleId: packed.manifest.id, version: packed.manifest.version, sha256: packed.sha256, size: packed.size, files: packed.files.length });
    });

  program
    .command("publish")
    .description("sign and publish a package (a .mpkg file, or a folder packed first)")
    .argument("[fileOrDir]", "a .mpkg file or a module folder", ".")
    .option("--sign-only", "upload and sign, but leave the version unpublished")
    .option("--key <file>", "sign the package with your author key (a JWK file of `mpkg keys generate`) as well")
    .action(async (target: string, options: { signOnly?: boolean; key?: string }, command: Command) => {
      const info = await stat(target).catch(() => null);
      if (!info) throw new UsageError(`No file or folder '${target}'.`);
      const packed = info.isDirectory() ? await packDirectory(target) : await inspectPackageBytes(await readFile(target), path.basename(target));
      const signature = options.key
        ? await authorSignature(options.key, { moduleId: packed.manifest.id, version: packed.manifest.version, sha256: packed.sha256 })
        : undefined;
      const { client, bearer } = await asPublisher(command);
      const progress = globals(command).json ? undefined : uploadProgress(io.stderr);
      const signed = (await uploadPackage(apiOf(command), bearer, packed.bytes, progress, signature)) as { moduleId: string; version: string; sha256: string; size: number };
      if (options.signOnly) return print(command, { ...signed, state: "signed" });
      unwrap(await client.POST("/developers/modules/publish", { body: { moduleId: signed.moduleId, version: signed.version } }));
      print(command, { moduleId: signed.moduleId, version: signed.version, sha256: signed.sha256, size: signed.size, state: "published" });
    });

  program
    .command("list")
    .description("your modules and their versions, with state and review")
    .action(async (_options: object, command: Command) => {
      const { client } = await asPublisher(command);
      const modules = unwrap(await client.GET("/developers/modules")).items;
      if (globals(command).json) return print(command, modules);
      print(
        command,
        modules.flatMap((module) =>
          module.versions.map((version) => ({
            moduleId: module.id,
            version: version.version,
            state: version.yankedAt ? "yanked" : version.state,
            review: version.review.state,
            revoked: version.revocation ? "yes" : "",
            downloads: version.version === module.latestVersion ? module.downloads : "",
          })),
        ),
      );
    });

  for (const [name, yanked] of [
    ["yank", true],
    ["unyank", false],
  ] as const) {
    const yankCommand = program
      .command(name)
      .description(yanked ? "withdraw a published version (never latest or compatible again; explicit downloads still work)" : "put a yanked version back")
      .argument("<moduleId>")
      .argument("<version>");
    if (yanked) yankCommand.option("--reason <text>", "why, for your users");
    yankCommand.action(async (moduleId: string, version: string, options: { reason?: string }, command: Command) => {
      const { client } = await asPublisher(command);
      const answer = yanked
        ? await client.POST("/developers/modules/yank", { body: { moduleId, version, ...(options.reason ? { reason: options.reason } : {}) } })
        : await client.POST("/developers/modules/unyank", { body: { moduleId, version } });
      print(command, unwrap(answer));
    });
  }
}
