import { createSocket, type RemoteInfo } from "node:dgram";
import { promises as dns } from "node:dns";
import { readFileSync, statSync } from "node:fs";
import type { AddressInfo } from "node:net";
import ipaddr from "ipaddr.js";
import { HOST } from "./addresses";
import { readDnsRecords } from "./dns-records";

/**
 * A DNS server on 127.0.0.1 (UDP) answering A, AAAA and TXT questions, that the code reaches
 * through configuration only (DNS_RESOLVERS).
 *
 * - In tests, from records the test sets and changes at will (a name that resolves to a public
 *   address, then a private one: DNS rebinding); NXDOMAIN for names it does not know.
 * - In `npm start`, as the machine's "own DNS" for §22's domain verification: from a records
 *   file (`npm run dns -- set …` writes it; read again whenever it changes), and every other
 *   name from the system's resolver, so that webhook hosts resolve as they do without it.
 */

const TYPES = { A: 1, AAAA: 28, TXT: 16 } as const;
export type RecordType = keyof typeof TYPES;
const TYPE_NAMES = new Map<number, RecordType>(Object.entries(TYPES).map(([name, code]) => [code, name as RecordType]));

export interface LocalDns {
  /** `127.0.0.1:<port>`, as DNS_RESOLVERS takes it. */
  address: string;
  set(name: string, type: RecordType, values: string[]): void;
  stop(): Promise<void>;
}

interface Answer {
  rcode: 0 | 2 | 3;
  values: string[];
}

export async function startLocalDns(
  options: {
    port?: number;
    recordsFile?: string;
    /** Names it has no record of: `true` asks the system's resolver, a list those servers (`host:port`). */
    forward?: boolean | string[];
  } = {},
): Promise<LocalDns> {
  const records = new Map<string, string[]>();
  const fromFile = fileRecords(options.recordsFile);
  const forwarder = options.forward ? new dns.Resolver({ timeout: 2_000, tries: 1 }) : undefined;
  if (forwarder && Array.isArray(options.forward)) forwarder.setServers(options.forward);

  const lookup = async (name: string, type: number): Promise<Answer> => {
    const owner = normalize(name);
    const known = new Map([...fromFile(), ...records]);
    const values = known.get(`${owner}/${type}`);
    if (values) return { rcode: 0, values };
    if ([...known.keys()].some((entry) => entry.startsWith(`${owner}/`))) return { rcode: 0, values: [] };
    if (!forwarder || !TYPE_NAMES.has(type)) return { rcode: 3, values: [] };
    try {
      const kind = TYPE_NAMES.get(type)!;
      if (kind === "TXT") return { rcode: 0, values: (await forwarder.resolveTxt(owner)).map((chunks) => chunks.join("")) };
      return { rcode: 0, values: kind === "A" ? await forwarder.resolve4(owner) : await forwarder.resolve6(owner) };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return code === "ENOTFOUND" ? { rcode: 3, values: [] } : code === "ENODATA" ? { rcode: 0, values: [] } : { rcode: 2, values: [] };
    }
  };

  const socket = createSocket("udp4");
  socket.on("message", (query: Buffer, peer: RemoteInfo) => {
    let asked: { name: string; type: number; end: number };
    try {
      asked = question(query);
    } catch {
      return; // not a DNS question: no answer, as a real server would drop it
    }
    void lookup(asked.name, asked.type).then(({ rcode, values }) => {
      socket.send(reply(query, asked, rcode, values), peer.port, peer.address);
    });
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(options.port ?? 0, HOST, () => {
      socket.off("error", reject);
      resolve();
    });
  });
  return {
    address: `${HOST}:${(socket.address() as AddressInfo).port}`,
    set: (name, type, values) => records.set(`${normalize(name)}/${TYPES[type]}`, values),
    stop: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

const normalize = (name: string) => name.toLowerCase().replace(/\.$/, "");

/** The records file's entries as `name/type` keys, read again only when the file changes. */
function fileRecords(file: string | undefined): () => Map<string, string[]> {
  let seen = "";
  let entries = new Map<string, string[]>();
  return () => {
    if (!file) return entries;
    const stats = statSync(file, { throwIfNoEntry: false });
    const stamp = stats ? `${stats.mtimeMs}/${stats.size}` : "none";
    if (stamp !== seen) {
      seen = stamp;
      entries = new Map();
      try {
        for (const record of stamp === "none" ? [] : readDnsRecords(readFileSync(file, "utf8"))) {
          entries.set(`${normalize(record.name)}/${TYPES[record.type]}`, record.values);
        }
      } catch (error) {
        console.error(`Local DNS: ${file}: ${(error as Error).message} Answering as if it were empty.`);
      }
    }
    return entries;
  };
}

function reply(query: Buffer, asked: { type: number; end: number }, rcode: number, values: string[]): Buffer {
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2);
  header.writeUInt16BE(0x8180 | rcode, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(values.length, 6);
  const body = values.map((value) => {
    const data = asked.type === TYPES.TXT ? characterStrings(value) : Buffer.from(ipaddr.parse(value).toByteArray());
    const record = Buffer.alloc(12);
    record.writeUInt16BE(0xc00c, 0);
    record.writeUInt16BE(asked.type, 2);
    record.writeUInt16BE(1, 4);
    record.writeUInt32BE(0, 6);
    record.writeUInt16BE(data.length, 10);
    return Buffer.concat([record, data]);
  });
  return Buffer.concat([header, query.subarray(12, asked.end), ...body]);
}

/** A TXT value as DNS carries it: strings of at most 255 bytes, each after its length. */
function characterStrings(value: string): Buffer {
  const bytes = Buffer.from(value);
  const parts: Buffer[] = [];
  for (let at = 0; at < bytes.length || parts.length === 0; at += 255) {
    const chunk = bytes.subarray(at, at + 255);
    parts.push(Buffer.from([chunk.length]), chunk);
  }
  return Buffer.concat(parts);
}

/** The first question of a query: its name, type, and where it ends. */
function question(query: Buffer): { name: string; type: number; end: number } {
  const labels: string[] = [];
  let at = 12;
  while (query[at] !== 0) {
    if (at >= query.length || query[at] > 63) throw new Error("not a question");
    labels.push(query.subarray(at + 1, at + 1 + query[at]).toString("ascii"));
    at += query[at] + 1;
  }
  if (at + 5 > query.length) throw new Error("not a question");
  return { name: labels.join("."), type: query.readUInt16BE(at + 1), end: at + 5 };
}
