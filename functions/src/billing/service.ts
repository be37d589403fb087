import { businessStore } from "../accounts/business-store";
import { outboundEvent } from "../core/event-types";
import { auditLog } from "../core/audit-log";
import { ApiError, invalidRequest } from "../core/errors";
import { withinDeadline } from "../core/deadline";
import { parseInput } from "../core/validation";
import type { Deps } from "../deps";
import { subscriptionStore } from "../accounts/subscription-store";
import { loadStripe } from "../core/stripe";
import { applyPaymentEvent, isPaymentEvent } from "../payments/fulfilment";
import { stripeEventStore } from "../payments/stripe-event-store";
import { stripeEvent, stripeSubscriptionObject } from "../payments/stripe-objects";
import { HANDLED_EVENT_TYPES, stripeWriteDecision, subscriptionFromStripe } from "./stripe-subscription";

export type WebhookOutcome = "applied" | "duplicate" | "stale" | "superseded" | "ignored";


/** The event, when any of the endpoints' secrets signed it (the platform's, Connect's, an old one during a roll). */
async function verifiedEvent(rawBody: Buffer, signatureHeader: string, secrets: string[], now: Date): Promise<unknown> {
  const { webhooks } = await loadStripe();
  for (const secret of secrets) {
    try {
      return webhooks.constructEvent(rawBody, signatureHeader, secret, undefined, undefined, now.getTime());
    } catch (error) {
      if (error instanceof SyntaxError) throw invalidRequest("The event is not valid JSON.");
    }
  }
  throw new ApiError("invalid_signature", "The Stripe-Signature does not verify for this body with any of the endpoints' secrets (or is older than 5 minutes).");
}

/**
 * A Stripe webhook delivery (contract §11): verifies the signature over the raw bytes, then hands
 * a paid module's event to payments/ (§20), or writes the business's subscription, the business
 * if it is new, and the event's id in one transaction, so a replay, a late event or a failure
 * half-way writes nothing twice and nothing in part. Answers only once that transaction has
 * committed.
 */
export async function receiveStripeEvent(deps: Deps, rawBody: Buffer, signatureHeader: string | undefined): Promise<{ eventId: string; outcome: WebhookOutcome }> {
  const { config, logger, clock } = deps;
  const now = clock();
  if (config.stripeWebhookSecrets.length === 0) {
    logger.error("STRIPE_WEBHOOK_SECRET is not set: every Stripe event is refused");
    throw new ApiError("invalid_signature", "This service has no Stripe webhook secret configured.");
  }
  if (!signatureHeader) throw new ApiError("invalid_signature", "The Stripe-Signature header is missing.");
  const verified = await verifiedEvent(rawBody, signatureHeader, config.stripeWebhookSecrets, now);
  const event = parseInput(stripeEvent, verified, "The body is not a Stripe event.");
  const ignore = (reason: string) => {
    logger.info("stripe event ignored", { eventId: event.id, type: event.type, reason });
    return { eventId: event.id, outcome: "ignored" as const };
  };
  if (isPaymentEvent(event)) return { eventId: event.id, outcome: await applyPaymentEvent(deps, event) };
  if (!(HANDLED_EVENT_TYPES as readonly string[]).includes(event.type)) return ignore("not a subscription event");
  const stripeSubscription = parseInput(stripeSubscriptionObject, event.data.object, "The event's data.object is not a Stripe subscription.");
  const mapped = subscriptionFromStripe(stripeSubscription);
  if (mapped.kind === "skip") return ignore(mapped.reason);
  if (mapped.droppedEntitlements.length > 0) {
    logger.error("stripe entitlements metadata has keys that are not entitlement keys; they are left out", { eventId: event.id, keys: mapped.droppedEntitlements });
  }

  const { db } = deps;
  const events = stripeEventStore(db);
  const subscriptions = subscriptionStore(db);
  const businesses = businessStore(db);
  const { businessId } = mapped;
  const eventCreated = new Date(event.created * 1000);
  const outcome = await withinDeadline(
    "Firestore",
    db.runTransaction(async (tx): Promise<WebhookOutcome> => {
      const [eventSnapshot, subscriptionSnapshot, businessSnapshot] = await tx.getAll(events.ref(event.id), subscriptions.ref(businessId), businesses.ref(businessId));
      if (events.processed(eventSnapshot)) return "duplicate";
      const decision = stripeWriteDecision(subscriptions.read(subscriptionSnapshot), {
        subscriptionId: stripeSubscription.id,
        status: mapped.subscription.status,
        eventCreated,
      });
      if (decision === "applied") {
        // The business's Stripe customer, for its Billing Portal (§17).
        const customerId = typeof stripeSubscription.customer === "string" ? stripeSubscription.customer : stripeSubscription.customer.id;
        const business = businesses.read(businessSnapshot);
        if (!business) businesses.createIn(tx, businessId, mapped.businessName, customerId);
        else if (business.stripeCustomerId !== customerId) businesses.setStripeCustomer(tx, businessId, customerId);
        subscriptions.setIn(tx, businessId, { ...mapped.subscription, stripe: { subscriptionId: stripeSubscription.id, eventCreated } });
        auditLog(db).record(
          tx,
          { kind: "billing", id: `stripe:${event.id}` },
          {
            action: "subscription.stripe",
            target: businessId,
            details: { type: event.type, status: mapped.subscription.status, plan: mapped.subscription.plan, entitlements: mapped.subscription.entitlements },
            emits: [
              outboundEvent("business.subscription.updated", [{ kind: "business", id: businessId }], {
                businessId,
                status: mapped.subscription.status,
                plan: mapped.subscription.plan,
                seats: mapped.subscription.seats,
                currentPeriodEnd: mapped.subscription.currentPeriodEnd.toISOString(),
                path: `/subscriptions/${businessId}`,
              }),
            ],
          },
          now,
        );
      }
      events.recordIn(tx, { id: event.id, type: event.type, created: event.created, subject: { businessId }, outcome: decision }, now);
      return decision;
    }),
  );
  logger.info("stripe event processed", { eventId: event.id, type: event.type, businessId, outcome });
  return { eventId: event.id, outcome };
}
