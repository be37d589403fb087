import { createSocket } from "node:dgram";
import { promises as dns } from "node:dns";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { readDnsRecords, withRecord } from "./dns-records";
import { startLocalDns, type LocalDns } from "./dns-server";

/**
 * `npm start`'s DNS server: a records file edited while it runs, every other name from the
 * resolver it forwards to (here a second local server standing in for the machine's), and
 * whatever arrives on its port.
 */
describe("the local DNS server", () => {
  let folder: string;
  let file: string;
  let upstream: LocalDns;
  let server: LocalDns;
  const resolver = () => {
    const resolver = new dns.Resolver({ timeout: 1_000, tries: 1 });
    resolver.setServers([server.address]);
    return resolver;
  };
  const write = (records: ReturnType<typeof readDnsRecords>) => writeFileSync(file, JSON.stringify({ records }));

  beforeAll(async () => {
    folder = mkdtempSync(path.join(tmpdir(), "local-dns-"));
    file = path.join(folder, "dns-records.json");
    upstream = await startLocalDns();
    upstream.set("hooks.example.test", "A", ["203.0.113.7"]);
    upstream.set("hooks.example.test", "TXT", ["from upstream"]);
    server = await startLocalDns({ recordsFile: file, forward: [upstream.address] });
  });
  afterAll(async () => {
    await server.stop();
    await upstream.stop();
    rmSync(folder, { recursive: true, force: true });
  });

  it("answers the records file, read again when it changes, and refuses a file of the wrong shape as empty", async () => {
    const name = "_marketplace-verification.initech.example";
    await expect(resolver().resolveTxt(name)).rejects.toMatchObject({ code: "ENOTFOUND" });
    write(withRecord([], name, "TXT", ["marketplace-verification=abc"]));
    expect(await resolver().resolveTxt(name)).toEqual([["marketplace-verification=abc"]]);
    // Another type of a name it knows: no data, not "no such name".
    await expect(resolver().resolve4(name)).rejects.toMatchObject({ code: "ENODATA" });
    write(withRecord(withRecord([], name, "TXT", ["marketplace-verification=def"]), "Intranet.Initech.Example.", "A", ["10.1.2.3"]));
    expect(await resolver().resolveTxt(name)).toEqual([["marketplace-verification=def"]]);
    expect(await resolver().resolve4("intranet.initech.example")).toEqual(["10.1.2.3"]);
    const said = jest.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      writeFileSync(file, JSON.stringify({ records: [{ name, type: "MX", values: ["x"] }] }));
      await expect(resolver().resolveTxt(name)).rejects.toMatchObject({ code: "ENOTFOUND" });
      expect(said).toHaveBeenCalledWith(expect.stringMatching(/dns-records\.json: The DNS records file is not as `npm run dns` writes it.*Answering as if it were empty/));
    } finally {
      said.mockRestore();
    }
  });

  it("carries a TXT value longer than one DNS string (255 bytes) whole", async () => {
    const long = `marketplace-verification=${"x".repeat(600)}`;
    write(withRecord([], "long.initech.example", "TXT", [long]));
    expect((await resolver().resolveTxt("long.initech.example")).map((chunks) => chunks.join(""))).toEqual([long]);
  });

  it("asks its upstream for every other name, and says 'no such name' when the upstream does", async () => {
    write([]);
    expect(await resolver().resolve4("hooks.example.test")).toEqual(["203.0.113.7"]);
    expect(await resolver().resolveTxt("hooks.example.test")).toEqual([["from upstream"]]);
    await expect(resolver().resolve4("nowhere.example.test")).rejects.toMatchObject({ code: "ENOTFOUND" });
  });

  it("drops what is not a DNS question and keeps answering", async () => {
    const socket = createSocket("udp4");
    const [host, port] = server.address.split(":");
    for (const junk of [Buffer.from("hello"), Buffer.alloc(12), Buffer.concat([Buffer.alloc(12), Buffer.from([200, 1, 2])])]) {
      await new Promise<void>((resolve, reject) => socket.send(junk, Number(port), host, (error) => (error ? reject(error) : resolve())));
    }
    socket.close();
    write(withRecord([], "still.initech.example", "A", ["10.9.9.9"]));
    expect(await resolver().resolve4("still.initech.example")).toEqual(["10.9.9.9"]);
  });
});

describe("the DNS records file", () => {
  it("sets, replaces and removes a name's records of one type, names compared without case or a final dot", () => {
    const one = withRecord([], "A.Example.", "TXT", ["v1"]);
    expect(one).toEqual([{ name: "a.example", type: "TXT", values: ["v1"] }]);
    const two = withRecord(withRecord(one, "a.example", "TXT", ["v2"]), "a.example", "A", ["10.0.0.1"]);
    expect(two).toEqual([
      { name: "a.example", type: "TXT", values: ["v2"] },
      { name: "a.example", type: "A", values: ["10.0.0.1"] },
    ]);
    expect(withRecord(two, "A.EXAMPLE", "TXT", [])).toEqual([{ name: "a.example", type: "A", values: ["10.0.0.1"] }]);
  });

  it("reads what it writes, an empty file as none, and refuses anything else with the shape it wants", () => {
    expect(readDnsRecords(JSON.stringify({ records: [{ name: "a.example", type: "A", values: ["10.0.0.1"] }] }))).toHaveLength(1);
    expect(readDnsRecords("")).toEqual([]);
    for (const bad of ['{"records":{}}', '{"records":[{"name":"","type":"A","values":[]}]}', '{"records":[{"name":"a","type":"CNAME","values":["b"]}]}', '{"records":[{"name":"a","type":"A","values":[1]}]}']) {
      expect(() => readDnsRecords(bad)).toThrow(/not as `npm run dns` writes it/);
    }
  });
});
