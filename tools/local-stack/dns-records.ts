/**
 * The local stack's DNS records file (`.local/dns-records.json`): what `npm run dns` writes and
 * the local DNS server answers from. One file for the machine, as DNS is one for it.
 */

import path from "node:path";

/** Where `npm start`'s DNS server reads, and `npm run dns` writes (DNS_RECORDS_FILE: elsewhere, as the tests do). */
export const LOCAL_DNS_RECORDS = process.env.DNS_RECORDS_FILE || path.join(__dirname, "..", "..", ".local", "dns-records.json");

const RECORD_TYPES = ["A", "AAAA", "TXT"] as const;
export interface DnsRecord {
  name: string;
  type: (typeof RECORD_TYPES)[number];
  values: string[];
}

/** The file's records; a file not as `npm run dns` writes it is an error naming the file's problem. */
export function readDnsRecords(text: string): DnsRecord[] {
  const parsed = JSON.parse(text.trim() || '{"records":[]}') as { records?: unknown };
  const records = Array.isArray(parsed?.records) ? (parsed.records as Partial<DnsRecord>[]) : null;
  const valid = (record: Partial<DnsRecord>) =>
    typeof record?.name === "string" && record.name.length > 0 && isRecordType(String(record.type)) && Array.isArray(record.values) && record.values.every((value) => typeof value === "string");
  if (!records || !records.every(valid)) throw new Error("The DNS records file is not as `npm run dns` writes it: { \"records\": [ { \"name\", \"type\": \"A\" | \"AAAA\" | \"TXT\", \"values\": [ … ] } ] }.");
  return records as DnsRecord[];
}

/** The records with `name`/`type` set to `values` (none: removed); names compared without case or a final dot. */
export function withRecord(records: DnsRecord[], name: string, type: DnsRecord["type"], values: string[]): DnsRecord[] {
  const key = (entry: string) => entry.toLowerCase().replace(/\.$/, "");
  const others = records.filter((record) => !(key(record.name) === key(name) && record.type === type));
  return values.length === 0 ? others : [...others, { name: key(name), type, values }];
}

export function isRecordType(value: string): value is DnsRecord["type"] {
  return (RECORD_TYPES as readonly string[]).includes(value);
}
