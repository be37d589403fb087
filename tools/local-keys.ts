/**
 * Keys for local runs, generated on first use into a git-ignored folder and never committed:
 * a throwaway service-account key (the Admin SDK signs V4 URLs with it; nothing outside this
 * machine trusts it), the development module-signing key set, and the TUF repository's keys: the
 * online one (TUF_ONLINE_KEY) and, in `tuf/offline/`, the three root keys and the targets key that
 * production keeps offline.
 */
import { generateKeyPairSync, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { ServiceAccount } from "../functions/src/local";
import { generateSigningKey } from "../functions/src/core/signing";
import { ensureTufKeyFile, ensureTufKeyFolder } from "./tuf-keys";

export interface LocalSecrets {
  serviceAccount: ServiceAccount;
  /** JSON of the module-signing key set, as MODULE_SIGNING_KEYS holds it in production. */
  moduleSigningKeys: string;
  /** The TUF online key, PKCS#8 PEM, as TUF_ONLINE_KEY holds it. */
  tufOnlineKey: string;
  /** The folder of the TUF offline keys (root-1..3.pem, targets.pem). */
  tufOfflineDir: string;
}

export function throwawayServiceAccount(projectId: string): ServiceAccount {
  const { privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  return { projectId, clientEmail: `local-dev@${projectId}.iam.gserviceaccount.com`, privateKey };
}

export async function generateModuleSigningKeys(): Promise<string> {
  return JSON.stringify({ keys: [await generateSigningKey()] });
}

/** Loads the keys of `dir`, generating the missing ones. */
export async function ensureLocalSecrets(dir: string, projectId: string): Promise<LocalSecrets> {
  mkdirSync(dir, { recursive: true });
  const accountFile = path.join(dir, "service-account.json");
  const signingFile = path.join(dir, "module-signing-keys.json");
  if (!existsSync(accountFile)) {
    writeFileSync(accountFile, JSON.stringify({ id: randomUUID(), ...throwawayServiceAccount(projectId) }, null, 2), { mode: 0o600 });
  }
  if (!existsSync(signingFile)) {
    writeFileSync(signingFile, await generateModuleSigningKeys(), { mode: 0o600 });
  }
  const tufOnlineKey = ensureTufKeyFile(path.join(dir, "tuf", "online.pem"));
  const tufOfflineDir = path.join(dir, "tuf", "offline");
  ensureTufKeyFolder(tufOfflineDir);
  const account = JSON.parse(readFileSync(accountFile, "utf8"));
  return {
    serviceAccount: { projectId, clientEmail: account.clientEmail, privateKey: account.privateKey },
    moduleSigningKeys: readFileSync(signingFile, "utf8"),
    tufOnlineKey,
    tufOfflineDir,
  };
}
