import { PNG } from "pngjs";
import { ApiError } from "../core/errors";

/** What a module's icon may be (contract §16). */
export const ICON_RULES = { maxBytes: 256 * 1024, maxSide: 512 } as const;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * Checks that `bytes` are a PNG within the icon rules: the size its header declares is checked
 * first, then pngjs decodes the whole image (every chunk's CRC, the image data), so what is served
 * as `image/png` is one.
 */
export function checkIcon(bytes: Buffer, name: string): { width: number; height: number } {
  const refuse = (why: string) => new ApiError("invalid_package", `${name} ${why}`);
  if (bytes.length > ICON_RULES.maxBytes) throw refuse(`is larger than ${ICON_RULES.maxBytes / 1024} KiB.`);
  if (bytes.length < 24 || !bytes.subarray(0, 8).equals(PNG_SIGNATURE) || bytes.toString("latin1", 12, 16) !== "IHDR") {
    throw refuse("is not a PNG image.");
  }
  const width = bytes.readUInt32BE(16);
  const height = bytes.readUInt32BE(20);
  if (width === 0 || height === 0 || width > ICON_RULES.maxSide || height > ICON_RULES.maxSide) {
    throw refuse(`is ${width}×${height}: an icon is at most ${ICON_RULES.maxSide}×${ICON_RULES.maxSide}.`);
  }
  try {
    PNG.sync.read(bytes);
  } catch (error) {
    throw refuse(`is not a valid PNG image (${(error as Error).message}).`);
  }
  return { width, height };
}
