import type { z } from "zod";
import { businessStore } from "../accounts/business-store";
import { auditLog, type Actor } from "../core/audit-log";
import { ApiError } from "../core/errors";
import type { Deps } from "../deps";
import { inBusinessTransaction, readBusiness, requireMember, type MemberCaller } from "../businesses/membership";
import { developerStore } from "../developers/developer-store";
import type { businessPublisherBodySchema } from "./schemas";

/**
 * A business's own publisher id (§26): its owners and admins publish under it with their own
 * developer accounts, and its modules are private to the business's members.
 */

const noPublisher = (businessId: string) => new ApiError("publisher_not_found", `Business '${businessId}' has no publisher id of its own yet: an owner claims one with POST /businesses/${businessId}/publisher.`);

/** POST /businesses/:id/publisher (owners): claims a publisher id for the business, once. */
export async function claimBusinessPublisher(deps: Deps, caller: MemberCaller, actor: Actor, businessId: string, body: z.output<typeof businessPublisherBodySchema>) {
  const { publisherId } = body;
  const now = deps.clock();
  await inBusinessTransaction(
    deps,
    businessId,
    async (tx, state) => {
      const business = requireMember(state, caller, businessId);
      if (business.callerRole !== "owner") throw new ApiError("not_business_owner", "Only an owner of this business may claim its publisher id.");
      if (business.publisherId) throw new ApiError("business_publisher_exists", `Business '${businessId}' publishes as '${business.publisherId}' already: a business has one publisher id.`);
      const publishers = developerStore(deps.db);
      if (await publishers.claimIn(tx, publisherId)) throw new ApiError("publisher_taken", `Publisher id '${publisherId}' is taken.`);
      publishers.claimForBusiness(tx, publisherId, businessId);
      businessStore(deps.db).setPublisher(tx, businessId, publisherId);
      auditLog(deps.db).record(tx, actor, { action: "business.publisher.claim", target: businessId, details: { publisherId }, answer: { publisherId, businessId } }, now);
    },
    { uid: caller.uid },
  );
  return { publisherId, businessId };
}

/** GET /businesses/:id/publisher (any member). */
export async function getBusinessPublisher(deps: Deps, caller: MemberCaller, businessId: string) {
  const business = requireMember(await readBusiness(deps, null, businessId, caller.uid), caller, businessId);
  if (!business.publisherId) throw noPublisher(businessId);
  return { publisherId: business.publisherId, businessId };
}
