import { businessStore } from "../accounts/business-store";
import { mailStore, plainTextMail } from "../businesses/mail-store";
import { inBusinessTransaction, ownerEmailsOf, readBusiness } from "../businesses/membership";
import { auditLog, systemActor } from "../core/audit-log";
import { resolveTxtRecords } from "../core/dns";
import type { Deps } from "../deps";
import { DOMAIN_CHECK_EVERY_MS, DOMAIN_RELEASED_AFTER_MS, recheckOutcome } from "./rules";
import { TXT_PREFIX } from "./service";
import { verifiedDomainStore, type VerifiedDomainRecord } from "./verified-domain-store";

/**
 * The daily check of verified domains (§22): each domain whose check is due has its TXT record
 * looked up again. Found, it stays (and a missing streak ends); missing, its owners are emailed
 * on the first failed check, and after 7 days missing in a row it is released (`verifiedAt:
 * null`, `verifiedDomains/{domain}` removed), so that another business may verify it. A lookup
 * that fails (a DNS error rather than no record) proves nothing: the domain is checked again at
 * the next run. The scheduled `domainChecks` runs it hourly; the operator CLI's `business
 * recheck-domains` too.
 */

const PAGE = 200;

export type DomainCheckDeps = Pick<Deps, "db" | "clock" | "logger" | "auth"> & { config: Pick<Deps["config"], "dnsResolvers"> };

export async function recheckDomains(deps: DomainCheckDeps): Promise<{ checked: number; missing: number; released: string[]; unreachable: number }> {
  const domains = verifiedDomainStore(deps.db);
  const result = { checked: 0, missing: 0, released: [] as string[], unreachable: 0 };
  let after: string | null = null;
  for (;;) {
    const page = await domains.page(after, PAGE);
    const now = deps.clock();
    for (const domain of page.filter((candidate) => candidate.nextCheckAt === null || candidate.nextCheckAt <= now)) {
      const outcome = await checkOne(deps, domain);
      if (outcome === "unreachable") result.unreachable += 1;
      else {
        result.checked += 1;
        if (outcome !== "held") result.missing += 1;
        if (outcome === "released") result.released.push(domain.domain);
      }
    }
    if (page.length < PAGE) return result;
    after = page.at(-1)!.domain;
  }
}

async function checkOne(deps: DomainCheckDeps, held: VerifiedDomainRecord): Promise<"held" | "missing" | "released" | "unreachable"> {
  const txtName = `${TXT_PREFIX}.${held.domain}`;
  const { business } = await readBusiness(deps, null, held.businessId);
  const expected = business?.domains.find((candidate) => candidate.domain === held.domain)?.txtValue;
  let found: boolean;
  try {
    found = expected !== undefined && (await resolveTxtRecords(txtName, deps.config.dnsResolvers)).includes(expected);
  } catch (error) {
    deps.logger.warn("a verified domain's TXT record could not be looked up; it is checked again at the next run", { domain: held.domain, error: (error as Error).message });
    return "unreachable";
  }
  const now = deps.clock();
  const outcome = recheckOutcome(held.missingSince, found, now);
  const owners = outcome.kind === "missing" && outcome.first && business ? await ownerEmailsOf(deps, held.businessId) : [];
  const domains = verifiedDomainStore(deps.db);
  await inBusinessTransaction(deps, held.businessId, async (tx, { business: current }) => {
    const stored = await domains.getIn(tx, held.domain);
    // Removed, re-verified or moved meanwhile: that change stands.
    if (!stored || stored.businessId !== held.businessId || stored.verifiedAt.getTime() !== held.verifiedAt.getTime()) return;
    const actor = systemActor("domain-check");
    if (outcome.kind === "released") {
      domains.delete(tx, held.domain);
      const record = current?.domains.find((candidate) => candidate.domain === held.domain);
      if (record) businessStore(deps.db).putDomain(tx, held.businessId, { ...record, verifiedAt: null });
      auditLog(deps.db).record(tx, actor, { action: "business.domain.release", target: held.businessId, details: { domain: held.domain, missingSince: outcome.since.toISOString() } }, now);
      return;
    }
    domains.put(tx, { ...stored, nextCheckAt: new Date(now.getTime() + DOMAIN_CHECK_EVERY_MS), missingSince: outcome.kind === "missing" ? outcome.since : null });
    if (outcome.kind === "missing" && outcome.first) {
      auditLog(deps.db).record(tx, actor, { action: "business.domain.missing", target: held.businessId, details: { domain: held.domain } }, now);
      for (const to of owners) mailStore(deps.db).queueIn(tx, missingEmail(to, current?.name ?? held.businessId, held.domain, txtName, expected ?? ""), now);
    }
  });
  return outcome.kind;
}

function missingEmail(to: string, businessName: string, domain: string, txtName: string, txtValue: string) {
  const days = DOMAIN_RELEASED_AFTER_MS / (24 * 3_600_000);
  const text =
    `The TXT record that verifies ${domain} for ${businessName} is missing: ${txtName} should hold "${txtValue}".\n\n` +
    `Put it back. If it is still missing after ${days} days in a row, ${domain} is released: SCIM stops creating accounts in it, single sign-on stops adding its people, and another business may verify it.`;
  return plainTextMail(to, `${domain}: its verification record is missing`, text);
}
