import ipaddr from "ipaddr.js";
import { ApiError } from "../core/errors";

/**
 * Where a webhook may be sent (contract §21): `https:` only, at most 2,000 characters, no user or
 * password, to a host whose every address is public. Pure rules: resolving names is address.ts's.
 */

export const MAX_WEBHOOK_URL_LENGTH = 2_000;

export const invalidWebhookUrl = (reason: string) => new ApiError("invalid_webhook_url", reason);

/**
 * Whether an address is one the public internet routes to a host: ipaddr.js's `unicast` range, in
 * IPv4 and IPv6, which leaves out loopback, private, link-local (the metadata address), shared
 * (100.64/10), unspecified, benchmarking (198.18/15), reserved (240/4), multicast, unique-local,
 * and every IPv6 form that embeds an IPv4 address (mapped, NAT64, 6to4, Teredo).
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  // IPv6 outside 2000::/3, the only block allocated for global unicast, is never a public host:
  // this also refuses the deprecated IPv4-compatible form (::/96, `::7f00:1` is 127.0.0.1), which
  // ipaddr.js calls unicast, and every other spelling inside ::/8.
  if (parsed.kind() === "ipv6" && !parsed.match(GLOBAL_UNICAST_V6)) return false;
  return parsed.range() === "unicast";
}

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3") as [ipaddr.IPv6, number];

export interface CheckedUrl {
  url: URL;
  /** The host to connect to: a name to resolve, or an address literal. */
  hostname: string;
  /** Whether the host, as written, is in WEBHOOK_ALLOWED_HOSTS (the local stack's receivers). */
  exempt: boolean;
}

/**
 * The URL's host exactly as written (lowercased), before the URL parser turns `0x7f.1` or
 * `2130706433` into `127.0.0.1`: the exemption compares this, so no other spelling is exempt.
 */
export function hostAsWritten(raw: string): string {
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#\\]*)/i.exec(raw.trim())?.[1] ?? "";
  const host = authority.slice(authority.lastIndexOf("@") + 1);
  if (host.startsWith("[")) return host.slice(0, host.indexOf("]") + 1).toLowerCase();
  const colon = host.lastIndexOf(":");
  return (colon === -1 ? host : host.slice(0, colon)).toLowerCase();
}

/** Checks a URL's form; throws 400 `invalid_webhook_url` with the reason. Its addresses are checked apart. */
export function checkWebhookUrl(raw: string, allowedHosts: readonly string[]): CheckedUrl {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) throw invalidWebhookUrl(`The URL is longer than ${MAX_WEBHOOK_URL_LENGTH} characters.`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidWebhookUrl("The URL is not a valid absolute URL.");
  }
  const exempt = allowedHosts.includes(hostAsWritten(raw));
  if (url.protocol !== "https:" && !(exempt && url.protocol === "http:")) throw invalidWebhookUrl("The URL must use https:.");
  if (url.username || url.password) throw invalidWebhookUrl("The URL must not carry a user or password.");
  const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  if (hostname === "") throw invalidWebhookUrl("The URL has no host.");
  if (!exempt && ipaddr.isValid(hostname) && !isPublicAddress(hostname)) {
    throw invalidWebhookUrl(`The URL's host ${hostname} is not a public address (${ipaddr.parse(hostname).range()}).`);
  }
  if (!exempt && !ipaddr.isValid(hostname) && !hostname.includes(".")) throw invalidWebhookUrl(`The URL's host '${hostname}' is not a public domain name.`);
  return { url, hostname, exempt };
}
