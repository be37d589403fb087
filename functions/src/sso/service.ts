import { businessStore } from "../accounts/business-store";
import type { Transaction } from "firebase-admin/firestore";
import type { BusinessRecord, MemberRecord, SsoSettings } from "../accounts/business-records";
import { memberStore } from "../accounts/member-store";
import type { SubscriptionRecord } from "../accounts/subscription-store";
import { inBusinessTransaction, memberQueueKey, readBusiness, requireOwner, type BusinessState, type MemberCaller } from "../businesses/membership";
import { isDeepStrictEqual } from "node:util";
import { z } from "zod";
import { auditLog, operatorOf, type Actor } from "../core/audit-log";
import type { Caller } from "../core/auth";
import { outboundEvent } from "../core/event-types";
import { ApiError } from "../core/errors";
import { documentId } from "../core/schemas";
import { parseInput } from "../core/validation";
import type { Deps, OperatorDeps } from "../deps";
import { domainOfEmail } from "../domains/service";
import { verifiedDomainStore } from "../domains/verified-domain-store";
import { seatLedger, seated } from "../seats/ledger";
import { wantsSeat } from "../scim/rules";
import { SSO_PROVIDER_ID, ssoSettingsSchema } from "./schemas";

/**
 * Single sign-on (§22): a business names the SAML or OIDC provider its people sign in through.
 * Enforcement is decided where access is (access/rules.ts `ssoBlocks`, used by the business's
 * routes and by every entitlement read); this is the setting, and just-in-time membership.
 */

const NO_SSO: SsoSettings = { providerId: null, enforce: false, jit: false };

/** GET /businesses/:id/sso (owners). */
export async function getSso(deps: Deps, caller: MemberCaller, businessId: string): Promise<SsoSettings> {
  return requireOwner(await readBusiness(deps, null, businessId, caller.uid), caller, businessId, "see its single sign-on").sso ?? NO_SSO;
}

/** PUT /businesses/:id/sso (owners): the setting, stored whole. */
export async function putSso(deps: Deps, caller: MemberCaller, actor: Actor, businessId: string, settings: SsoSettings): Promise<SsoSettings> {
  const now = deps.clock();
  return inBusinessTransaction(
    deps,
    businessId,
    (tx, state) => {
      const previous = requireOwner(state, caller, businessId, "change its single sign-on").sso ?? NO_SSO;
      businessStore(deps.db).setSso(tx, businessId, settings);
      auditLog(deps.db).record(tx, actor, { action: "business.sso.update", target: businessId, details: { ...settings, previous } }, now);
      return settings;
    },
    { uid: caller.uid },
  );
}

/** Whether a caller's sign-in may make them a member just in time: through a SAML or OIDC provider, with a verified email. */
const mayJoinJustInTime = (caller: Caller): caller is Caller & { email: string; signInProvider: string } =>
  Boolean(caller.email && caller.emailVerified && caller.signInProvider && SSO_PROVIDER_ID.test(caller.signInProvider));

const joinsThrough = ({ business, member }: Pick<BusinessState, "business" | "member">, caller: { uid: string; signInProvider: string }, domain: string) =>
  business !== null &&
  business.sso?.jit === true &&
  business.sso.providerId === caller.signInProvider &&
  business.domains.some((candidate) => candidate.domain === domain && candidate.verifiedAt !== null) &&
  member === null;

/**
 * Just-in-time membership (§22), at `GET /users/me`: a caller signed in through a business's
 * provider, whose verified email is in a domain the business verified, joins it as a member, with
 * a seat when one is free. Costs two reads for such callers only; a member (or a suspended one,
 * who stays out) is left as they are.
 */
export async function joinThroughSso(deps: Deps, caller: Caller): Promise<void> {
  if (!mayJoinJustInTime(caller)) return;
  const domain = domainOfEmail(caller.email);
  const holder = await verifiedDomainStore(deps.db).get(domain);
  if (!holder) return;
  const before = await readBusiness(deps, null, holder.businessId, caller.uid);
  if (!joinsThrough(before, caller, domain)) return;
  const now = deps.clock();
  await inBusinessTransaction(
    deps,
    holder.businessId,
    async (tx, state) => {
    if (!joinsThrough(state, caller, domain)) return;
    const member = await newcomer(deps, tx, state.business!, state.subscription, caller.uid, now);
    memberStore(deps.db).put(tx, holder.businessId, null, member);
    const actor = { kind: "user" as const, id: caller.uid };
    const joined = outboundEvent("business.member.joined", [{ kind: "business", id: holder.businessId }], {
      businessId: holder.businessId,
      uid: caller.uid,
      role: member.role,
      seat: member.seat,
      source: "sso",
      path: `/businesses/${holder.businessId}/members/${caller.uid}`,
    });
    auditLog(deps.db).record(tx, actor, { action: "business.member.join", target: holder.businessId, details: { uid: caller.uid, source: "sso", provider: caller.signInProvider, seat: member.seat }, emits: [joined] }, now);
    },
    { uid: caller.uid, queueKey: memberQueueKey(holder.businessId, caller.uid) },
  );
}

/** Someone joining through SSO: with a seat when they are to hold one and one is free; else waiting for one (§25). */
async function newcomer(deps: Pick<Deps, "db">, tx: Transaction, business: BusinessRecord, subscription: SubscriptionRecord | null, uid: string, now: Date): Promise<MemberRecord> {
  const joining: MemberRecord = { uid, role: "member", joinedAt: now, seat: false, seatAssignedAt: null, seatShard: null, waitingSince: null, source: "sso", suspended: false, managed: false, scim: null, groups: [] };
  if (!wantsSeat(business.scimSettings, [])) return joining;
  const shard = await seatLedger(deps.db, tx, business.id, subscription?.seats ?? null).take();
  return shard === null ? { ...joining, waitingSince: now } : seated(joining, shard, now);
}

/** Operators (the CLI, the seed): a business's single sign-on, as its owners would set it. */
export async function setSsoForBusiness(deps: OperatorDeps, input: { id: string; providerId: string | null; enforce?: boolean; jit?: boolean }) {
  const { id: businessId } = parseInput(z.object({ id: documentId }), { id: input.id });
  const settings = parseInput(ssoSettingsSchema, { providerId: input.providerId, enforce: input.enforce ?? false, jit: input.jit ?? false });
  const now = deps.clock();
  return inBusinessTransaction(deps, businessId, (tx, { business }) => {
    if (!business) throw new ApiError("business_not_found", `No business '${businessId}'.`);
    if (isDeepStrictEqual(business.sso, settings)) return { businessId, ...settings };
    businessStore(deps.db).setSso(tx, businessId, settings);
    auditLog(deps.db).record(tx, operatorOf(deps), { action: "business.sso.update", target: businessId, details: { ...settings, previous: business.sso ?? NO_SSO } }, now);
    return { businessId, ...settings };
  });
}
