import { DEFAULT_WEBHOOK_RETRY_SCHEDULE, LOCAL_WEBHOOK_SECRETS_KEY } from "./params";
import { isEmulated, type Env } from "./env";

/** The webhooks' settings (§21) and the DNS servers they and domain verification (§22) use. */

/** The webhooks' settings alone, for the operator CLI (WEBHOOK_SECRETS_KEY, WEBHOOK_ALLOWED_HOSTS, WEBHOOK_RETRY_SCHEDULE). */
/**
 * Webhooks (§21): the 32-byte key that encrypts endpoint secrets (empty: endpoints cannot be
 * made), the hosts exempt from the public-address rule, the retry schedule in milliseconds, and
 * the DNS servers that resolve receivers' hosts.
 */
export interface WebhookSettings {
  secretsKey: Buffer | null;
  allowedHosts: string[];
  retryScheduleMs: number[];
  dnsResolvers: string[];
}

export function webhookSettings(env: Env = process.env): WebhookSettings {
  return {
    secretsKey: webhookSecretsKey(env.WEBHOOK_SECRETS_KEY || (isEmulated(env) ? LOCAL_WEBHOOK_SECRETS_KEY : "")),
    allowedHosts: (env.WEBHOOK_ALLOWED_HOSTS ?? (isEmulated(env) ? "127.0.0.1,localhost" : ""))
      .split(",")
      .map((host) => host.trim().toLowerCase())
      .filter(Boolean),
    retryScheduleMs: retrySchedule(env.WEBHOOK_RETRY_SCHEDULE),
    dnsResolvers: dnsResolvers(env.DNS_RESOLVERS),
  };
}

/** `host:port` or `host` DNS servers, comma-separated; none: the system's resolver (DNS_RESOLVERS, also for the operator CLI). */
export function dnsResolvers(raw: string | undefined): string[] {
  const servers = (raw ?? "").split(",").map((item) => item.trim()).filter(Boolean);
  for (const server of servers) {
    if (!/^[0-9a-f.:[\]]+$/i.test(server)) throw new Error(`DNS_RESOLVERS must be addresses (host or host:port), comma-separated, got '${server}'.`);
  }
  return servers;
}

export function webhookSecretsKey(raw: string): Buffer | null {
  if (!raw) return null;
  const key = Buffer.from(raw, "base64");
  if (key.length !== 32) throw new Error("WEBHOOK_SECRETS_KEY must be 32 random bytes in base64 (openssl rand -base64 32).");
  return key;
}

export function retrySchedule(raw: string | undefined): number[] {
  if (!raw?.trim()) return DEFAULT_WEBHOOK_RETRY_SCHEDULE.map((seconds) => seconds * 1000);
  const seconds = raw.split(",").map((item) => Number(item.trim()));
  if (seconds.length === 0 || seconds.length > 20 || seconds.some((value) => !(value >= 0 && value <= 7 * 86_400))) {
    throw new Error(`WEBHOOK_RETRY_SCHEDULE must be 1-20 comma-separated numbers of seconds (0 to a week), got '${raw}'.`);
  }
  return seconds.map((value) => Math.round(value * 1000));
}
