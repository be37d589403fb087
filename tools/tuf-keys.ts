/**
 * The TUF repository's offline keys in a folder (§23): `root-1.pem`, `root-2.pem`, `root-3.pem`
 * (any 2 sign a root) and `targets.pem`, PKCS#8 PEM. `tuf init` writes such a folder; in
 * production it lives on offline media and is mounted only for a ceremony (docs/operations).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { generateTufKey, parsePrivateKeys, signerOf, type TufSigner } from "../functions/src/core/tuf-keys";

const ROOT_FILES = ["root-1.pem", "root-2.pem", "root-3.pem"];
const TARGETS_FILE = "targets.pem";

/** Writes the keys a folder lacks; says which it wrote. */
export function ensureTufKeyFolder(dir: string): string[] {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const missing = [...ROOT_FILES, TARGETS_FILE].map((name) => path.join(dir, name)).filter((file) => !existsSync(file));
  missing.forEach(ensureTufKeyFile);
  return missing;
}

/** A key file, generated when missing; its PEM. */
export function ensureTufKeyFile(file: string): string {
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, generateTufKey(), { mode: 0o600 });
  }
  return readFileSync(file, "utf8");
}

/** The files of a role's keys. */
export const keyFilesOf = (role: "root" | "targets" | "online") => (role === "root" ? ROOT_FILES : role === "targets" ? [TARGETS_FILE] : ["online.pem"]);

/** A rotation's new keys for `role`, written into a folder that holds no key yet; their signers. */
export function writeNewKeys(dir: string, role: "root" | "targets" | "online"): { files: string[]; signers: TufSigner[] } {
  if (existsSync(dir) && readdirSync(dir).some((name) => name.endsWith(".pem"))) throw new Error(`${dir} holds keys already: name a new folder.`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const files = keyFilesOf(role).map((name) => path.join(dir, name));
  for (const file of files) writeFileSync(file, generateTufKey(), { mode: 0o600 });
  return { files, signers: files.flatMap(signersIn) };
}

const signersIn = (file: string): TufSigner[] => (existsSync(file) ? parsePrivateKeys(readFileSync(file, "utf8")).map(signerOf) : []);

/** The root keys present in a folder (at least two are needed to sign), and its targets key if present. */
export function readTufKeyFolder(dir: string): { root: TufSigner[]; targets: TufSigner | undefined } {
  if (!existsSync(dir)) throw new Error(`No key folder ${dir}.`);
  return { root: ROOT_FILES.flatMap((name) => signersIn(path.join(dir, name))), targets: signersIn(path.join(dir, TARGETS_FILE))[0] };
}

