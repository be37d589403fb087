import { promisify } from "node:util";
import { constants, gunzip, gunzipSync, gzip } from "node:zlib";
import type { PublisherProfile } from "../developers/developer-store";
import { unpackedTextIndex, type CatalogEntry, type CatalogTextIndex } from "./ranking";
import type { PublicPrice } from "./price";
import type { VersionSummary } from "./versions";

/**
 * The search catalog's snapshot (§18): what a cold instance starts from instead of reading every
 * module. Built for a fast first search: the modules as rows (their keys written once, each
 * publisher's profile once, without descriptions, which only the index needs) and the text index
 * packed (`TextIndex.pack`), whose postings stay bytes until a search touches their word.
 *
 * Its bytes, gzipped: `MAGIC`; the time it was written (a little-endian 64-bit float, so that
 * `snapshotWrittenAt` reads it from the first bytes); the length of the JSON `Header`, of the field
 * lengths and of the term offsets (32-bit little-endian numbers); the header; the field lengths
 * and the offsets (32-bit little-endian numbers); the packed postings.
 */

export const SNAPSHOT_PATH = "search/catalog.snapshot";

/** A listed module as the listing answers it, beside what search needs. */
export interface ListedModule extends CatalogEntry {
  latestVersion: string;
  versions: VersionSummary[];
  publisher: PublisherProfile;
}

export interface CatalogSnapshot {
  writtenAt: number;
  modules: ListedModule[];
  index: CatalogTextIndex;
}

const MAGIC = Buffer.from("MKT-SEARCH-1\n", "latin1");
const PREFIX_LENGTH = MAGIC.length + 8 + 12;

type VersionRow = [version: string, minAppVersion: string | null, maxAppVersion: string | null, yanked: boolean, revoked: boolean, publishedAt: number | null, hasIcon: boolean];
type ModuleRow = [
  id: string,
  name: string,
  summary: string,
  tags: string[],
  category: string | null,
  publisherId: string,
  publisher: number,
  entitlement: string | null,
  price: PublicPrice | null,
  updatedAt: number,
  downloads: number,
  rating: CatalogEntry["rating"],
  latestVersion: string,
  versions: VersionRow[],
];

interface Header {
  publishers: PublisherProfile[];
  modules: ModuleRow[];
  index: { fields: string[]; averageFieldLength: number[]; terms: string[] };
}

const gzipped = promisify(gzip);
const gunzipped = promisify(gunzip);

/** A snapshot's bytes: the modules and their index at one moment (serialised before anything can change them). */
export function encodeSnapshot(writtenAt: number, entries: Iterable<ListedModule>, index: CatalogTextIndex): Promise<Buffer> {
  const modules = [...entries];
  const packed = index.pack(modules.map((module) => module.id));
  // Each profile once (as it is: two modules of one publisher may hold it from different moments).
  const publishers = new Map<string, number>();
  const profiles: PublisherProfile[] = [];
  const publisherNumber = (profile: PublisherProfile) => {
    const key = JSON.stringify(profile);
    let number = publishers.get(key);
    if (number === undefined) {
      publishers.set(key, (number = profiles.length));
      profiles.push(profile);
    }
    return number;
  };
  const header: Header = {
    publishers: profiles,
    modules: modules.map((module) => [
      module.id,
      module.name,
      module.summary,
      module.tags,
      module.category,
      module.publisherId,
      publisherNumber(module.publisher),
      module.entitlement,
      module.price,
      module.updatedAt,
      module.downloads,
      module.rating,
      module.latestVersion,
      module.versions.map((version) => [version.version, version.minAppVersion, version.maxAppVersion, version.yanked, version.revoked, version.publishedAt?.getTime() ?? null, version.hasIcon]),
    ]),
    index: { fields: packed.fields, averageFieldLength: packed.averageFieldLength, terms: packed.terms },
  };
  const json = Buffer.from(JSON.stringify(header), "utf8");
  const fieldLengths = littleEndian(packed.fieldLengths);
  const offsets = littleEndian(packed.offsets);
  const prefix = Buffer.alloc(PREFIX_LENGTH);
  MAGIC.copy(prefix);
  prefix.writeDoubleLE(writtenAt, MAGIC.length);
  [json.length, fieldLengths.length, offsets.length].forEach((length, i) => prefix.writeUInt32LE(length, MAGIC.length + 8 + i * 4));
  return gzipped(Buffer.concat([prefix, json, fieldLengths, offsets, packed.postings]));
}

/** Whether bytes start as gzip does (RFC 1952's ID1 and ID2). */
export const isGzip = (bytes: Buffer) => bytes[0] === 0x1f && bytes[1] === 0x8b;

const isSnapshot = (plain: Buffer) => plain.length >= PREFIX_LENGTH && plain.subarray(0, MAGIC.length).equals(MAGIC);

/** When the snapshot in these (stored) bytes was written, from its first bytes alone; null when they are not a snapshot of this format. */
export function snapshotWrittenAt(bytes: Buffer): number | null {
  try {
    const start = gunzipSync(bytes.subarray(0, 1024), { finishFlush: constants.Z_SYNC_FLUSH });
    return isSnapshot(start) ? start.readDoubleLE(MAGIC.length) : null;
  } catch {
    return null;
  }
}

/**
 * A snapshot from its (stored) bytes; null when they are not a snapshot of this format, or its
 * index was packed with other fields than this version indexes (its modules lack the
 * descriptions to index them again).
 */
export async function decodeSnapshot(bytes: Buffer): Promise<CatalogSnapshot | null> {
  if (!isGzip(bytes)) return null;
  // Output in large chunks: at the default 16 KiB, gunzip takes three times as long.
  const plain = await gunzipped(bytes, { chunkSize: 4 << 20 });
  if (!isSnapshot(plain)) return null;
  const [jsonLength, fieldLengthsLength, offsetsLength] = [0, 1, 2].map((i) => plain.readUInt32LE(MAGIC.length + 8 + i * 4));
  const header = JSON.parse(plain.toString("utf8", PREFIX_LENGTH, PREFIX_LENGTH + jsonLength)) as Header;
  const fieldLengthsAt = PREFIX_LENGTH + jsonLength;
  const offsetsAt = fieldLengthsAt + fieldLengthsLength;
  const postingsAt = offsetsAt + offsetsLength;
  const modules = header.modules.map(
    (row): ListedModule => ({
      id: row[0],
      name: row[1],
      summary: row[2],
      tags: row[3],
      category: row[4],
      publisherId: row[5],
      publisher: header.publishers[row[6]],
      entitlement: row[7],
      price: row[8],
      updatedAt: row[9],
      downloads: row[10],
      rating: row[11],
      latestVersion: row[12],
      versions: row[13].map((version) => ({
        version: version[0],
        minAppVersion: version[1],
        maxAppVersion: version[2],
        yanked: version[3],
        revoked: version[4],
        publishedAt: version[5] === null ? null : new Date(version[5]),
        hasIcon: version[6],
      })),
    }),
  );
  const packed = {
    ...header.index,
    fieldLengths: fromLittleEndian(plain.subarray(fieldLengthsAt, offsetsAt)),
    offsets: fromLittleEndian(plain.subarray(offsetsAt, postingsAt)),
    // A copy: the postings outlive the rest of the snapshot's bytes.
    postings: new Uint8Array(plain.subarray(postingsAt)),
  };
  const index = unpackedTextIndex(packed, modules.map((module) => module.id));
  return index && { writtenAt: plain.readDoubleLE(MAGIC.length), modules, index };
}

function littleEndian(numbers: Uint32Array): Buffer {
  const bytes = Buffer.alloc(numbers.length * 4);
  numbers.forEach((number, i) => bytes.writeUInt32LE(number, i * 4));
  return bytes;
}

function fromLittleEndian(bytes: Buffer): Uint32Array {
  if (bytes.length % 4 !== 0) throw new RangeError("The snapshot's numbers are cut.");
  const numbers = new Uint32Array(bytes.length / 4);
  for (let i = 0; i < numbers.length; i += 1) numbers[i] = bytes.readUInt32LE(i * 4);
  return numbers;
}
