import { z } from "zod";
import type { EventOwner, OutboundEvent } from "./event-outbox";

/**
 * The event catalog (contract §21): each type, the kinds of owner whose endpoints may subscribe to
 * it, and the JSON Schema of its `data` (from these zod shapes; `GET /webhooks/event-types`).
 * `data` names what changed by id, with the fields that changed and the resource's API path.
 */

type OwnerKind = EventOwner["kind"] | "any";

const path = z.string().meta({ description: "The resource's path under /api/v1, where there is one." });
const member = z.object({
  businessId: z.string(),
  uid: z.string(),
  role: z.string().optional(),
  seat: z.boolean().optional(),
  source: z.string().optional().meta({ description: "How the member came (§22): owner, invitation, scim or sso." }),
  suspended: z.boolean().optional().meta({ description: "Suspended, or restored (false), by the identity provider through SCIM (§22)." }),
  path,
});
const version = z.object({ moduleId: z.string(), version: z.string(), path });

const CATALOG = {
  "business.member.joined": { owners: ["business"], description: "Someone joined the business (an accepted invitation, an operator's add, SCIM provisioning or single sign-on).", data: member },
  "business.member.left": { owners: ["business"], description: "A member left or was removed.", data: member },
  "business.member.updated": { owners: ["business"], description: "A member's role or seat changed, or SCIM suspended or restored them.", data: member.extend({ previousRole: z.string().optional() }) },
  "business.invitation.created": {
    owners: ["business"],
    description: "Someone was invited (again).",
    data: z.object({ businessId: z.string(), id: z.string(), email: z.string(), role: z.string(), seat: z.boolean(), path }),
  },
  "business.invitation.accepted": {
    owners: ["business"],
    description: "An invitation was accepted.",
    data: z.object({ businessId: z.string(), id: z.string(), email: z.string(), uid: z.string(), path }),
  },
  "business.subscription.updated": {
    owners: ["business"],
    description: "The business's plan changed: status, seats, period or entitlements.",
    data: z.object({ businessId: z.string(), status: z.string(), plan: z.string().nullable(), seats: z.number().nullable(), currentPeriodEnd: z.string().nullable(), path }),
  },
  "business.policy.updated": {
    owners: ["business"],
    description: "The business's install policy changed (§26): fetch it, or its signed form, again.",
    data: z.object({ businessId: z.string(), version: z.number(), mode: z.string(), path }),
  },
  "module.version.signed": { owners: ["publisher"], description: "A version was signed (uploaded), ready to publish.", data: version.extend({ sha256: z.string(), review: z.string() }) },
  "module.version.published": { owners: ["publisher"], description: "A version was published to the marketplace.", data: version.extend({ sha256: z.string() }) },
  "module.version.yanked": { owners: ["publisher"], description: "A version was yanked or, with yanked false, unyanked.", data: version.extend({ yanked: z.boolean(), reason: z.string().nullable() }) },
  "module.version.quarantined": {
    owners: ["publisher", "operator"],
    description: "The package checks held a signed version for an operator's review.",
    data: version.extend({ findings: z.array(z.string()) }),
  },
  "module.version.approved": { owners: ["publisher"], description: "An operator approved a quarantined version.", data: version },
  "module.version.rejected": { owners: ["publisher"], description: "An operator rejected a quarantined version; its package is deleted.", data: version.extend({ reason: z.string() }) },
  "module.revoked": {
    owners: ["publisher"],
    description: "An operator revoked a version (or, without version, the module), or lifted a revocation (revoked false).",
    data: z.object({ moduleId: z.string(), version: z.string().nullable(), revoked: z.boolean(), reason: z.string().nullable(), path }),
  },
  "module.review.created": { owners: ["publisher"], description: "Someone reviewed a module.", data: z.object({ moduleId: z.string(), reviewId: z.string(), rating: z.number(), path }) },
  "module.review.updated": { owners: ["publisher"], description: "A reviewer changed their review.", data: z.object({ moduleId: z.string(), reviewId: z.string(), rating: z.number(), path }) },
  "module.review.reported": {
    owners: ["operator"],
    description: "Someone reported a review.",
    data: z.object({ moduleId: z.string(), reviewId: z.string(), reports: z.number(), path }),
  },
  "moderation.notice.received": {
    owners: ["operator"],
    description: "Someone sent a notice about a module or a review (§30): the operators' queue has a new entry.",
    data: z.object({ noticeId: z.string(), category: z.string(), source: z.string(), moduleId: z.string(), reviewId: z.string().optional() }),
  },
  "moderation.appeal.received": {
    owners: ["operator"],
    description: "The side a decision affects, or its reporter, appealed it (§30): `appeals list` has it; another operator than the one who decided hears it.",
    data: z.object({ appealId: z.string(), decisionId: z.string(), side: z.string() }),
  },
  "moderation.decided": {
    owners: ["publisher"],
    description: "An operator decided a notice about one of the publisher's modules (§30), or an appeal reversed that decision (reversed true): GET /developers/decisions has the statement of reasons.",
    data: z.object({ decisionId: z.string(), moduleId: z.string(), version: z.string().nullable(), decision: z.string(), ground: z.string(), reference: z.string(), reversed: z.boolean(), path }),
  },
  "module.purchase.completed": {
    owners: ["publisher"],
    description: "A module was bought, or a subscription to it started.",
    data: z.object({ moduleId: z.string(), purchaseId: z.string(), amount: z.number(), currency: z.string() }),
  },
  "module.purchase.refunded": {
    owners: ["publisher"],
    description: "A purchase was refunded, in part or whole.",
    data: z.object({ moduleId: z.string(), purchaseId: z.string(), amount: z.number(), currency: z.string() }),
  },
  "release.published": { owners: ["operator"], description: "An installer release was published.", data: z.object({ releaseId: z.string(), version: z.string(), platform: z.string(), arch: z.string(), channel: z.string(), path }) },
  "release.ramped": { owners: ["operator"], description: "A release's rollout changed, by hand or a ramp's step.", data: z.object({ releaseId: z.string(), rollout: z.number(), path }) },
  "release.halted": { owners: ["operator"], description: "A release's rollout was halted, by hand or by its ramp's health check.", data: z.object({ releaseId: z.string(), reason: z.string().nullable(), path }) },
  "release.yanked": { owners: ["operator"], description: "A release was yanked or, with yanked false, unyanked.", data: z.object({ releaseId: z.string(), yanked: z.boolean(), path }) },
  "webhook.test": { owners: ["any"], description: "A test delivery, sent on request.", data: z.object({ webhookId: z.string(), message: z.string() }) },
} satisfies Record<string, { owners: OwnerKind[]; description: string; data: z.ZodType }>;

export type EventType = keyof typeof CATALOG;
export const EVENT_TYPES = Object.keys(CATALOG) as EventType[];

/** Whether an owner of this kind may subscribe to the type. */
export const subscribable = (type: string, kind: EventOwner["kind"]) => {
  const entry = (CATALOG as Record<string, { owners: OwnerKind[] }>)[type];
  return entry !== undefined && (entry.owners.includes(kind) || entry.owners.includes("any"));
};

/** The catalog as `GET /webhooks/event-types` answers it: one item per type and owner. */
export function eventTypeItems() {
  return Object.entries(CATALOG).flatMap(([type, entry]) => {
    const schema = z.toJSONSchema(entry.data as z.ZodType, { unrepresentable: "any" });
    return (entry.owners as OwnerKind[]).map((owner) => ({ type, owner, description: entry.description, schema }));
  });
}

/** An event of the catalog for these owners, its data checked against its type at compile time. */
export const outboundEvent = <T extends EventType>(type: T, owners: EventOwner[], data: z.input<(typeof CATALOG)[T]["data"]>): OutboundEvent => ({
  type,
  owners,
  data: data as Record<string, unknown>,
});
