import type { AuditEvent } from "../core/audit-log";
import { outboundEvent } from "../core/event-types";
import type { MemberChange } from "./ledger";

/** The webhook events (§21) of members a change joined or changed: what the change's audit entry emits. */

const memberPath = (businessId: string, uid: string) => `/businesses/${businessId}/members/${uid}`;

/** The events of members changed: `business.member.joined` for a newcomer, `business.member.updated` when role, seat or suspension moved. */
export function memberEvents(businessId: string, changes: MemberChange[]): NonNullable<AuditEvent["emits"]> {
  const owners = [{ kind: "business" as const, id: businessId }];
  return changes.flatMap(({ before: previous, after: member }) => {
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

