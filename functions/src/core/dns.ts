import { lookup, Resolver } from "node:dns/promises";

/**
 * DNS lookups from the system's resolver, or from the servers configured in DNS_RESOLVERS (so
 * tests reach a local DNS server through configuration only): webhook hosts (§21) and domain
 * verification records (§22).
 */

const resolverOf = (servers: readonly string[]) => {
  const resolver = new Resolver({ timeout: 2_000, tries: 2 });
  if (servers.length > 0) resolver.setServers([...servers]);
  return resolver;
};

/** RFC 6761: `localhost` and names under it are the loopback addresses, answered without asking DNS. */
const LOOPBACK = ["127.0.0.1", "::1"];
const isLocalhost = (hostname: string) => /^(.+\.)?localhost\.?$/i.test(hostname);

/**
 * A name's addresses, IPv4 and IPv6; throws when it has none. `localhost` is loopback whatever
 * the servers (a resolver set with setServers never reads /etc/hosts, and a DNS server need not
 * answer the name).
 */
export async function resolveAddresses(hostname: string, servers: readonly string[]): Promise<string[]> {
  if (isLocalhost(hostname)) return [...LOOPBACK];
  if (servers.length === 0) return (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);
  const resolver = resolverOf(servers);
  const settled = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
  const found = settled.flatMap((result) => (result.status === "fulfilled" ? result.value : []));
  if (found.length === 0) throw new Error(`${hostname} has no address`);
  return found;
}

/** A name's TXT records, each joined from its strings; none when the name or its records do not exist. */
export async function resolveTxtRecords(name: string, servers: readonly string[]): Promise<string[]> {
  try {
    return (await resolverOf(servers).resolveTxt(name)).map((chunks) => chunks.join(""));
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ENOTFOUND" || code === "ENODATA") return [];
    throw error;
  }
}
