import type { Transaction } from "firebase-admin/firestore";
import { businessStore } from "../accounts/business-store";
import { approximateDocumentBytes, MAX_BUSINESS_DOCUMENT_BYTES, memberOf, type BusinessRecord, type MemberRecord } from "../accounts/business-records";
import type { SubscriptionRecord } from "../accounts/subscription-store";
import type { AuditEvent } from "../core/audit-log";
import { outboundEvent } from "../core/event-types";
import type { Deps } from "../deps";
import { invalidValue, project, ScimError, type ScimResource } from "./resources";
import { reconcileDirectory } from "./rules";

/**
 * SCIM Users and Groups of a business (§22): what users.ts and groups.ts share. Every change is
 * one transaction on the business document, which holds members, seats, SCIM profiles and
 * groups, so seats stay exact and a duplicate userName has one winner under any concurrency; the
 * audit entry of the change carries its `business.member.*` events. Auth users are found or made
 * before it, and disabled or enabled after it (again on a retry, so a crash in between is mended
 * by the provider's next sync).
 */

export type Query = { attributes?: string | string[]; excludedAttributes?: string | string[] };
export type Projected = { resource: Record<string, unknown>; version: string; location: string };

/** The most SCIM groups one business may have, and members all its groups may list together; the document's size is checked at every change too. */
export const MAX_GROUPS = 300;
export const MAX_GROUP_MEMBERSHIPS = 10_000;

export const answer = (resource: ScimResource, query: Query): Projected => ({ resource: project(resource, query), version: String(resource.meta.version), location: String(resource.meta.location) });

export function present(business: BusinessRecord | null): BusinessRecord {
  // The token outlived its business (an operator deleted it): nothing to provision into.
  if (!business) throw new ScimError(401, null, "The SCIM token's business no longer exists.");
  return business;
}

export function assertVersion(resource: ScimResource, ifMatch: string | undefined): void {
  if (ifMatch === undefined || ifMatch.trim() === "*") return;
  const wanted = ifMatch.split(",").map((tag) => tag.trim());
  if (!wanted.includes(String(resource.meta.version))) throw new ScimError(412, null, `The resource has changed: its version is ${String(resource.meta.version)}.`);
}

export const withMembers = (business: BusinessRecord, changed: MemberRecord[]): BusinessRecord => {
  const byUid = new Map(changed.map((member) => [member.uid, member]));
  const known = new Set(business.members.map((member) => member.uid));
  return { ...business, members: [...business.members.map((member) => byUid.get(member.uid) ?? member), ...changed.filter((member) => !known.has(member.uid))] };
};

const memberPath = (businessId: string, uid: string) => `/businesses/${businessId}/members/${uid}`;

/** The events of members changed by a SCIM request, from their records before and after. */
export function memberEvents(businessId: string, before: BusinessRecord, after: MemberRecord[]): AuditEvent["emits"] {
  const owners = [{ kind: "business" as const, id: businessId }];
  return after.flatMap((member) => {
    const previous = memberOf(before, member.uid);
    const data = { businessId, uid: member.uid, role: member.role, seat: member.seat, source: member.source, path: memberPath(businessId, member.uid) };
    if (!previous) return [outboundEvent("business.member.joined", owners, { ...data, ...(member.suspended ? { suspended: true } : {}) })];
    const changed = previous.role !== member.role || previous.seat !== member.seat || previous.suspended !== member.suspended;
    if (!changed) return [];
    return [
      outboundEvent("business.member.updated", owners, {
        ...data,
        ...(previous.suspended !== member.suspended ? { suspended: member.suspended } : {}),
        ...(previous.role !== member.role ? { previousRole: previous.role } : {}),
      }),
    ];
  });
}

/** Applies the group-driven roles and seats to a business after a change, returning every member changed. */
export function settle(tx: Transaction, deps: Deps, businessId: string, business: BusinessRecord, subscription: SubscriptionRecord | null, changed: MemberRecord[], now: Date): MemberRecord[] {
  const interim = withMembers(business, changed);
  const reconciled = reconcileDirectory(interim, subscription, now);
  const all = new Map([...changed, ...reconciled].map((member) => [member.uid, member]));
  if (approximateDocumentBytes(withMembers(interim, reconciled)) > MAX_BUSINESS_DOCUMENT_BYTES) {
    throw invalidValue("This business's directory is full: its members, SCIM profiles and groups would pass the most one business holds (about 1,500 SCIM users). Remove users or groups first, or ask the operators.");
  }
  for (const member of all.values()) businessStore(deps.db).putMember(tx, businessId, member);
  return [...all.values()];
}

/** Settings changed (PUT /businesses/:id/scim/settings): roles and seats follow at once, in the same transaction. */
export function settleDirectory(tx: Transaction, deps: Deps, businessId: string, business: BusinessRecord, subscription: SubscriptionRecord | null, now: Date) {
  const changed = settle(tx, deps, businessId, business, subscription, [], now);
  return { changed, emits: memberEvents(businessId, business, changed) };
}

// Bodies and PATCH
