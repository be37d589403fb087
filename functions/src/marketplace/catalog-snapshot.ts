import { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { promisify } from "node:util";
import { createGunzip, gzip } from "node:zlib";
import type { PublisherProfile } from "../developers/developer-store";
import { unpackedTextIndex, type CatalogEntry, type CatalogTextIndex } from "./ranking";
import type { PublicPrice } from "./price";
import type { VersionSummary } from "./versions";

/**
 * The search catalog's snapshot (§18): what a cold instance starts from instead of reading every
 * module. Built for a fast first search, which reads little of it:
 * - what search, sorting and facets read of a module, as columns (each distinct publisher,
 *   category, entitlement, price and tag written once and numbered);
 * - what only a page shows (summary, latest version, versions), as each module's own JSON text,
 *   parsed when first shown;
 * - the text index packed (`TextIndex.pack`), which stays bytes until a search reaches it.
 * Descriptions are not in it: only the index reads them, and it keeps them as words.
 *
 * Its bytes, gzipped: `MAGIC`; the time it was written (a 64-bit float, so that a reader knows it
 * from the first bytes); the lengths of its sections but the last; the sections: the JSON
 * `Header`; the `NUMBERS` columns (64-bit floats, a column after another); the modules' tags
 * (where each module's start, then the tags' numbers); the index's field lengths and term
 * offsets; where each module's details start; the details; the index's postings. Every number
 * outside the JSON is little-endian, and 32-bit unless said.
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

const MAGIC = Buffer.from("MKT-SEARCH-2\n", "latin1");
const SECTIONS = 8;
/** The layout before (the modules as rows in the header), read until the next snapshot replaces it. */
const ROWS_MAGIC = Buffer.from("MKT-SEARCH-1\n", "latin1");
const ROWS_SECTIONS = 4;
const prefixLength = (sections: number) => MAGIC.length + 8 + (sections - 1) * 4;

type VersionRow = [version: string, minAppVersion: string | null, maxAppVersion: string | null, yanked: boolean, revoked: boolean, publishedAt: number | null, hasIcon: boolean];
type Details = [summary: string, latestVersion: string, versions: VersionRow[]];

/**
 * The numeric columns: the number of a module's publisher profile, publisher id, category,
 * entitlement and price among the header's distinct values (-1 for none), its figures, and its
 * rating's (-1 without rating figures).
 */
const NUMBERS = ["publisher", "publisherId", "category", "entitlement", "price", "updatedAt", "downloads", "ratingCount", "ratingSum"] as const;
type NumberColumn = (typeof NUMBERS)[number];

interface Header {
  ids: string[];
  names: string[];
  /** Distinct values, which the columns number. */
  publishers: PublisherProfile[];
  publisherIds: string[];
  categories: string[];
  entitlements: string[];
  prices: PublicPrice[];
  tags: string[];
  index: { fields: string[]; averageFieldLength: number[]; terms: string[] };
}

const gzipped = promisify(gzip);

/** Distinct values numbered in the order first seen (equal when their keys are). */
function numbering<T>(key: (value: T) => string = String) {
  const numbers = new Map<string, number>();
  const values: T[] = [];
  return {
    values,
    number(value: T | null): number {
      if (value === null) return -1;
      const known = key(value);
      let number = numbers.get(known);
      if (number === undefined) numbers.set(known, (number = values.push(value) - 1));
      return number;
    },
  };
}

/** A snapshot's bytes: the modules and their index at one moment (serialised before anything can change them). */
export function encodeSnapshot(writtenAt: number, entries: Iterable<ListedModule>, index: CatalogTextIndex): Promise<Buffer> {
  const modules = [...entries];
  const packed = index.pack(modules.map((module) => module.id));
  // Each profile as it is: two modules of one publisher may hold it from different moments.
  const [publishers, publisherIds, categories, entitlements, prices, tags] = [numbering<PublisherProfile>(JSON.stringify), numbering<string>(), numbering<string>(), numbering<string>(), numbering<PublicPrice>(JSON.stringify), numbering<string>()];
  const numberOf: Record<NumberColumn, (module: ListedModule) => number> = {
    publisher: (module) => publishers.number(module.publisher),
    publisherId: (module) => publisherIds.number(module.publisherId),
    category: (module) => categories.number(module.category),
    entitlement: (module) => entitlements.number(module.entitlement),
    price: (module) => prices.number(module.price),
    updatedAt: (module) => module.updatedAt,
    downloads: (module) => module.downloads,
    ratingCount: (module) => module.rating?.count ?? -1,
    ratingSum: (module) => module.rating?.sum ?? -1,
  };
  const numbers = new Float64Array(NUMBERS.length * modules.length);
  NUMBERS.forEach((column, c) => modules.forEach((module, at) => (numbers[c * modules.length + at] = numberOf[column](module))));
  const tagStarts: number[] = [0];
  const tagNumbers: number[] = [];
  for (const module of modules) tagStarts.push(tagNumbers.push(...module.tags.map((tag) => tags.number(tag))));
  const header: Header = {
    ids: modules.map((module) => module.id),
    names: modules.map((module) => module.name),
    publishers: publishers.values,
    publisherIds: publisherIds.values,
    categories: categories.values,
    entitlements: entitlements.values,
    prices: prices.values,
    tags: tags.values,
    index: { fields: packed.fields, averageFieldLength: packed.averageFieldLength, terms: packed.terms },
  };
  const details = modules.map((module) => Buffer.from(JSON.stringify(detailsOf(module)), "utf8"));
  const detailStarts = new Uint32Array(modules.length + 1);
  details.forEach((bytes, i) => (detailStarts[i + 1] = detailStarts[i] + bytes.length));
  const sections = [
    Buffer.from(JSON.stringify(header), "utf8"),
    littleEndian(numbers),
    littleEndian(Uint32Array.from([...tagStarts, ...tagNumbers])),
    littleEndian(packed.fieldLengths),
    littleEndian(packed.offsets),
    littleEndian(detailStarts),
    Buffer.concat(details),
    Buffer.from(packed.postings),
  ];
  const prefix = Buffer.alloc(prefixLength(SECTIONS));
  MAGIC.copy(prefix);
  prefix.writeDoubleLE(writtenAt, MAGIC.length);
  sections.slice(0, -1).forEach((section, i) => prefix.writeUInt32LE(section.length, MAGIC.length + 8 + i * 4));
  return gzipped(Buffer.concat([prefix, ...sections]));
}

const detailsOf = (module: ListedModule): Details => [
  module.summary,
  module.latestVersion,
  module.versions.map((version) => [version.version, version.minAppVersion, version.maxAppVersion, version.yanked, version.revoked, version.publishedAt?.getTime() ?? null, version.hasIcon]),
];

const versionsOf = (rows: VersionRow[]): VersionSummary[] =>
  rows.map((version) => ({
    version: version[0],
    minAppVersion: version[1],
    maxAppVersion: version[2],
    yanked: version[3],
    revoked: version[4],
    publishedAt: version[5] === null ? null : new Date(version[5]),
    hasIcon: version[6],
  }));

/** Whether bytes start as gzip does (RFC 1952's ID1 and ID2). */
export const isGzip = (bytes: Buffer) => bytes[0] === 0x1f && bytes[1] === 0x8b;

/** The layout's number of sections, or null when the bytes are no snapshot this version reads. */
function sectionCount(plain: Buffer): number | null {
  for (const [magic, sections] of [[MAGIC, SECTIONS], [ROWS_MAGIC, ROWS_SECTIONS]] as const) {
    if (plain.length >= prefixLength(sections) && plain.subarray(0, magic.length).equals(magic)) return sections;
  }
  return null;
}

/** What keeps stored bytes from being read as a snapshot: they are cut, or not what they say. */
export class UnreadableSnapshot extends Error {}
/** Bytes of another format, told from their first ones. */
class OtherFormat extends Error {}
/** A failure of the stored bytes' source itself (a missing object, a storage outage), passed on as it is. */
class SourceFailure extends Error {
  constructor(readonly failure: unknown) {
    super("The snapshot's source failed.");
  }
}

/**
 * A snapshot from its stored (gzipped) bytes, gunzipped while they arrive; null when they are not
 * a snapshot this version reads, or its index was packed with other fields than this version
 * indexes (its modules lack the descriptions to index them again). `written` hears when it was
 * written as soon as its first bytes are in. A failure of `stored` is thrown as it is; bytes that
 * cannot be read throw `UnreadableSnapshot`.
 */
export async function decodeSnapshot(stored: Iterable<Buffer> | AsyncIterable<Buffer>, written: (writtenAt: number) => void = () => undefined): Promise<CatalogSnapshot | null> {
  async function* gzipped() {
    let first = true;
    try {
      for await (const chunk of stored) {
        if (first && !isGzip(chunk)) throw new OtherFormat();
        first = false;
        yield chunk;
      }
      if (first) throw new OtherFormat();
    } catch (error) {
      throw error instanceof OtherFormat ? error : new SourceFailure(error);
    }
  }
  const chunks: Buffer[] = [];
  let length = 0;
  let sections: number | null = null;
  const collected = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      length += chunk.length;
      if (sections === null && length >= prefixLength(SECTIONS)) {
        const start = Buffer.concat(chunks);
        sections = sectionCount(start);
        if (sections === null) return done(new OtherFormat());
        written(start.readDoubleLE(MAGIC.length));
      }
      done();
    },
  });
  try {
    // Output in large chunks: at the default 16 KiB, gunzip takes three times as long.
    await pipeline(gzipped(), createGunzip({ chunkSize: 4 << 20 }), collected);
    if (sections === null) throw new OtherFormat();
    return decoded(Buffer.concat(chunks, length), sections);
  } catch (error) {
    if (error instanceof SourceFailure) throw error.failure;
    if (error instanceof OtherFormat) return null;
    throw new UnreadableSnapshot((error as Error).message);
  }
}

function decoded(plain: Buffer, sectionsIn: number): CatalogSnapshot | null {
  const sections: Buffer[] = [];
  let at = prefixLength(sectionsIn);
  for (let i = 0; i < sectionsIn; i += 1) {
    const end = i === sectionsIn - 1 ? plain.length : at + plain.readUInt32LE(MAGIC.length + 8 + i * 4);
    if (end > plain.length) throw new RangeError("The snapshot is cut.");
    sections.push(plain.subarray(at, end));
    at = end;
  }
  const writtenAt = plain.readDoubleLE(MAGIC.length);
  if (sectionsIn === ROWS_SECTIONS) {
    const [header, fieldLengths, offsets, postings] = sections;
    return fromRows(writtenAt, JSON.parse(header.toString("utf8")) as RowsHeader, { fieldLengths, offsets, postings });
  }
  const [json, numbers, tags, fieldLengths, offsets, detailStarts, details, postings] = sections;
  const header = JSON.parse(json.toString("utf8")) as Header;
  const count = header.ids.length;
  const numberColumns = fromLittleEndian(numbers, Float64Array);
  const columns: Columns = {
    ...header,
    prices: header.prices.map(withFallback),
    numbers: Object.fromEntries(NUMBERS.map((column, c) => [column, numberColumns.subarray(c * count, (c + 1) * count)])) as Record<NumberColumn, Float64Array>,
    tagNumbers: fromLittleEndian(tags, Uint32Array),
    detailStarts: fromLittleEndian(detailStarts, Uint32Array),
    // A copy, as the postings are: the details outlive the rest of the snapshot's bytes.
    details: Buffer.from(details),
  };
  const cut = numberColumns.length !== NUMBERS.length * count || columns.tagNumbers.length !== count + 1 + columns.tagNumbers[count] || columns.detailStarts.length !== count + 1 || columns.detailStarts[count] !== details.length;
  if (cut) throw new RangeError("The snapshot's columns are cut.");
  const modules = header.ids.map((_, at) => new SnapshotModule(columns, at));
  const index = unpackedTextIndex(packedIndex(header.index, { fieldLengths, offsets, postings }), header.ids);
  return index && { writtenAt, modules, index };
}

const packedIndex = (index: Header["index"], sections: { fieldLengths: Buffer; offsets: Buffer; postings: Buffer }) => ({
  ...index,
  fieldLengths: fromLittleEndian(sections.fieldLengths, Uint32Array),
  offsets: fromLittleEndian(sections.offsets, Uint32Array),
  // A copy: the postings outlive the rest of the snapshot's bytes.
  postings: new Uint8Array(sections.postings),
});

/** A price as snapshots written before §27 hold it: without a fallback, which is none. */
const withFallback = (price: PublicPrice): PublicPrice => ({ ...price, fallback: price.fallback ?? "none" });

type Columns = Header & { numbers: Record<NumberColumn, Float64Array>; tagNumbers: Uint32Array; detailStarts: Uint32Array; details: Buffer };

/**
 * A module of a snapshot: what search reads is at hand; what only a page shows is parsed from the
 * module's details when first read.
 */
class SnapshotModule implements ListedModule {
  readonly id: string;
  readonly name: string;
  readonly category: string | null;
  readonly publisherId: string;
  readonly publisher: PublisherProfile;
  readonly entitlement: string | null;
  readonly price: PublicPrice | null;
  readonly updatedAt: number;
  readonly downloads: number;
  readonly rating: CatalogEntry["rating"];
  readonly #columns: Columns;
  readonly #at: number;
  #tags: string[] | null = null;
  #details: { summary: string; latestVersion: string; versions: VersionSummary[] } | null = null;

  constructor(columns: Columns, at: number) {
    const { numbers } = columns;
    this.id = columns.ids[at];
    this.name = columns.names[at];
    this.category = numbers.category[at] === -1 ? null : columns.categories[numbers.category[at]];
    this.publisherId = columns.publisherIds[numbers.publisherId[at]];
    this.publisher = columns.publishers[numbers.publisher[at]];
    this.entitlement = numbers.entitlement[at] === -1 ? null : columns.entitlements[numbers.entitlement[at]];
    this.price = numbers.price[at] === -1 ? null : columns.prices[numbers.price[at]];
    this.updatedAt = numbers.updatedAt[at];
    this.downloads = numbers.downloads[at];
    this.rating = numbers.ratingCount[at] === -1 ? null : { count: numbers.ratingCount[at], sum: numbers.ratingSum[at] };
    this.#columns = columns;
    this.#at = at;
  }

  get tags(): string[] {
    if (!this.#tags) {
      const { tagNumbers, tags } = this.#columns;
      const count = this.#columns.ids.length;
      this.#tags = Array.from(tagNumbers.subarray(count + 1 + tagNumbers[this.#at], count + 1 + tagNumbers[this.#at + 1]), (number) => tags[number]);
    }
    return this.#tags;
  }
  get summary() {
    return this.#shown().summary;
  }
  get latestVersion() {
    return this.#shown().latestVersion;
  }
  get versions() {
    return this.#shown().versions;
  }

  #shown() {
    if (!this.#details) {
      const { details, detailStarts } = this.#columns;
      const [summary, latestVersion, versions] = JSON.parse(details.toString("utf8", detailStarts[this.#at], detailStarts[this.#at + 1])) as Details;
      this.#details = { summary, latestVersion, versions: versionsOf(versions) };
    }
    return this.#details;
  }
}

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
interface RowsHeader {
  publishers: PublisherProfile[];
  modules: ModuleRow[];
  index: Header["index"];
}

function fromRows(writtenAt: number, header: RowsHeader, sections: { fieldLengths: Buffer; offsets: Buffer; postings: Buffer }): CatalogSnapshot | null {
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
      price: row[8] && withFallback(row[8]),
      updatedAt: row[9],
      downloads: row[10],
      rating: row[11],
      latestVersion: row[12],
      versions: versionsOf(row[13]),
    }),
  );
  const index = unpackedTextIndex(packedIndex(header.index, sections), modules.map((module) => module.id));
  return index && { writtenAt, modules, index };
}

const LITTLE_ENDIAN_HOST = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

function littleEndian(numbers: Uint32Array | Float64Array): Buffer {
  const bytes = Buffer.alloc(numbers.byteLength);
  numbers.forEach((number, i) => (numbers instanceof Float64Array ? bytes.writeDoubleLE(number, i * 8) : bytes.writeUInt32LE(number, i * 4)));
  return bytes;
}

/** Little-endian numbers as a typed array (of a copy: a view needs aligned bytes). */
function fromLittleEndian<T extends Uint32Array | Float64Array>(bytes: Buffer, Type: { new (buffer: ArrayBuffer): T; new (length: number): T; BYTES_PER_ELEMENT: number }): T {
  const size = Type.BYTES_PER_ELEMENT;
  if (bytes.length % size !== 0) throw new RangeError("The snapshot's numbers are cut.");
  if (LITTLE_ENDIAN_HOST) return new Type(new Uint8Array(bytes).buffer);
  const numbers = new Type(bytes.length / size);
  for (let i = 0; i < numbers.length; i += 1) numbers[i] = size === 8 ? bytes.readDoubleLE(i * 8) : bytes.readUInt32LE(i * 4);
  return numbers;
}
