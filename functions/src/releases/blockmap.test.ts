import { gzipSync } from "node:zlib";
import { blockmapProblem } from "./rules";

const blockmap = (files: unknown) => gzipSync(JSON.stringify({ version: "2", files }));

describe("blockmapProblem (§19)", () => {
  it("takes a blockmap whose blocks add up to the installer", () => {
    expect(blockmapProblem(blockmap([{ name: "file", offset: 0, checksums: ["a", "b"], sizes: [100, 50] }]), 150)).toBeNull();
  });

  it("says what is wrong with any other", () => {
    expect(blockmapProblem(blockmap([{ name: "file", offset: 0, checksums: ["a"], sizes: [100] }]), 150)).toBe("the blockmap's blocks add up to 100 bytes, the installer has 150");
    expect(blockmapProblem(Buffer.from("{}"), 1)).toMatch(/not gzip of JSON/);
    expect(blockmapProblem(gzipSync("not json"), 1)).toMatch(/not gzip of JSON/);
    expect(blockmapProblem(blockmap([]), 1)).toBe("the blockmap has no files");
    expect(blockmapProblem(blockmap([{ checksums: ["a"], sizes: [1, 2] }]), 3)).toMatch(/as many sizes as checksums/);
    expect(blockmapProblem(blockmap([{ checksums: ["a"], sizes: [-1] }]), -1)).toMatch(/positive whole numbers/);
  });
});
