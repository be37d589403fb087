import { closeSync, openSync, readSync, statSync } from "node:fs";
import { inflateRawSync } from "node:zlib";

/**
 * The `Main-Class` of a jar's manifest, or null: firebase-tools' Firestore jar is executable
 * (`java -jar`), the google-cloud-cli's is a class path. Reads only the zip's directory and the
 * manifest, not the 130 MB around them.
 */
export function jarMainClass(file: string): string | null {
  const manifest = readZipEntry(file, "META-INF/MANIFEST.MF");
  const line = manifest?.toString("utf8").split(/\r?\n/).find((entry) => entry.startsWith("Main-Class:"));
  return line ? line.slice("Main-Class:".length).trim() : null;
}

function readZipEntry(file: string, name: string): Buffer | null {
  const fd = openSync(file, "r");
  try {
    const size = statSync(file).size;
    const read = (position: number, length: number) => {
      const buffer = Buffer.alloc(length);
      const got = readSync(fd, buffer, 0, length, position);
      return buffer.subarray(0, got);
    };
    // The end-of-central-directory record sits in the last 22 bytes plus a comment of at most 64 KiB.
    const tailStart = Math.max(0, size - 22 - 0xffff);
    const tail = read(tailStart, size - tailStart);
    const end = tail.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    if (end === -1) return null;
    const entries = tail.readUInt16LE(end + 10);
    const directory = read(tail.readUInt32LE(end + 16), tail.readUInt32LE(end + 12));
    let at = 0;
    for (let index = 0; index < entries && at + 46 <= directory.length; index += 1) {
      const method = directory.readUInt16LE(at + 10);
      const compressedSize = directory.readUInt32LE(at + 20);
      const nameLength = directory.readUInt16LE(at + 28);
      const extraLength = directory.readUInt16LE(at + 30);
      const commentLength = directory.readUInt16LE(at + 32);
      const localHeader = directory.readUInt32LE(at + 42);
      if (directory.toString("utf8", at + 46, at + 46 + nameLength) === name) {
        const header = read(localHeader, 30);
        const data = read(localHeader + 30 + header.readUInt16LE(26) + header.readUInt16LE(28), compressedSize);
        return method === 0 ? data : method === 8 ? inflateRawSync(data) : null;
      }
      at += 46 + nameLength + extraLength + commentLength;
    }
    return null;
  } finally {
    closeSync(fd);
  }
}
