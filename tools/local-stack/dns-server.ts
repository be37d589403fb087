import { createSocket, type RemoteInfo } from "node:dgram";
import type { AddressInfo } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * A DNS server on 127.0.0.1 for tests (UDP): it answers A, AAAA and TXT questions from records
 * the test sets and changes at will (a name that resolves to a public address, then a private one:
 * DNS rebinding), NXDOMAIN for names it does not know. The code under test reaches it through
 * configuration only (DNS_RESOLVERS).
 */

const TYPES = { A: 1, AAAA: 28, TXT: 16 } as const;
type RecordType = keyof typeof TYPES;

export interface LocalDns {
  /** `127.0.0.1:<port>`, as DNS_RESOLVERS takes it. */
  address: string;
  set(name: string, type: RecordType, values: string[]): void;
  stop(): Promise<void>;
}

export async function startLocalDns(): Promise<LocalDns> {
  const records = new Map<string, string[]>();
  const key = (name: string, type: number) => `${name.toLowerCase().replace(/\.$/, "")}/${type}`;
  const socket = createSocket("udp4");
  socket.on("message", (query: Buffer, peer: RemoteInfo) => {
    const { name, type, end } = question(query);
    const answers = records.get(key(name, type)) ?? [];
    const known = [...records.keys()].some((entry) => entry.startsWith(`${name.toLowerCase().replace(/\.$/, "")}/`));
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    header.writeUInt16BE(0x8180 | (known ? 0 : 3), 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    const body = answers.map((value) => {
      const data = type === TYPES.TXT ? Buffer.concat([Buffer.from([Buffer.byteLength(value)]), Buffer.from(value)]) : Buffer.from(ipaddr.parse(value).toByteArray());
      const record = Buffer.alloc(12);
      record.writeUInt16BE(0xc00c, 0);
      record.writeUInt16BE(type, 2);
      record.writeUInt16BE(1, 4);
      record.writeUInt32BE(0, 6);
      record.writeUInt16BE(data.length, 10);
      return Buffer.concat([record, data]);
    });
    socket.send(Buffer.concat([header, query.subarray(12, end), ...body]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  return {
    address: `127.0.0.1:${(socket.address() as AddressInfo).port}`,
    set: (name, type, values) => records.set(key(name, TYPES[type]), values),
    stop: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/** The first question of a query: its name, type, and where it ends. */
function question(query: Buffer): { name: string; type: number; end: number } {
  const labels: string[] = [];
  let at = 12;
  while (query[at] !== 0) {
    labels.push(query.subarray(at + 1, at + 1 + query[at]).toString("ascii"));
    at += query[at] + 1;
  }
  return { name: labels.join("."), type: query.readUInt16BE(at + 1), end: at + 5 };
}
