import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";

/**
 * A blockmap in electron-builder's format (gzip of JSON: `version`, `files` with each block's
 * `checksums` and `sizes`), of fixed-size blocks: what the demo installers and the differential
 * download test publish beside their installers. electron-builder cuts blocks by content; the
 * downloader only compares checksums, so fixed blocks serve the same.
 */
export function fixedBlockmap(bytes: Buffer, blockSize = 64 * 1024): Buffer {
  const sizes: number[] = [];
  const checksums: string[] = [];
  for (let offset = 0; offset < bytes.length; offset += blockSize) {
    const block = bytes.subarray(offset, offset + blockSize);
    sizes.push(block.length);
    checksums.push(createHash("sha256").update(block).digest("base64"));
  }
  return gzipSync(JSON.stringify({ version: "2", files: [{ name: "file", offset: 0, checksums, sizes }] }));
}
