import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from "jose";
import { BaseFetcher, Updater } from "tuf-js";
import { DownloadHTTPError } from "tuf-js/dist/error.js";
import { readZipDirectory, verifyEntry, ZipFormatError } from "../../../functions/src/core/zip";
import { PACKAGE_RULES } from "../../../functions/src/publishing/package-entries";
import { VerificationError, verifyPackage } from "../../mpkg/src/verify";
import type { SignaturePayload } from "../../../functions/src/publishing/signature";
import { DesktopError, integrityFailed, offline } from "./errors";
import { answerOf, type Transport } from "./http";

export interface Progress {
  transferred: number;
  total: number;
}

export interface DownloadAnswer {
  moduleId: string;
  version: string;
  url: string;
  sha256: string;
  size: number;
  signature: string;
  authorSignature: string | null;
  authorKeyId: string | null;
}

/** tuf-js's fetcher over the SDK's retries; a 404 is reported as tuf-js expects (it stops walking roots at the first missing one). */
class SdkFetcher extends BaseFetcher {
  constructor(
    private readonly http: Transport,
    private readonly signal: AbortSignal | undefined,
  ) {
    super();
  }

  async fetch(url: string) {
    const response = await this.http.fetch(url, { signal: this.signal });
    if (!response.ok || !response.body) throw new DownloadHTTPError(`GET ${url}: ${response.status}`, response.status);
    return response.body as ReadableStream<Uint8Array<ArrayBuffer>>;
  }
}

/**
 * The TUF repository (§23) as this app trusts it: metadata in dataDir/tuf, rooted in the root the
 * app ships (`tufRoot`) or, without one, in the service's 1.root.json fetched once and kept.
 */
export async function trustedRepository(options: { http: Transport; apiBase: string; metadataDir: string; tufRoot?: string; signal?: AbortSignal }): Promise<Updater> {
  const rootFile = path.join(options.metadataDir, "root.json");
  if (!existsSync(rootFile)) {
    let root = options.tufRoot;
    if (root === undefined) {
      const answer = await options.http.fetch(`${options.apiBase}/tuf/metadata/1.root.json`, { signal: options.signal });
      if (!answer.ok) throw new DesktopError("unavailable", `The TUF repository's first root is not served (${answer.status}).`, { status: answer.status });
      root = await answer.text();
    }
    mkdirSync(options.metadataDir, { recursive: true });
    writeFileSync(rootFile, root);
  }
  const updater = new Updater({
    metadataDir: options.metadataDir,
    metadataBaseUrl: `${options.apiBase}/tuf/metadata`,
    targetBaseUrl: `${options.apiBase}/tuf/targets`,
    fetcher: new SdkFetcher(options.http, options.signal),
  });
  try {
    // Rollback (an older timestamp or snapshot), freeze (expired metadata) and bad signatures all throw here.
    await updater.refresh();
  } catch (error) {
    throw tufError(error);
  }
  return updater;
}

/** tuf-js's refusals are integrity failures; its network failures are the SDK's. */
function tufError(error: unknown): Error {
  if (error instanceof DesktopError) return error;
  return integrityFailed(`The TUF repository's metadata does not verify: ${(error as Error).message}`, error);
}

/**
 * What the TUF repository signed for this version (its length and SHA-256), or null when it does
 * not list it (a private module's, or a revoked one). The bytes are then fetched once, from the
 * download's URL, and must match it: the download is counted once (§4), and a server or mirror
 * that swaps the answer still cannot pass the repository's signed hashes.
 */
export async function tufTarget(updater: Updater, moduleId: string, version: string): Promise<{ length: number; sha256: string } | null> {
  try {
    const target = await updater.getTargetInfo(`modules/${moduleId}/${version}.mpkg`);
    return target ? { length: target.length, sha256: target.hashes.sha256 } : null;
  } catch (error) {
    throw tufError(error);
  }
}

/** The package's bytes from the download's signed URL (private modules, which the public repository does not list). */
export async function fetchFromUrl(http: Transport, download: DownloadAnswer, onBytes: (count: number) => void, signal?: AbortSignal): Promise<Buffer> {
  const response = await http.fetch(download.url, { signal });
  if (!response.ok || !response.body) throw new DesktopError("unavailable", `The package could not be downloaded (${response.status}).`, { status: response.status });
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      length += chunk.byteLength;
      // More than was signed is refused before it fills the memory.
      if (length > download.size) throw integrityFailed("The package is larger than the one the marketplace signed.");
      chunks.push(Buffer.from(chunk));
      onBytes(chunk.byteLength);
    }
  } catch (error) {
    if (error instanceof DesktopError) throw error;
    if (signal?.aborted) throw new DesktopError("cancelled", "Cancelled.", { cause: error });
    throw offline("The download broke off.", error);
  }
  return Buffer.concat(chunks);
}

/**
 * The bytes checked against everything that vouches for them: the service's signature (a key of
 * GET /signing-keys) naming this module, version, SHA-256 and size, the download answer's hash,
 * and the author's signature (§15) with the publisher's key when there is one.
 */
export async function verifyBytes(http: Transport, bytes: Buffer, download: DownloadAnswer, signingKeys: JSONWebKeySet): Promise<SignaturePayload> {
  let signed: SignaturePayload;
  try {
    signed = await verifyPackage(bytes, download.signature, signingKeys);
  } catch (error) {
    throw integrityFailed(error instanceof VerificationError ? error.message : "The package's signature does not verify.", error);
  }
  // verifyPackage held the signature's sha256 and size to the bytes.
  const { sha256 } = signed;
  if (signed.moduleId !== download.moduleId || signed.version !== download.version || sha256 !== download.sha256) {
    throw integrityFailed(`The package is not ${download.moduleId}@${download.version} as the marketplace signed it.`);
  }
  if (download.authorSignature) {
    const { keys } = answerOf(await http.api.GET("/publishers/{publisherId}/keys", { params: { path: { publisherId: signed.publisherId } } }));
    try {
      const { payload } = await compactVerify(download.authorSignature, createLocalJWKSet({ keys: keys.map(({ kty, crv, x, kid, alg }) => ({ kty, crv, x, kid, alg })) }), { algorithms: ["EdDSA"] });
      const author = JSON.parse(new TextDecoder().decode(payload)) as { moduleId?: string; version?: string; sha256?: string };
      if (author.moduleId !== signed.moduleId || author.version !== signed.version || author.sha256 !== sha256) throw new Error("it names another package");
    } catch (error) {
      throw integrityFailed(`The author's signature does not verify (${(error as Error).message}).`, error);
    }
  }
  return signed;
}

/**
 * Unpacks a verified package into `folder` with the service's own strict ZIP reader (what the
 * service checked is what is unpacked): every entry's size and CRC-32 checked, names confined to
 * the folder.
 */
export async function unpack(bytes: Buffer, folder: string): Promise<void> {
  let entries;
  try {
    entries = readZipDirectory(bytes, PACKAGE_RULES);
  } catch (error) {
    throw integrityFailed(`The package is not a valid archive: ${(error as Error).message}`, error);
  }
  const root = path.resolve(folder);
  for (const entry of entries) {
    const target = path.resolve(root, entry.name);
    if (target !== root && !target.startsWith(`${root}${path.sep}`)) throw integrityFailed(`The package names a file outside its folder: ${entry.name}`);
    if (entry.directory) {
      mkdirSync(target, { recursive: true });
      continue;
    }
    mkdirSync(path.dirname(target), { recursive: true });
    const chunks: Buffer[] = [];
    try {
      await verifyEntry(bytes, entry, (chunk) => chunks.push(chunk));
    } catch (error) {
      throw integrityFailed(`${entry.name} does not unpack: ${error instanceof ZipFormatError ? error.message : String(error)}`, error);
    }
    writeFileSync(target, Buffer.concat(chunks));
  }
}
