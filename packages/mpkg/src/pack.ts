import { lstat, readdir, readFile } from "node:fs/promises";
import path from "node:path";
import ignore from "ignore";
import { inspectPackage, type InspectedPackage } from "../../../functions/src/publishing/package";
import { PACKAGE_RULES } from "../../../functions/src/publishing/package-entries";
import { ApiError } from "../../../functions/src/core/errors";
import { zip, type PackageEntry } from "./archive";
import { UsageError } from "./problems";

/** What `mpkg pack` always leaves out, beyond `.mpkgignore`. */
const ALWAYS_IGNORED = [".git/", ".mpkgignore", "*.mpkg", ".DS_Store", "node_modules/.cache/"];
export const DEFAULT_MAX_PACKAGE_BYTES = 25 * 1024 * 1024;

export interface PackedModule extends InspectedPackage {
  bytes: Buffer;
  files: string[];
}

/**
 * Packs a module folder: every file but those `.mpkgignore` (gitignore syntax) and the defaults
 * leave out, in a ZIP with `module.json` at its root, then checks the archive with the service's
 * own package rules (functions/src/publishing/package.ts), so what it refuses here the service would
 * refuse too.
 */
export async function packDirectory(dir: string, maxBytes = DEFAULT_MAX_PACKAGE_BYTES): Promise<PackedModule> {
  const root = path.resolve(dir);
  if (!(await lstat(root).catch(() => null))?.isDirectory()) throw new UsageError(`'${dir}' is not a folder.`);
  const rules = ignore().add(ALWAYS_IGNORED);
  const ignoreFile = await readFile(path.join(root, ".mpkgignore"), "utf8").catch(() => null);
  if (ignoreFile !== null) rules.add(ignoreFile);
  const files = await walk(root, "", rules);
  if (!files.includes(PACKAGE_RULES.manifestName)) throw new UsageError(`No ${PACKAGE_RULES.manifestName} in '${dir}' (or .mpkgignore leaves it out).`);
  const bytes = await zipFiles(root, files);
  if (bytes.length > maxBytes) {
    throw new UsageError(`The package is ${bytes.length} bytes, over the upload limit of ${maxBytes} (the service would answer 413); leave files out with .mpkgignore.`);
  }
  return { ...(await inspectPackageBytes(bytes)), files };
}

/** The service's own inspection of package bytes; what it refuses is a UsageError (exit 2), prefixed with `label`. */
export async function inspectPackageBytes(bytes: Buffer, label?: string): Promise<InspectedPackage & { bytes: Buffer }> {
  try {
    return { ...(await inspectPackage(bytes)), bytes };
  } catch (error) {
    if (error instanceof ApiError) throw new UsageError(label ? `${label}: ${error.detail}` : error.detail);
    throw error;
  }
}

async function walk(root: string, relative: string, rules: ReturnType<typeof ignore>): Promise<string[]> {
  const entries = (await readdir(path.join(root, relative), { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
  const files: string[] = [];
  for (const entry of entries) {
    const name = relative ? `${relative}/${entry.name}` : entry.name;
    if (rules.ignores(entry.isDirectory() ? `${name}/` : name)) continue;
    if (entry.isSymbolicLink()) throw new UsageError(`'${name}' is a symbolic link: packages hold regular files only (copy it, or list it in .mpkgignore).`);
    if (entry.isDirectory()) files.push(...(await walk(root, name, rules)));
    else if (entry.isFile()) files.push(name);
  }
  return files;
}

/** The files, read one after another (a package may hold thousands), in the one deterministic archive layout. */
async function zipFiles(root: string, files: string[]): Promise<Buffer> {
  const entries: PackageEntry[] = [];
  for (const name of files) entries.push({ name, content: await readFile(path.join(root, name)) });
  return zip(entries);
}

export const packageFileName = (manifest: { id: string; version: string }) => `${manifest.id}-${manifest.version}.mpkg`;
