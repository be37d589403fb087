import { z } from "zod";
import { BUSINESS_ROLES } from "../access/rules";
import { INVITED_ROLES, MEMBER_SOURCES } from "../accounts/business-records";
import { pageQuery } from "../core/pagination";
import { documentId, emailAddress, isoDateTime, oneLine } from "../core/schemas";
import { subscriptionStatusSchema } from "../subscriptions/schemas";

const businessName = oneLine(z.string().trim().min(1, "must not be empty").max(200));

/** Operators' `business create|show|add-member|remove-member`. */
export const businessInput = z.object({ id: documentId });
export const createBusinessInput = businessInput.extend({ name: businessName });
export const memberInput = z.object({ id: documentId, user: z.string().min(1), role: z.enum(BUSINESS_ROLES).default("member"), seat: z.boolean().default(true) });
export const removeMemberInput = memberInput.omit({ role: true, seat: true });
export const describeBusinessInput = businessInput.extend({ after: documentId.optional(), limit: z.coerce.number().int().min(1).max(1000).default(100) });

export const newBusinessSchema = z.strictObject({ name: businessName });
export const createdBusinessSchema = z.object({ id: z.string(), name: z.string(), role: z.literal("owner") }).meta({ id: "CreatedBusiness" });

export const businessParamsSchema = z.strictObject({ businessId: documentId });
export const memberParamsSchema = z.strictObject({ businessId: documentId, uid: documentId });
export const invitationParamsSchema = z.strictObject({ businessId: documentId, invitationId: documentId });
export const memberListQuerySchema = z.strictObject(pageQuery);

export const businessSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    role: z.enum(BUSINESS_ROLES).meta({ description: "The caller's role." }),
    seat: z.boolean().meta({ description: "Whether the caller holds a seat." }),
    billingAccount: z.boolean().meta({ description: "Whether it has a Stripe customer, so its billing portal opens (§17); an operator-managed plan has none (§24)." }),
    subscription: subscriptionStatusSchema.extend({ seatsUsed: z.number().int().meta({ description: "Members holding a seat." }) }),
  })
  .meta({ id: "Business" });

export const memberSchema = z
  .object({
    uid: z.string(),
    email: z.string().nullable(),
    displayName: z.string().nullable(),
    role: z.enum(BUSINESS_ROLES),
    seat: z.boolean(),
    entitled: z.boolean().meta({
      description: "Whether the subscription's entitlements reach this member now: it is live, and counts no seats or this member's seat is within the paid quantity.",
    }),
    joinedAt: isoDateTime.nullable().meta({ description: "Null for members added before joins were recorded." }),
    seatAssignedAt: isoDateTime.nullable(),
    source: z.enum(MEMBER_SOURCES).meta({ description: "How the member came: the business's creation, an invitation, SCIM provisioning or single sign-on (§22)." }),
    suspended: z.boolean().meta({ description: "Suspended by the business's identity provider (SCIM `active: false`): no seat, nothing of the business reaches them." }),
    scimManaged: z.boolean().meta({ description: "The identity provider manages this member through SCIM (created or linked by it)." }),
  })
  .meta({ id: "Member" });

export const memberListSchema = z.object({ items: z.array(memberSchema), nextCursor: z.string().nullable() }).meta({ id: "MemberList" });

export const memberChangeSchema = z
  .strictObject({ role: z.enum(BUSINESS_ROLES).optional(), seat: z.boolean().optional() })
  .refine((change) => change.role !== undefined || change.seat !== undefined, "name a role, a seat, or both");

const email = emailAddress().transform((value) => value.toLowerCase());

export const newInvitationSchema = z.strictObject({
  email,
  role: z.enum(INVITED_ROLES).default("member"),
  seat: z.boolean().default(true),
});

const invitationFields = {
  id: z.string(),
  email: z.string(),
  role: z.enum(INVITED_ROLES),
  seat: z.boolean(),
  expiresAt: isoDateTime,
};

export const createdInvitationSchema = z
  .object({ ...invitationFields, acceptUrl: z.string().nullable().meta({ description: "The site's /invitations/<token>: the only place the token appears besides the email; null in a replay under the same Idempotency-Key." }) })
  .meta({ id: "CreatedInvitation" });

export const invitationListSchema = z
  .object({ items: z.array(z.object({ ...invitationFields, invitedBy: z.string().nullable(), createdAt: isoDateTime }).meta({ id: "PendingInvitation" })) })
  .meta({ id: "InvitationList" });

export const INVITATION_TOKEN = /^inv_[0-9A-Za-z]{43}$/;
// Any other text is simply not a token: the same 404 as an unknown one.
const invitationToken = z.string().min(1).max(200).meta({ description: "The inv_… token of the invitation's link." });
export const invitationTokenParamsSchema = z.strictObject({ token: invitationToken });
export const invitationTokenBodySchema = z.strictObject({ token: invitationToken });

export const invitationPreviewSchema = z
  .object({
    businessName: z.string(),
    invitedBy: z.string().nullable().meta({ description: "The display name of who invited." }),
    role: z.enum(INVITED_ROLES),
    seat: z.boolean(),
    expiresAt: isoDateTime,
    emailHint: z.string().meta({ description: "The invited address, masked: a***@example.com." }),
  })
  .meta({ id: "InvitationPreview" });

export const acceptedInvitationSchema = z.object({ businessId: z.string(), role: z.enum(BUSINESS_ROLES), seat: z.boolean() }).meta({ id: "AcceptedInvitation" });
