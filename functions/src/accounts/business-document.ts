import type { DocumentSnapshot } from "firebase-admin/firestore";
import { z } from "zod";
import { POLICY_MODES } from "../access/install-policy";
import { readDocument, timestamp } from "../core/documents";
import { INVITED_ROLES, scimSettings, ssoSettings, type BusinessRecord } from "./business-records";

/**
 * `businesses/{businessId}` in Firestore's shape: the document's schema, and the conversion to a
 * BusinessRecord (business-records.ts). Its members are documents of their own (member-document.ts).
 */

const scimGroupEntry = z.object({
  displayName: z.string(),
  externalId: z.string().nullable(),
  created: timestamp,
  lastModified: timestamp,
});

const domainEntry = z.object({ txtValue: z.string(), createdAt: timestamp, verifiedAt: timestamp.nullable() });

const invitationEntry = z.object({
  email: z.string(),
  role: z.enum(INVITED_ROLES),
  seat: z.boolean(),
  invitedBy: z.string(),
  invitedByName: z.string().nullable(),
  createdAt: timestamp,
  expiresAt: timestamp,
  /** The hex SHA-256 of the token: the token itself is never stored. */
  tokenHash: z.string(),
});

const businessDocument = z.object({
  name: z.string(),
  invitations: z.record(z.string(), invitationEntry).optional(),
  /** When each invitation of the last 24 hours was sent (the 50-a-day limit). */
  invitationsSent: z.array(timestamp).optional(),
  stripeCustomerId: z.string().optional(),
  /** The business's own publisher id (§26), whose modules are private to it. */
  publisherId: z.string().optional(),
  /** Its install policy's version and what members are shown of it (§26; the rules are in businessPolicies). */
  policy: z.object({ version: z.number().int().positive(), mode: z.enum(POLICY_MODES), required: z.array(z.string()), message: z.string().nullable() }).optional(),
  sso: ssoSettings.optional(),
  domains: z.record(z.string(), domainEntry).optional(),
  scimSettings: scimSettings.optional(),
  scimGroups: z.record(z.string(), scimGroupEntry).optional(),
});

/** The business a snapshot holds, or null when there is none. */
export function businessFromSnapshot(snapshot: DocumentSnapshot): BusinessRecord | null {
  const stored = readDocument(businessDocument, snapshot);
  if (!stored) return null;
  return {
    id: snapshot.id,
    name: stored.name,
    invitations: Object.entries(stored.invitations ?? {}).map(([id, entry]) => ({
      id,
      ...entry,
      createdAt: entry.createdAt.toDate(),
      expiresAt: entry.expiresAt.toDate(),
    })),
    invitationsSent: (stored.invitationsSent ?? []).map((at) => at.toDate()),
    stripeCustomerId: stored.stripeCustomerId ?? null,
    publisherId: stored.publisherId ?? null,
    policy: stored.policy ?? null,
    sso: stored.sso ?? null,
    domains: Object.entries(stored.domains ?? {}).map(([domain, entry]) => ({
      domain,
      txtValue: entry.txtValue,
      createdAt: entry.createdAt.toDate(),
      verifiedAt: entry.verifiedAt?.toDate() ?? null,
    })),
    scimSettings: stored.scimSettings ?? null,
    scimGroups: Object.entries(stored.scimGroups ?? {}).map(([id, entry]) => ({ id, ...entry, created: entry.created.toDate(), lastModified: entry.lastModified.toDate() })),
  };
}
