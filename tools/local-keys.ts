/**
 * Keys for local runs, generated on first use into a git-ignored folder and never committed:
 * a throwaway service-account key (the Admin SDK signs V4 URLs with it; nothing outside this
 * machine trusts it) and the development module-signing key set.
 */
import { generateKeyPairSync, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { ServiceAccount } from "../functions/src/local";
import { generateSigningKey } from "../functions/src/core/signing";

export interface LocalSecrets {
  serviceAccount: ServiceAccount;
  /** JSON of the module-signing key set, as MODULE_SIGNING_KEYS holds it in production. */
  moduleSigningKeys: string;
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
  const account = JSON.parse(readFileSync(accountFile, "utf8"));
  return {
    serviceAccount: { projectId, clientEmail: account.clientEmail, privateKey: account.privateKey },
    moduleSigningKeys: readFileSync(signingFile, "utf8"),
  };
}
