/**
 * `npm run dns`: the records the local stack's DNS server answers (`.local/dns-records.json`),
 * standing in for a company's DNS when verifying a domain (§22) on `npm start`.
 *
 *   npm run -s dns -- set _marketplace-verification.initech.example TXT "marketplace-verification=…"
 *   npm run -s dns -- list
 *   npm run -s dns -- remove _marketplace-verification.initech.example [TXT]
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Command, InvalidArgumentError } from "commander";
import { isRecordType, LOCAL_DNS_RECORDS, readDnsRecords, withRecord, type DnsRecord } from "./local-stack/dns-records";

const read = () => readDnsRecords(existsSync(LOCAL_DNS_RECORDS) ? readFileSync(LOCAL_DNS_RECORDS, "utf8") : "");

/** Written whole, then renamed: the server never reads half a file. */
function write(records: DnsRecord[]): void {
  mkdirSync(path.dirname(LOCAL_DNS_RECORDS), { recursive: true });
  const staging = `${LOCAL_DNS_RECORDS}.${process.pid}`;
  writeFileSync(staging, `${JSON.stringify({ records }, null, 2)}\n`);
  renameSync(staging, LOCAL_DNS_RECORDS);
}

const recordType = (value: string) => {
  const type = value.toUpperCase();
  if (!isRecordType(type)) throw new InvalidArgumentError("A, AAAA or TXT.");
  return type;
};

const program = new Command("npm run dns --")
  .description("The records of the local stack's DNS server (npm start answers them at once; every other name comes from this machine's resolver).")
  .showHelpAfterError();
program
  .command("set")
  .description("sets a name's records of one type (replacing what it had)")
  .argument("<name>", "e.g. _marketplace-verification.initech.example")
  .argument("<type>", "A, AAAA or TXT", recordType)
  .argument("<values...>", "one or more values")
  .action((name: string, type: DnsRecord["type"], values: string[]) => {
    write(withRecord(read(), name, type, values));
    console.log(`${name.toLowerCase()} ${type} ${values.map((value) => JSON.stringify(value)).join(" ")}`);
  });
program
  .command("remove")
  .description("removes a name's records (of one type, or all)")
  .argument("<name>")
  .argument("[type]", "A, AAAA or TXT", recordType)
  .action((name: string, type: DnsRecord["type"] | undefined) => {
    const types: DnsRecord["type"][] = type ? [type] : ["A", "AAAA", "TXT"];
    write(types.reduce<DnsRecord[]>((records, each) => withRecord(records, name, each, []), read()));
  });
program
  .command("list")
  .description("every record")
  .action(() => {
    for (const record of read()) console.log(`${record.name} ${record.type} ${record.values.map((value) => JSON.stringify(value)).join(" ")}`);
  });

program.parseAsync().catch((error: Error) => {
  console.error(`error: ${error.message}`);
  process.exit(1);
});
