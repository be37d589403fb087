/**
 * A ZIP writer that can lie: every field of every record can be set apart from what the bytes
 * say, records can be left out of the central directory, and bytes can be put where no record
 * accounts for them. Well-formed ZIP writers (yazl) refuse to write most hostile archives; tests
 * build them here. With no overrides it writes a plain, valid archive.
 */
import { crc32, deflateRawSync } from "node:zlib";

export interface RawEntry {
  name: string | Buffer;
  content?: Buffer | string;
  /** The name in the local header, when it differs from the central directory's. */
  localName?: string | Buffer;
  method?: 0 | 8;
  /** General-purpose flags of both headers (bit 11, UTF-8 names, is set for non-ASCII names by default). */
  flags?: number;
  localFlags?: number;
  /** The CRC-32 both headers declare, instead of the content's. */
  crc?: number;
  /** Version made by: host system << 8 | version (3 is Unix). */
  madeBy?: number;
  externalAttributes?: number;
  extra?: Buffer;
  /** false: the local record is written, but no central entry indexes it. */
  inCentral?: boolean;
  /** Sizes and CRC in a data descriptor after the data (local header fields zero). */
  dataDescriptor?: boolean;
  /** What the data descriptor says, when it lies. */
  descriptorCrc?: number;
  /** Bytes written after this entry's record that no record accounts for. */
  trailingGap?: Buffer;
}

export interface RawArchive {
  /** Bytes before the first local header, e.g. a self-extractor stub. */
  prepend?: Buffer;
  /** The entry count of the end record, instead of the central directory's. */
  endRecordCount?: number;
  comment?: Buffer;
}

const bytesOf = (value: string | Buffer) => (typeof value === "string" ? Buffer.from(value, "utf8") : value);

export function lyingZip(entries: RawEntry[], archive: RawArchive = {}): Buffer {
  const parts: Buffer[] = [];
  let offset = 0;
  const push = (buffer: Buffer) => {
    parts.push(buffer);
    offset += buffer.length;
  };
  if (archive.prepend) push(archive.prepend);

  const central: Buffer[] = [];
  for (const entry of entries) {
    const content = bytesOf(entry.content ?? "");
    const name = bytesOf(entry.name);
    const localName = bytesOf(entry.localName ?? entry.name);
    const method = entry.method ?? 8;
    const data = method === 8 ? deflateRawSync(content) : content;
    const crc = entry.crc ?? crc32(content);
    const utf8Flag = name.some((byte) => byte > 0x7f) ? 0x0800 : 0;
    const flags = (entry.flags ?? utf8Flag) | (entry.dataDescriptor ? 0x0008 : 0);
    const localFlags = entry.localFlags ?? flags;
    const extra = entry.extra ?? Buffer.alloc(0);
    const localOffset = offset;

    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(localFlags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0, 10);
    local.writeUInt16LE(0x5c21, 12);
    local.writeUInt32LE(entry.dataDescriptor ? 0 : crc, 14);
    local.writeUInt32LE(entry.dataDescriptor ? 0 : data.length, 18);
    local.writeUInt32LE(entry.dataDescriptor ? 0 : content.length, 22);
    local.writeUInt16LE(localName.length, 26);
    local.writeUInt16LE(extra.length, 28);
    push(Buffer.concat([local, localName, extra, data]));
    if (entry.dataDescriptor) {
      const descriptor = Buffer.alloc(16);
      descriptor.writeUInt32LE(0x08074b50, 0);
      descriptor.writeUInt32LE(entry.descriptorCrc ?? crc, 4);
      descriptor.writeUInt32LE(data.length, 8);
      descriptor.writeUInt32LE(content.length, 12);
      push(descriptor);
    }
    if (entry.trailingGap) push(entry.trailingGap);
    if (entry.inCentral === false) continue;

    const header = Buffer.alloc(46);
    header.writeUInt32LE(0x02014b50, 0);
    header.writeUInt16LE(entry.madeBy ?? 20, 4);
    header.writeUInt16LE(20, 6);
    header.writeUInt16LE(flags, 8);
    header.writeUInt16LE(method, 10);
    header.writeUInt16LE(0, 12);
    header.writeUInt16LE(0x5c21, 14);
    header.writeUInt32LE(crc, 16);
    header.writeUInt32LE(data.length, 20);
    header.writeUInt32LE(content.length, 24);
    header.writeUInt16LE(name.length, 28);
    header.writeUInt16LE(extra.length, 30);
    header.writeUInt16LE(0, 32);
    header.writeUInt16LE(0, 34);
    header.writeUInt16LE(0, 36);
    header.writeUInt32LE(entry.externalAttributes ?? 0, 38);
    header.writeUInt32LE(localOffset, 42);
    central.push(Buffer.concat([header, name, extra]));
  }

  const directory = Buffer.concat(central);
  const directoryOffset = offset;
  push(directory);
  const comment = archive.comment ?? Buffer.alloc(0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(archive.endRecordCount ?? central.length, 8);
  end.writeUInt16LE(archive.endRecordCount ?? central.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(directoryOffset, 16);
  end.writeUInt16LE(comment.length, 20);
  push(Buffer.concat([end, comment]));
  return Buffer.concat(parts);
}
