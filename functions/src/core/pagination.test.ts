import { Timestamp } from "firebase-admin/firestore";
import { cursorCodec } from "./pagination";

describe("list cursors", () => {
  const codec = cursorCodec(Buffer.alloc(32, 1));
  const position = { at: new Timestamp(1_800_000_000, 123), id: "acme.charts" };

  it("round-trips a position", () => {
    expect(codec.decode(codec.encode(position))).toEqual(position);
  });

  it("refuses a cursor that was tampered with, made under another key, or forged", () => {
    const cursor = codec.encode(position);
    const [payload, mac] = cursor.split(".");
    const changed = Buffer.from(JSON.stringify({ s: 1, n: 0, id: "zzz" })).toString("base64url");
    for (const bad of [`${changed}.${mac}`, cursorCodec(Buffer.alloc(32, 2)).encode(position), payload, `${payload}.${mac}.x`, "", "..."]) {
      expect(() => codec.decode(bad)).toThrow(expect.objectContaining({ code: "invalid_request" }));
    }
  });

  it("refuses a well-signed position whose id could not be a document id", () => {
    expect(() => codec.decode(codec.encode({ ...position, id: "a/b" }))).toThrow(expect.objectContaining({ code: "invalid_request" }));
  });
});
