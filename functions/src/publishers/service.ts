import { z } from "zod";
import { auditLog, operatorOf } from "../core/audit-log";
import { catalogChanges, moduleChange } from "../core/catalog-changes";
import { PUBLISHER_ID } from "../core/documents";
import { ApiError } from "../core/errors";
import { domainName } from "../core/schemas";
import { parseInput } from "../core/validation";
import type { OperatorDeps } from "../deps";
import { developerStore } from "../developers/developer-store";
import { moduleStore } from "../marketplace/module-store";

/**
 * Verified publishers (contract §24): an operator who has checked that a publisher controls a
 * domain marks it verified; `GET /modules` and `GET /modules/:id` then show the domain beside the
 * publisher's display name, on every instance within the catalog feed's delay.
 */

const publisherId = z.string().regex(PUBLISHER_ID, "not a publisher id");
const verifyInput = z.strictObject({ publisherId, domain: domainName });
const unverifyInput = z.strictObject({ publisherId });

export async function verifyPublisher(deps: OperatorDeps, input: z.input<typeof verifyInput>) {
  const { publisherId: id, domain } = parseInput(verifyInput, input);
  return setVerifiedDomain(deps, id, domain);
}

export async function unverifyPublisher(deps: OperatorDeps, input: z.input<typeof unverifyInput>) {
  return setVerifiedDomain(deps, parseInput(unverifyInput, input).publisherId, null);
}

/**
 * One transaction sets the domain, records the change for each of the publisher's modules in the
 * catalog's feed (their listings and pages show it) and adds the audit entry.
 */
async function setVerifiedDomain(deps: OperatorDeps, publisherId: string, domain: string | null) {
  const { db, clock } = deps;
  const publishers = developerStore(db);
  const feed = catalogChanges(db);
  const changed = await db.runTransaction(async (tx) => {
    const claim = await publishers.claimIn(tx, publisherId);
    if (!claim) throw new ApiError("not_found", `No publisher '${publisherId}'.`);
    const moduleIds = (await ("developerId" in claim ? moduleStore(db).byDeveloper(claim.developerId) : moduleStore(db).byPublisher(publisherId))).map((module) => module.id);
    publishers.setVerifiedDomain(tx, publisherId, domain);
    const topics = moduleIds.flatMap(moduleChange);
    if (topics.length > 0) feed.record(tx, [...new Set(topics)]);
    auditLog(db).record(tx, operatorOf(deps), { action: domain ? "publisher.verify" : "publisher.unverify", target: publisherId, details: domain ? { domain } : {} }, clock());
    return { topics, moduleIds };
  });
  if (changed.topics.length > 0) feed.applied([...new Set(changed.topics)]);
  return { publisherId, verifiedDomain: domain, modules: changed.moduleIds.length };
}
