import { crc32, createInflateRaw } from "node:zlib";

/**
 * A strict ZIP reader: it accepts only archives that every ZIP reader reads the same way, so what
 * the service checks is what a client unpacks.
 *
 * Readers disagree where an archive says two things at once: the end record's entry count against
 * the central directory, a local header against its central entry, bytes that only a sequential
 * reader (or only a directory reader) sees, names that differ only in case, `./` or Unicode form,
 * names that mean a path on one system and a file name on another. Each of those is refused here:
 * the central directory is read whole and checked against the end record, then every local header
 * is walked in order from the first byte to the central directory, and must match its entry byte
 * for byte. Entries are then inflated with their sizes and CRC-32 checked.
 */

export class ZipFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ZipFormatError";
  }
}

export interface ZipLimits {
  maxEntries: number;
  maxUncompressedBytes: number;
  maxCompressionRatio: number;
}

export interface ZipEntry {
  name: string;
  directory: boolean;
  method: typeof STORED | typeof DEFLATED;
  crc32: number;
  compressedSize: number;
  uncompressedSize: number;
  /** Offset of the entry's data in the archive. */
  dataOffset: number;
}

const SIGNATURE = {
  local: 0x04034b50,
  central: 0x02014b50,
  end: 0x06054b50,
  zip64Locator: 0x07064b50,
  descriptor: 0x08074b50,
} as const;
const END_RECORD_SIZE = 22;
const CENTRAL_HEADER_SIZE = 46;
const LOCAL_HEADER_SIZE = 30;
const MAX_COMMENT = 0xffff;
const STORED = 0;
const DEFLATED = 8;
/** Flag bits a plain archive may carry: deflate options (1, 2), data descriptor (3), UTF-8 names (11). */
const ALLOWED_FLAGS = 0b0000_1000_0000_1110;
const FLAG_ENCRYPTED = 0x0001;
const FLAG_STRONG_ENCRYPTION = 0x0040;
const FLAG_DATA_DESCRIPTOR = 0x0008;
const FLAG_UTF8 = 0x0800;
/** Extra fields that give an entry a second size or name: ZIP64 sizes, Info-ZIP Unicode path. */
const EXTRA_ZIP64 = 0x0001;
const EXTRA_UNICODE_PATH = 0x7075;
const HOST_UNIX = 3;
const HOST_MACOS = 19;
const FILE_TYPE_MASK = 0o170000;
const REGULAR_FILE = 0o100000;
const DIRECTORY = 0o040000;
const DOS_DIRECTORY = 0x10;

interface CentralEntry extends Omit<ZipEntry, "dataOffset"> {
  nameBytes: Buffer;
  flags: number;
  versionNeeded: number;
  localOffset: number;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Reads and cross-checks an archive's structure; throws ZipFormatError at the first ambiguity. */
export function readZipDirectory(bytes: Buffer, limits: ZipLimits): ZipEntry[] {
  const endOffset = findEndRecord(bytes);
  if (endOffset >= 20 && bytes.readUInt32LE(endOffset - 20) === SIGNATURE.zip64Locator) {
    throw new ZipFormatError("ZIP64 archives are not accepted.");
  }
  const disk = bytes.readUInt16LE(endOffset + 4);
  const directoryDisk = bytes.readUInt16LE(endOffset + 6);
  const entriesOnDisk = bytes.readUInt16LE(endOffset + 8);
  const entryCount = bytes.readUInt16LE(endOffset + 10);
  const directorySize = bytes.readUInt32LE(endOffset + 12);
  const directoryOffset = bytes.readUInt32LE(endOffset + 16);
  if (disk !== 0 || directoryDisk !== 0 || entriesOnDisk !== entryCount) {
    throw new ZipFormatError("Multi-disk archives are not accepted.");
  }
  if (entryCount > limits.maxEntries) {
    throw new ZipFormatError(`The archive has ${entryCount} entries; at most ${limits.maxEntries} are allowed.`);
  }
  if (directoryOffset + directorySize !== endOffset) {
    throw new ZipFormatError("The end record's central directory offset and size do not meet the end record.");
  }

  const entries = readCentralDirectory(bytes, directoryOffset, endOffset);
  if (entries.length !== entryCount) {
    throw new ZipFormatError(`The end record counts ${entryCount} entries; the central directory holds ${entries.length}.`);
  }
  if (entries.length > limits.maxEntries) {
    throw new ZipFormatError(`The archive has ${entries.length} entries; at most ${limits.maxEntries} are allowed.`);
  }
  assertUniqueNames(entries);
  const located = walkLocalHeaders(bytes, entries, directoryOffset);

  const uncompressed = entries.reduce((sum, entry) => sum + entry.uncompressedSize, 0);
  const compressed = entries.reduce((sum, entry) => sum + entry.compressedSize, 0);
  if (uncompressed > limits.maxUncompressedBytes) {
    throw new ZipFormatError(`The archive unpacks to ${uncompressed} bytes; at most ${limits.maxUncompressedBytes} are allowed.`);
  }
  if (uncompressed > limits.maxCompressionRatio * Math.max(compressed, 1)) {
    throw new ZipFormatError(`The archive's compression ratio exceeds ${limits.maxCompressionRatio}.`);
  }
  return located;
}

/** The one end record, which must end the file exactly (its comment included). */
function findEndRecord(bytes: Buffer): number {
  const earliest = Math.max(0, bytes.length - END_RECORD_SIZE - MAX_COMMENT);
  for (let offset = bytes.length - END_RECORD_SIZE; offset >= earliest; offset -= 1) {
    if (bytes.readUInt32LE(offset) !== SIGNATURE.end) continue;
    if (offset + END_RECORD_SIZE + bytes.readUInt16LE(offset + 20) !== bytes.length) continue;
    const comment = bytes.subarray(offset + END_RECORD_SIZE);
    if (comment.includes(signatureBytes(SIGNATURE.end))) {
      throw new ZipFormatError("The archive comment holds another end record.");
    }
    return offset;
  }
  throw new ZipFormatError("Not a ZIP archive: no end-of-central-directory record ends the file.");
}

function readCentralDirectory(bytes: Buffer, start: number, end: number): CentralEntry[] {
  const entries: CentralEntry[] = [];
  let offset = start;
  while (offset < end) {
    if (offset + CENTRAL_HEADER_SIZE > end || bytes.readUInt32LE(offset) !== SIGNATURE.central) {
      throw new ZipFormatError(`The central directory has bytes that are not an entry at offset ${offset}.`);
    }
    const versionMadeBy = bytes.readUInt16LE(offset + 4);
    const versionNeeded = bytes.readUInt16LE(offset + 6);
    const flags = bytes.readUInt16LE(offset + 8);
    const method = bytes.readUInt16LE(offset + 10);
    const crc = bytes.readUInt32LE(offset + 16);
    const compressedSize = bytes.readUInt32LE(offset + 20);
    const uncompressedSize = bytes.readUInt32LE(offset + 24);
    const nameLength = bytes.readUInt16LE(offset + 28);
    const extraLength = bytes.readUInt16LE(offset + 30);
    const commentLength = bytes.readUInt16LE(offset + 32);
    const diskStart = bytes.readUInt16LE(offset + 34);
    const externalAttributes = bytes.readUInt32LE(offset + 38);
    const localOffset = bytes.readUInt32LE(offset + 42);
    const nameStart = offset + CENTRAL_HEADER_SIZE;
    const next = nameStart + nameLength + extraLength + commentLength;
    if (next > end) throw new ZipFormatError(`Central entry ${entries.length + 1} runs past the central directory.`);
    const nameBytes = bytes.subarray(nameStart, nameStart + nameLength);
    const name = decodeName(nameBytes, flags);
    assertPlainEntry(name, flags, method, diskStart, compressedSize, uncompressedSize);
    assertExtraFields(bytes.subarray(nameStart + nameLength, nameStart + nameLength + extraLength), name);
    const directory = name.endsWith("/");
    assertRegularOrDirectory(name, directory, versionMadeBy >> 8, externalAttributes);
    if (directory && uncompressedSize !== 0) throw new ZipFormatError(`Directory entry '${name}' has content.`);
    entries.push({
      name,
      nameBytes,
      directory,
      method: method as ZipEntry["method"],
      flags,
      versionNeeded,
      crc32: crc,
      compressedSize,
      uncompressedSize,
      localOffset,
    });
    offset = next;
  }
  return entries;
}

function decodeName(nameBytes: Buffer, flags: number): string {
  if (nameBytes.length === 0) throw new ZipFormatError("An entry has an empty name.");
  // Without the UTF-8 flag, readers decode bytes above 0x7f as CP437 or as UTF-8: two readings.
  if (!(flags & FLAG_UTF8) && nameBytes.some((byte) => byte > 0x7f)) {
    throw new ZipFormatError("An entry name has non-ASCII bytes without the UTF-8 flag.");
  }
  let name: string;
  try {
    name = utf8.decode(nameBytes);
  } catch {
    throw new ZipFormatError("An entry name is not valid UTF-8.");
  }
  assertSafeName(name);
  return name;
}

/** A relative path of plain segments, the same on every system. */
function assertSafeName(name: string): void {
  const shown = JSON.stringify(name);
  if ([...name].some((character) => character < " " || character === "\u007f")) throw new ZipFormatError(`Entry name ${shown} has a control character.`);
  if (name.includes("\\")) throw new ZipFormatError(`Entry name ${shown} has a backslash.`);
  if (name.startsWith("/")) throw new ZipFormatError(`Entry name ${shown} is absolute.`);
  if (/^[A-Za-z]:/.test(name)) throw new ZipFormatError(`Entry name ${shown} starts with a drive letter.`);
  const segments = (name.endsWith("/") ? name.slice(0, -1) : name).split("/");
  for (const segment of segments) {
    if (segment === "") throw new ZipFormatError(`Entry name ${shown} has an empty segment.`);
    if (segment === "." || segment === "..") throw new ZipFormatError(`Entry name ${shown} has a '${segment}' segment.`);
  }
}

function assertPlainEntry(name: string, flags: number, method: number, diskStart: number, compressedSize: number, uncompressedSize: number): void {
  if (flags & (FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION)) throw new ZipFormatError(`Entry '${name}' is encrypted.`);
  if (flags & ~ALLOWED_FLAGS) throw new ZipFormatError(`Entry '${name}' uses unsupported ZIP features (flags 0x${flags.toString(16)}).`);
  if (method !== STORED && method !== DEFLATED) throw new ZipFormatError(`Entry '${name}' uses compression method ${method}; only stored and deflate are accepted.`);
  if (method === STORED && compressedSize !== uncompressedSize) throw new ZipFormatError(`Stored entry '${name}' has two different sizes.`);
  if (diskStart !== 0) throw new ZipFormatError(`Entry '${name}' starts on another disk.`);
}

function assertExtraFields(extra: Buffer, name: string): void {
  let offset = 0;
  while (offset < extra.length) {
    if (offset + 4 > extra.length) throw new ZipFormatError(`Entry '${name}' has a truncated extra field.`);
    const id = extra.readUInt16LE(offset);
    const size = extra.readUInt16LE(offset + 2);
    if (offset + 4 + size > extra.length) throw new ZipFormatError(`Entry '${name}' has a truncated extra field.`);
    if (id === EXTRA_ZIP64) throw new ZipFormatError(`Entry '${name}' has ZIP64 sizes; ZIP64 archives are not accepted.`);
    if (id === EXTRA_UNICODE_PATH) throw new ZipFormatError(`Entry '${name}' carries a second (Unicode path) name.`);
    offset += 4 + size;
  }
}

/** Symbolic links, devices, FIFOs and the like would unpack as something other than a file. */
function assertRegularOrDirectory(name: string, directory: boolean, host: number, externalAttributes: number): void {
  if (host === HOST_UNIX || host === HOST_MACOS) {
    const type = (externalAttributes >>> 16) & FILE_TYPE_MASK;
    if (type === 0) return;
    if (type === REGULAR_FILE && !directory) return;
    if (type === DIRECTORY && directory) return;
    throw new ZipFormatError(`Entry '${name}' is not a regular file or directory (a symbolic link or special file).`);
  }
  if (externalAttributes & DOS_DIRECTORY && !directory) throw new ZipFormatError(`Entry '${name}' is marked as a directory.`);
}

/** Names equal after dropping case and Unicode form differences would land on one file somewhere. */
function assertUniqueNames(entries: CentralEntry[]): void {
  const seen = new Map<string, string>();
  for (const { name } of entries) {
    const key = name.replace(/\/$/, "").normalize("NFC").toLowerCase();
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      throw new ZipFormatError(`Entries ${JSON.stringify(earlier)} and ${JSON.stringify(name)} name the same file.`);
    }
    seen.set(key, name);
  }
}

/**
 * Walks the local records from the archive's first byte to the central directory: each must sit
 * exactly where the previous one ended and repeat its central entry, so no byte is read by one
 * kind of reader only.
 */
function walkLocalHeaders(bytes: Buffer, entries: CentralEntry[], directoryOffset: number): ZipEntry[] {
  const ordered = [...entries].sort((a, b) => a.localOffset - b.localOffset);
  const located: ZipEntry[] = [];
  let expected = 0;
  for (const entry of ordered) {
    if (entry.localOffset !== expected) {
      throw new ZipFormatError(
        expected === 0
          ? "The archive has bytes before its first entry."
          : `The archive has ${entry.localOffset > expected ? "bytes no entry accounts for" : "overlapping entries"} before '${entry.name}'.`,
      );
    }
    const at = entry.localOffset;
    if (at + LOCAL_HEADER_SIZE > directoryOffset || bytes.readUInt32LE(at) !== SIGNATURE.local) {
      throw new ZipFormatError(`Entry '${entry.name}' has no local header where the central directory says.`);
    }
    const versionNeeded = bytes.readUInt16LE(at + 4);
    const flags = bytes.readUInt16LE(at + 6);
    const method = bytes.readUInt16LE(at + 8);
    const crc = bytes.readUInt32LE(at + 14);
    const compressedSize = bytes.readUInt32LE(at + 18);
    const uncompressedSize = bytes.readUInt32LE(at + 22);
    const nameLength = bytes.readUInt16LE(at + 26);
    const extraLength = bytes.readUInt16LE(at + 28);
    const nameBytes = bytes.subarray(at + LOCAL_HEADER_SIZE, at + LOCAL_HEADER_SIZE + nameLength);
    const dataOffset = at + LOCAL_HEADER_SIZE + nameLength + extraLength;
    if (!nameBytes.equals(entry.nameBytes)) {
      throw new ZipFormatError(`Entry '${entry.name}' has another name in its local header.`);
    }
    if (versionNeeded !== entry.versionNeeded || flags !== entry.flags || method !== entry.method) {
      throw new ZipFormatError(`Entry '${entry.name}' has other flags, version or method in its local header.`);
    }
    assertExtraFields(bytes.subarray(at + LOCAL_HEADER_SIZE + nameLength, dataOffset), entry.name);
    const dataEnd = dataOffset + entry.compressedSize;
    if (dataEnd > directoryOffset) throw new ZipFormatError(`Entry '${entry.name}' runs into the central directory.`);
    let end = dataEnd;
    if (flags & FLAG_DATA_DESCRIPTOR) {
      const zeroOrSame = (local: number, central: number) => local === 0 || local === central;
      if (!zeroOrSame(crc, entry.crc32) || !zeroOrSame(compressedSize, entry.compressedSize) || !zeroOrSame(uncompressedSize, entry.uncompressedSize)) {
        throw new ZipFormatError(`Entry '${entry.name}' has other sizes or CRC in its local header.`);
      }
      end = readDataDescriptor(bytes, entry, dataEnd, directoryOffset);
    } else if (crc !== entry.crc32 || compressedSize !== entry.compressedSize || uncompressedSize !== entry.uncompressedSize) {
      throw new ZipFormatError(`Entry '${entry.name}' has other sizes or CRC in its local header.`);
    }
    located.push({
      name: entry.name,
      directory: entry.directory,
      method: entry.method,
      crc32: entry.crc32,
      compressedSize: entry.compressedSize,
      uncompressedSize: entry.uncompressedSize,
      dataOffset,
    });
    expected = end;
  }
  if (expected !== directoryOffset) {
    throw new ZipFormatError("The archive has bytes between its last entry and the central directory that no entry accounts for.");
  }
  return located;
}

/** The data descriptor after an entry's data (with or without its signature); returns where it ends. */
function readDataDescriptor(bytes: Buffer, entry: CentralEntry, at: number, limit: number): number {
  const signed = at + 4 <= limit && bytes.readUInt32LE(at) === SIGNATURE.descriptor;
  const fields = signed ? at + 4 : at;
  if (fields + 12 > limit) throw new ZipFormatError(`Entry '${entry.name}' has no data descriptor.`);
  if (bytes.readUInt32LE(fields) !== entry.crc32 || bytes.readUInt32LE(fields + 4) !== entry.compressedSize || bytes.readUInt32LE(fields + 8) !== entry.uncompressedSize) {
    throw new ZipFormatError(`Entry '${entry.name}' has another size or CRC in its data descriptor.`);
  }
  return fields + 12;
}

/**
 * Inflates an entry and checks it against its directory entry: the exact size, the CRC-32, and a
 * deflate stream that ends exactly at the entry's last byte. Chunks go to `onData` as they come,
 * so memory stays at a chunk whatever the entry's size.
 */
export function verifyEntry(bytes: Buffer, entry: ZipEntry, onData?: (chunk: Buffer) => void): Promise<void> {
  const data = bytes.subarray(entry.dataOffset, entry.dataOffset + entry.compressedSize);
  if (entry.method === STORED || data.length === 0) {
    // An empty deflated entry may have no deflate data at all; anything else is checked below.
    if (data.length === 0 && entry.uncompressedSize !== 0) {
      return Promise.reject(new ZipFormatError(`Entry '${entry.name}' unpacks to nothing, not its declared ${entry.uncompressedSize} bytes.`));
    }
    if (crc32(data) !== entry.crc32) return Promise.reject(new ZipFormatError(`Entry '${entry.name}' fails its CRC-32 check.`));
    onData?.(data);
    return Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    const inflate = createInflateRaw();
    let size = 0;
    let crc = 0;
    let failed = false;
    const fail = (message: string) => {
      if (failed) return;
      failed = true;
      inflate.destroy();
      reject(new ZipFormatError(message));
    };
    inflate.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > entry.uncompressedSize) return fail(`Entry '${entry.name}' unpacks to more than its declared ${entry.uncompressedSize} bytes.`);
      crc = crc32(chunk, crc);
      onData?.(chunk);
    });
    inflate.once("error", () => fail(`Entry '${entry.name}' is not valid deflate data.`));
    inflate.once("end", () => {
      if (failed) return;
      if (size !== entry.uncompressedSize) return fail(`Entry '${entry.name}' unpacks to ${size} bytes, not its declared ${entry.uncompressedSize}.`);
      if (inflate.bytesWritten !== data.length) return fail(`Entry '${entry.name}' has bytes after its compressed data.`);
      if (crc !== entry.crc32) return fail(`Entry '${entry.name}' fails its CRC-32 check.`);
      resolve();
    });
    inflate.end(data);
  });
}

function signatureBytes(signature: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32LE(signature);
  return buffer;
}
