import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";
import { Webhook } from "standardwebhooks";
import { resolveAddresses } from "../core/dns";
import { checkWebhookUrl, invalidWebhookUrl, isPublicAddress } from "./url-rules";

/**
 * One attempt to deliver a message (contract §21): the host resolved once and every address
 * checked, the connection made to the address that was checked (the request's `lookup` answers
 * with it, so nothing can resolve the name again, differently: no DNS rebinding), the body signed
 * with the Standard Webhooks library by each live secret, no redirect followed, 15 s at most from
 * the start, name resolution included.
 */

export const ATTEMPT_TIMEOUT_MS = 15_000;
const MAX_RESPONSE_BYTES = 64 * 1024;

/** Where webhook hosts are resolved: the system's resolver, or the DNS servers configured (DNS_RESOLVERS). */
export interface AddressRules {
  allowedHosts: readonly string[];
  dnsResolvers: readonly string[];
}

/** The addresses a URL's host stands for, each public unless the host is exempt; throws `invalid_webhook_url`. */
export async function publicAddresses(raw: string, rules: AddressRules): Promise<{ url: URL; hostname: string; addresses: string[] }> {
  const { url, hostname, exempt } = checkWebhookUrl(raw, rules.allowedHosts);
  let addresses: string[];
  if (ipaddr.isValid(hostname)) {
    addresses = [hostname];
  } else {
    addresses = await resolveAddresses(hostname, rules.dnsResolvers).catch(() => {
      throw invalidWebhookUrl(`The URL's host ${hostname} does not resolve.`);
    });
  }
  const refused = exempt ? undefined : addresses.find((address) => !isPublicAddress(address));
  if (refused) throw invalidWebhookUrl(`The URL's host ${hostname} resolves to ${refused}, which is not a public address (${ipaddr.parse(refused).range()}).`);
  return { url, hostname, addresses };
}

export interface AttemptOutcome {
  statusCode: number | null;
  error?: string;
  durationMs: number;
  /** Retry-After of a 429 or 503, in milliseconds. */
  retryAfterMs?: number;
}

export interface SignedMessage {
  id: string;
  payload: string;
  /** The live secrets (`whsec_…`): each signs, and the signatures go space-separated. */
  secrets: string[];
}

export async function sendMessage(rawUrl: string, message: SignedMessage, rules: AddressRules, now: () => Date, timeoutMs = ATTEMPT_TIMEOUT_MS): Promise<AttemptOutcome> {
  const started = Date.now();
  const took = () => Date.now() - started;
  let target: Awaited<ReturnType<typeof publicAddresses>>;
  // The 15 s start before the name is resolved: a resolver that drops queries (the system's has
  // no timeout of its own) times the attempt out like a receiver that never answers.
  let resolving: NodeJS.Timeout | undefined;
  try {
    const timedOut = new Promise<never>((_, reject) => (resolving = setTimeout(() => reject(new Error("timeout")), timeoutMs)));
    target = await Promise.race([publicAddresses(rawUrl, rules), timedOut]);
  } catch (error) {
    return { statusCode: null, error: (error as Error).message, durationMs: took() };
  } finally {
    clearTimeout(resolving);
  }
  const sentAt = now();
  const signature = message.secrets.map((secret) => new Webhook(secret).sign(message.id, sentAt, message.payload)).join(" ");
  const address = target.addresses[0];
  const family = ipaddr.parse(address).kind() === "ipv6" ? 6 : 4;
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as unknown as (error: null, addresses: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const { url } = target;
  const client = url.protocol === "https:" ? https : http;
  return new Promise<AttemptOutcome>((settled) => {
    // 15 s for the whole attempt, resolution to the answer's last byte: a receiver that drips its
    // answer is as failed as one that never answers, and never outlives the delivery's lease.
    const deadline = setTimeout(
      () => {
        resolve({ statusCode: null, error: "timeout", durationMs: took() });
        request.destroy();
      },
      Math.max(0, timeoutMs - took()),
    );
    const resolve = (outcome: AttemptOutcome) => {
      clearTimeout(deadline);
      settled(outcome);
    };
    const request = client.request(
      {
        method: "POST",
        protocol: url.protocol,
        hostname: target.hostname,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        lookup: pinned,
        // A connection of its own each time: never a pooled socket to an address checked for another attempt.
        agent: false,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(message.payload),
          "user-agent": "Marketplace-Webhooks/1",
          "webhook-id": message.id,
          "webhook-timestamp": String(Math.floor(sentAt.getTime() / 1000)),
          "webhook-signature": signature,
        },
      },
      (response) => {
        let read = 0;
        response.on("data", (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) response.destroy();
        });
        const settle = () => {
          const statusCode = response.statusCode ?? null;
          const retryAfterMs = statusCode === 429 || statusCode === 503 ? retryAfter(response.headers["retry-after"], now()) : undefined;
          const error = statusCode !== null && statusCode >= 300 && statusCode < 400 ? `Redirect to ${response.headers.location ?? "?"} not followed.` : undefined;
          resolve({ statusCode, durationMs: took(), ...(error ? { error } : {}), ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
        };
        response.on("end", settle);
        response.on("close", settle);
        response.on("error", settle);
      },
    );
    request.on("error", (error) => resolve({ statusCode: null, error: error.message, durationMs: took() }));
    request.end(message.payload);
  });
}

/** Retry-After in seconds or as an HTTP date, in milliseconds from now; undefined when absent or malformed. */
function retryAfter(value: string | string[] | undefined, now: Date): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return undefined;
  if (/^\d+$/.test(raw.trim())) return Number(raw.trim()) * 1000;
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime());
}
