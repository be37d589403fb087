import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync, openSync, fsyncSync, closeSync, readdirSync, existsSync } from "node:fs";
import path from "node:path";
import { DesktopError } from "./errors";

/**
 * What the SDK keeps in `dataDir`, and why each is safe to keep:
 *
 *   device-id                  this device's id, made once (not a secret: certificates name it)
 *   state.json                 the installed modules: version, sha256, folder, certificate (a
 *                              certificate is signed and bound to this device and its expiry; a
 *                              copy on another device does not verify there)
 *   clock.json                 the newest trusted time seen (the clock-rollback guard)
 *   trust/signing-keys.json    GET /signing-keys (public keys)
 *   trust/revocations*.jws     the newest signed revocation lists (public, signed, with a serial
 *                              that only grows: an older one is refused)
 *   trust/policies/<id>.jws    each business's signed install policy (signed; the highest version kept)
 *   trust/entitlements.json    the last GET /users/me entitlements, answered offline only until
 *                              the newest kept certificate expires
 *   tuf/                       the TUF metadata tuf-js trusts (its root pins every later one)
 *   modules/<id>/<version>/    the installed packages' files, unpacked after verification
 *   staging/                   installs in progress; whatever is there at start is a crashed install's and is removed
 *
 * Nothing kept is a credential: no ID or refresh token is written (an app that wants its users to
 * stay signed in keeps the refresh token in the system keychain and passes `getIdToken`).
 */
export interface InstalledRecord {
  moduleId: string;
  version: string;
  sha256: string;
  /** The folder, relative to dataDir. */
  folder: string;
  certificate: string | null;
  publisherId: string;
  businessId: string | null;
}

export interface State {
  installed: Record<string, InstalledRecord>;
}

export function dataDirectory(root: string) {
  const at = (...parts: string[]) => path.join(root, ...parts);
  mkdirSync(at("trust", "policies"), { recursive: true });
  mkdirSync(at("tuf"), { recursive: true });
  mkdirSync(at("modules"), { recursive: true });

  /** Replaces a file whole: written beside it, flushed, then renamed over it, so a crash leaves the old or the new. */
  function writeAtomically(file: string, contents: string | Buffer) {
    mkdirSync(path.dirname(file), { recursive: true });
    const temporary = `${file}.${randomUUID()}.tmp`;
    writeFileSync(temporary, contents);
    const handle = openSync(temporary, "r");
    try {
      fsyncSync(handle);
    } finally {
      closeSync(handle);
    }
    renameSync(temporary, file);
  }
  const readText = (file: string): string | null => {
    try {
      return readFileSync(file, "utf8");
    } catch {
      return null;
    }
  };
  const readJson = <T>(file: string): T | null => {
    const text = readText(file);
    if (text === null) return null;
    try {
      return JSON.parse(text) as T;
    } catch {
      return null;
    }
  };

  return {
    root,
    at,
    writeAtomically,
    readText,
    readJson,
    /** This device's id: made once, then kept. */
    deviceId(given?: string): string {
      const file = at("device-id");
      if (given) {
        if (readText(file) !== given) writeAtomically(file, given);
        return given;
      }
      const kept = readText(file)?.trim();
      if (kept) return kept;
      const made = `dev_${randomUUID()}`;
      writeAtomically(file, made);
      return made;
    },
    state(): State {
      const text = readText(at("state.json"));
      if (text === null) return { installed: {} };
      try {
        return JSON.parse(text) as State;
      } catch (error) {
        // Never taken for "nothing installed": that would sweep every installed module away.
        throw new DesktopError("integrity_failed", `${at("state.json")} is not readable JSON; restore it or remove the folder to start afresh.`, { cause: error });
      }
    },
    saveState(state: State) {
      writeAtomically(at("state.json"), JSON.stringify(state, null, 2));
    },
    /** A fresh folder for an install in progress. */
    stagingFolder(): string {
      const folder = at("staging", randomUUID());
      mkdirSync(folder, { recursive: true });
      return folder;
    },
    /** Removes what crashed installs left: staging, and module folders that no installed record names. */
    sweep(state: State) {
      rmSync(at("staging"), { recursive: true, force: true });
      const kept = new Set(Object.values(state.installed).map((record) => path.normalize(record.folder)));
      for (const moduleId of existsSync(at("modules")) ? readdirSync(at("modules")) : []) {
        for (const version of readdirSync(at("modules", moduleId))) {
          const folder = path.join("modules", moduleId, version);
          if (!kept.has(folder)) rmSync(at(folder), { recursive: true, force: true });
        }
      }
    },
  };
}

export type DataDirectory = ReturnType<typeof dataDirectory>;
