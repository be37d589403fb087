import { pngImage } from "../../test/support/packages";
import { ApiError } from "../core/errors";
import { checkIcon } from "./icon";

const refusal = (bytes: Buffer) => {
  try {
    checkIcon(bytes, "icon.png");
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe("invalid_package");
    return (error as ApiError).message;
  }
  throw new Error("The icon was taken.");
};

describe("module icons (contract §16)", () => {
  it("takes a PNG up to 512×512", () => {
    expect(checkIcon(pngImage(128, 128), "icon.png")).toEqual({ width: 128, height: 128 });
    expect(checkIcon(pngImage(512, 16), "icon.png")).toEqual({ width: 512, height: 16 });
  });

  it("refuses what is larger, not a PNG, or a broken PNG", () => {
    expect(refusal(pngImage(513, 8))).toMatch(/513×8.*at most 512×512/);
    expect(refusal(Buffer.from("<svg onload=alert(1)></svg>"))).toMatch(/not a PNG/);
    expect(refusal(Buffer.from("GIF89a........................"))).toMatch(/not a PNG/);
    expect(refusal(Buffer.alloc(300 * 1024))).toMatch(/larger than 256 KiB/);
    const image = pngImage(64, 64);
    expect(refusal(image.subarray(0, image.length - 40))).toMatch(/not a valid PNG/);
    const corrupt = Buffer.from(image);
    corrupt[40] ^= 0xff;
    expect(refusal(corrupt)).toMatch(/not a valid PNG/);
    // A header that declares a huge image over a small file: refused before anything is decoded.
    const huge = Buffer.from(image);
    huge.writeUInt32BE(100_000, 16);
    expect(refusal(huge)).toMatch(/100000×64/);
  });
});
