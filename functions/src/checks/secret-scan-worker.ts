import { findSecrets, type SecretFinding } from "./secrets";

/** One text entry scanned in a worker thread of the scan pool (secret-scan-pool.ts). */
export default function scan({ path, text }: { path: string; text: string }): Promise<SecretFinding[]> {
  return findSecrets(path, text);
}
