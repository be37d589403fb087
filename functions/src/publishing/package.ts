import { createHash } from "node:crypto";
import { z } from "zod";
import { ENTITLEMENT_KEY, MODULE_ID, semverVersion } from "../core/documents";
import { readZipDirectory, verifyEntry } from "../core/zip";
import { invalidPackage, PACKAGE_RULES, verifyEntries, zipErrorsAsInvalidPackage } from "./package-entries";

/** Media types accepted for a package upload. */
export const PACKAGE_CONTENT_TYPES = ["application/octet-stream", "application/zip"];

/** A file of the package that the manifest names (the README, CHANGELOG or icon of §16), from the package root. */
const packagedFile = z
  .string()
  .max(200)
  .regex(/^(?!\/)(?!.*(?:^|\/)\.\.?(?:\/|$))[^\\\0]+$/, "must be a path inside the package from its root: no leading '/', no '.' or '..' segments, no backslash.")
  .meta({ description: "A path inside the package, e.g. docs/README.md." });

/** A web address a module's page links to (§24): https, or http, and nothing else. */
const webAddress = z
  .url({ protocol: /^https?$/, hostname: z.regexes.domain, error: "must be an http(s) address such as https://example.com/project." })
  .max(500)
  .meta({ description: "An https:// (or http://) address." });

/** `module.json`. Fields beyond these are allowed (for the desktop app) and ignored here. */
export const manifestSchema = z.object({
  id: z.string().regex(MODULE_ID, "id must be '<publisherId>.<name>' in lower-case letters, digits and '-'."),
  name: z.string().trim().min(1).max(100),
  version: z
    .string()
    .refine((version) => !version.includes("+"), "version must not carry build metadata ('+…'): two versions may not differ only in it.")
    .pipe(semverVersion),
  summary: z.string().trim().min(1).max(300),
  description: z.string().max(20_000).optional(),
  category: z.string().regex(/^[a-z0-9-]{1,40}$/, "category must be 1-40 of [a-z0-9-].").optional(),
  tags: z
    .array(z.string().regex(/^[a-z0-9-]{2,24}$/, "each tag must be 2-24 lower-case letters, digits or '-'."))
    .max(10, "at most 10 tags.")
    .refine((tags) => new Set(tags).size === tags.length, "tags must be distinct.")
    .optional(),
  entitlement: z.string().regex(ENTITLEMENT_KEY, "entitlement must be 1-64 of [a-z0-9_-], starting with a letter or digit.").optional(),
  minAppVersion: semverVersion.optional(),
  maxAppVersion: semverVersion.optional(),
  readme: packagedFile.optional(),
  changelog: packagedFile.optional(),
  icon: packagedFile.optional(),
  homepage: webAddress.optional(),
  repository: webAddress.optional(),
  issues: webAddress.optional(),
  license: z.string().trim().min(1).max(100).regex(/^[^\n\t]+$/, "license must be one line, e.g. an SPDX id such as MIT.").optional(),
});

export type Manifest = z.output<typeof manifestSchema>;

export interface InspectedPackage {
  manifest: Manifest;
  sha256: string;
  size: number;
}

/**
 * Checks that `bytes` are a module package: a ZIP archive that every reader reads the same way
 * (core/zip.ts), within the entry and size limits, whose entries all inflate to their declared
 * sizes and CRC-32, with a valid `module.json` at its root.
 */
export async function inspectPackage(bytes: Buffer): Promise<InspectedPackage> {
  await verifyEntries(bytes);
  return {
    manifest: await readManifest(bytes),
    sha256: createHash("sha256").update(bytes).digest("hex"),
    size: bytes.length,
  };
}

/**
 * Only the manifest of a package, from its central directory and its `module.json` entry: what a
 * sign needs to know where the package goes before the whole package is inspected.
 */
export async function readManifest(bytes: Buffer): Promise<Manifest> {
  const manifest = await readPackageEntry(bytes, PACKAGE_RULES.manifestName, PACKAGE_RULES.maxManifestBytes);
  if (!manifest) throw invalidPackage(`The package has no ${PACKAGE_RULES.manifestName} at its root.`);
  return parseManifest(manifest);
}

/** One entry's bytes, verified, read through the central directory; null when the package has none by that name. */
export function readPackageEntry(bytes: Buffer, name: string, maxBytes: number): Promise<Buffer | null> {
  return zipErrorsAsInvalidPackage(async () => {
    const entry = readZipDirectory(bytes, PACKAGE_RULES).find((candidate) => candidate.name === name);
    if (!entry) return null;
    if (entry.uncompressedSize > maxBytes) throw invalidPackage(`${name} is larger than ${maxBytes / 1024} KiB.`);
    const chunks: Buffer[] = [];
    await verifyEntry(bytes, entry, (chunk) => chunks.push(chunk));
    return Buffer.concat(chunks);
  });
}

function parseManifest(bytes: Buffer): Manifest {
  if (bytes.length > PACKAGE_RULES.maxManifestBytes) {
    throw invalidPackage(`${PACKAGE_RULES.manifestName} is larger than ${PACKAGE_RULES.maxManifestBytes} bytes.`);
  }
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw invalidPackage(`${PACKAGE_RULES.manifestName} is not valid JSON.`);
  }
  const result = manifestSchema.safeParse(json);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`);
    throw invalidPackage(`${PACKAGE_RULES.manifestName} is invalid: ${problems.join("; ")}`);
  }
  return result.data;
}
