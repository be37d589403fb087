import { BaseFetcher, Updater } from "tuf-js";
import { DownloadHTTPError } from "tuf-js/dist/error";

/**
 * Fetching a module through the service's TUF repository (contract §23) with tuf-js, the client
 * npm's own CLI uses. The app ships `1.root.json` (or any root it trusts) in `metadataDir` as
 * `root.json`; from there the client walks every rotated root, checks the timestamp, snapshot,
 * targets and bin it needs (signatures, thresholds, versions that only grow, expiries), and
 * accepts the package only if its length and SHA-256 are the ones the repository signed.
 */

/** tuf-js's fetcher with the user's ID token: metadata is public, but a target is a download (§4). */
export class BearerFetcher extends BaseFetcher {
  constructor(private readonly idToken: () => string) {
    super();
  }

  async fetch(url: string) {
    // A redirect to the signed Storage URL drops the Authorization header (another origin).
    const response = await fetch(url, { headers: { Authorization: `Bearer ${this.idToken()}` } });
    // tuf-js stops walking roots at a 404 (or 403) of the next root: report the status as it expects.
    if (!response.ok || !response.body) throw new DownloadHTTPError(`GET ${url}: ${response.status}`, response.status);
    return response.body as ReadableStream<Uint8Array<ArrayBuffer>>;
  }
}

/** A fresh view of the repository: one Updater per refresh, its trusted metadata kept in `metadataDir`. */
export async function refreshedRepository(options: { apiBase: string; metadataDir: string; idToken: () => string }): Promise<Updater> {
  const updater = new Updater({
    metadataDir: options.metadataDir,
    metadataBaseUrl: `${options.apiBase}/tuf/metadata`,
    targetBaseUrl: `${options.apiBase}/tuf/targets`,
    targetDir: options.metadataDir,
    fetcher: new BearerFetcher(options.idToken),
  });
  // Throws on rollback (an older timestamp or snapshot), freeze (expired metadata), a bad signature.
  await updater.refresh();
  return updater;
}

/**
 * Downloads `moduleId@version` into `file`, verified; null when the repository does not list it
 * (never published, or revoked). Throws when the bytes are not the ones the repository signed.
 */
export async function fetchModule(updater: Updater, moduleId: string, version: string, file: string): Promise<{ path: string; sha256: string; length: number } | null> {
  const target = await updater.getTargetInfo(`modules/${moduleId}/${version}.mpkg`);
  if (!target) return null;
  const path = (await updater.findCachedTarget(target, file)) ?? (await updater.downloadTarget(target, file));
  return { path, sha256: target.hashes.sha256, length: target.length };
}
