import type { BusinessRecord, DomainRecord } from "../accounts/business-records";
import { businessStore } from "../accounts/business-store";
import { inBusinessTransaction, readBusiness, requireOwner, type MemberCaller } from "../businesses/membership";
import { auditLog, operatorOf, type Actor } from "../core/audit-log";
import { resolveTxtRecords } from "../core/dns";
import { toIso } from "../core/documents";
import { ApiError } from "../core/errors";
import { randomBase62 } from "../core/secret-tokens";
import { parseInput } from "../core/validation";
import type { Deps, OperatorDeps } from "../deps";
import { z } from "zod";
import { documentId, domainName } from "../core/schemas";
import { DOMAIN_CHECK_EVERY_MS } from "./rules";
import { verifiedDomainStore } from "./verified-domain-store";

/**
 * Verified domains (§22): an owner names a domain, puts the TXT record it is given in the
 * domain's DNS, and asks for verification; the first business to verify a domain holds it. SCIM
 * then provisions only emails of the business's verified domains, and single sign-on lets people
 * of those domains join just in time.
 */

export const TXT_PREFIX = "_marketplace-verification";
const TXT_VALUE_PREFIX = "marketplace-verification=";
/** How many domains, pending or verified, one business may have. */
export const MAX_DOMAINS = 20;

const domainView = (domain: DomainRecord) => ({
  domain: domain.domain,
  txtName: `${TXT_PREFIX}.${domain.domain}`,
  txtValue: domain.txtValue,
  verifiedAt: domain.verifiedAt ? toIso(domain.verifiedAt) : null,
});

const operatorDomainInput = z.object({ id: documentId, domain: domainName });

const domainNotFound = (domain: string) => new ApiError("domain_not_found", `This business has no domain '${domain}'; add it first (POST /businesses/:id/domains).`);

/** The domains a business has verified. */
export const verifiedDomainsOf = (business: Pick<BusinessRecord, "domains">) => business.domains.filter((domain) => domain.verifiedAt !== null).map((domain) => domain.domain);

/** An email's domain, lowercased. */
export const domainOfEmail = (email: string) => email.slice(email.lastIndexOf("@") + 1).toLowerCase();

/** Whether an email is in one of the domains (its domain exactly). */
export const emailInDomains = (email: string, domains: readonly string[]) => domains.includes(domainOfEmail(email));

/** POST /businesses/:id/domains: a pending domain and the TXT record that verifies it; asked again, the same record. */
export async function addDomain(deps: Deps, caller: MemberCaller, actor: Actor, businessId: string, domain: string) {
  const now = deps.clock();
  const added = await inBusinessTransaction(deps, businessId, (tx, stored) => {
    const business = requireOwner(stored, caller, businessId, "add domains");
    const existing = business.domains.find((candidate) => candidate.domain === domain);
    if (existing) return existing;
    if (business.domains.length >= MAX_DOMAINS) throw new ApiError("too_many_domains", `A business may have ${MAX_DOMAINS} domains; remove one first.`);
    const record: DomainRecord = { domain, txtValue: `${TXT_VALUE_PREFIX}${randomBase62(32)}`, createdAt: now, verifiedAt: null };
    businessStore(deps.db).putDomain(tx, businessId, record);
    auditLog(deps.db).record(tx, actor, { action: "business.domain.add", target: businessId, details: { domain }, answer: domainView(record) }, now);
    return record;
  }, { uid: caller.uid });
  return domainView(added);
}

/** GET /businesses/:id/domains. */
export async function listDomains(deps: Deps, caller: MemberCaller, businessId: string) {
  const business = requireOwner(await readBusiness(deps, null, businessId, caller.uid), caller, businessId, "see its domains");
  return { items: [...business.domains].sort((a, b) => a.domain.localeCompare(b.domain)).map(domainView) };
}

/**
 * POST /businesses/:id/domains/:domain/verify: looks the TXT record up (DNS_RESOLVERS), then, in
 * one transaction on the business and `verifiedDomains/{domain}`, takes the domain unless another
 * business holds it.
 */
export async function verifyDomain(deps: Deps, caller: MemberCaller, actor: Actor, businessId: string, domain: string) {
  const pending = requireOwner(await readBusiness(deps, null, businessId, caller.uid), caller, businessId, "verify domains").domains.find((candidate) => candidate.domain === domain);
  if (!pending) throw domainNotFound(domain);
  const holder = await verifiedDomainStore(deps.db).get(domain);
  if (holder && holder.businessId !== businessId) throw domainTaken(domain);
  if (!pending.verifiedAt) {
    const txtName = `${TXT_PREFIX}.${domain}`;
    const records = await resolveTxtRecords(txtName, deps.config.dnsResolvers).catch((error: Error) => {
      throw new ApiError("domain_not_verified", `The TXT records of ${txtName} could not be read (${error.message}); try again later.`);
    });
    if (!records.includes(pending.txtValue)) {
      throw new ApiError("domain_not_verified", `No TXT record of ${txtName} holds '${pending.txtValue}' yet${records.length > 0 ? ` (found ${records.length} other${records.length === 1 ? "" : "s"})` : ""}; add it, wait for DNS to update, and try again.`);
    }
  }
  const now = deps.clock();
  const verified = await inBusinessTransaction(deps, businessId, async (tx, stored) => {
    const domains = verifiedDomainStore(deps.db);
    const taken = await domains.getIn(tx, domain);
    const current = requireOwner(stored, caller, businessId, "verify domains").domains.find((candidate) => candidate.domain === domain);
    if (!current || current.txtValue !== pending.txtValue) throw domainNotFound(domain);
    if (taken && taken.businessId !== businessId) throw domainTaken(domain);
    if (current.verifiedAt && taken) return current;
    const record = { ...current, verifiedAt: current.verifiedAt ?? now };
    businessStore(deps.db).putDomain(tx, businessId, record);
    domains.put(tx, { domain, businessId, verifiedAt: record.verifiedAt, nextCheckAt: new Date(now.getTime() + DOMAIN_CHECK_EVERY_MS), missingSince: null });
    auditLog(deps.db).record(tx, actor, { action: "business.domain.verify", target: businessId, details: { domain }, answer: domainView(record) }, now);
    return record;
  }, { uid: caller.uid });
  return domainView(verified);
}

const domainTaken = (domain: string) => new ApiError("domain_taken", `Another business has verified ${domain}; a domain belongs to one business.`);

/** DELETE /businesses/:id/domains/:domain: the domain, and this business's hold on it. */
export async function removeDomain(deps: Deps, caller: MemberCaller, actor: Actor, businessId: string, domain: string): Promise<void> {
  const now = deps.clock();
  await inBusinessTransaction(deps, businessId, async (tx, stored) => {
    const domains = verifiedDomainStore(deps.db);
    const holder = await domains.getIn(tx, domain);
    const business = requireOwner(stored, caller, businessId, "remove domains");
    if (!business.domains.some((candidate) => candidate.domain === domain)) throw domainNotFound(domain);
    businessStore(deps.db).deleteDomain(tx, businessId, domain);
    if (holder?.businessId === businessId) domains.delete(tx, domain);
    auditLog(deps.db).record(tx, actor, { action: "business.domain.remove", target: businessId, details: { domain } }, now);
  }, { uid: caller.uid });
}

/**
 * Operators (the CLI, the seed): a business's domain recorded as verified on the operator's word,
 * without a DNS lookup (as for a domain verified by other means); `domain_taken` when another
 * business holds it.
 */
export async function verifyDomainForBusiness(deps: OperatorDeps, input: z.input<typeof operatorDomainInput>) {
  const { id: businessId, domain } = parseInput(operatorDomainInput, input);
  const now = deps.clock();
  return inBusinessTransaction(deps, businessId, async (tx, { business }) => {
    const domains = verifiedDomainStore(deps.db);
    const holder = await domains.getIn(tx, domain);
    if (!business) throw new ApiError("business_not_found", `No business '${businessId}'.`);
    if (holder && holder.businessId !== businessId) throw domainTaken(domain);
    const existing = business.domains.find((candidate) => candidate.domain === domain);
    if (existing?.verifiedAt && holder) return { businessId, ...domainView(existing) };
    const record: DomainRecord = { domain, txtValue: existing?.txtValue ?? `${TXT_VALUE_PREFIX}${randomBase62(32)}`, createdAt: existing?.createdAt ?? now, verifiedAt: existing?.verifiedAt ?? now };
    businessStore(deps.db).putDomain(tx, businessId, record);
    domains.put(tx, { domain, businessId, verifiedAt: record.verifiedAt!, nextCheckAt: new Date(now.getTime() + DOMAIN_CHECK_EVERY_MS), missingSince: null });
    auditLog(deps.db).record(tx, operatorOf(deps), { action: "business.domain.verify", target: businessId, details: { domain, by: "operator" } }, now);
    return { businessId, ...domainView(record) };
  });
}
