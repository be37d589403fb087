import type { Transaction } from "firebase-admin/firestore";
import { outboundEvent } from "../core/event-types";
import type { z } from "zod";
import { businessStore } from "../accounts/business-store";
import type { BusinessRecord, InvitationRecord } from "../accounts/business-records";
import { memberStore } from "../accounts/member-store";
import { seatTransaction } from "../accounts/seat-shard-store";
import { auditLog, type Actor } from "../core/audit-log";
import { withinDeadline } from "../core/deadline";
import { toIso } from "../core/documents";
import { ApiError } from "../core/errors";
import { randomBase62, tokenHash } from "../core/secret-tokens";
import { DAY_MS } from "../core/time";
import type { Deps } from "../deps";
import { invitationTokenStore } from "./invitation-token-store";
import { escapeHtml, mailStore } from "./mail-store";
import { INVITATION_TOKEN, type newInvitationSchema } from "./schemas";
import { assertSeatForInvitation, inBusinessTransaction, readBusiness, requireAdmin, takeSeat, type MemberCaller } from "./membership";

/**
 * Invitations by email (§17): a single-use token (`inv_` + 43 base62 characters, 256 bits) that
 * appears only in the answer to its creation and in the email; the service keeps its SHA-256.
 */

export const INVITATION_LIFETIME_MS = 7 * DAY_MS;
/** Invitations one business may send in any 24 hours. */
export const INVITATIONS_PER_DAY = 50;

const notFound = () => new ApiError("invitation_not_found", "No such invitation: it may have expired, been used, been revoked or replaced.");

const pending = (business: BusinessRecord, now: Date) => business.invitations.filter((invitation) => invitation.expiresAt > now);

/** The site's address (PUBLIC_BASE_URL without /api/v1), where the pages live. */
export const siteUrl = (publicBaseUrl: string) => publicBaseUrl.replace(/\/api\/v1$/, "");

/** POST /businesses/:id/invitations. */
export async function invite(deps: Deps, caller: MemberCaller & { name: string | null; email: string | null }, actor: Actor, businessId: string, input: z.output<typeof newInvitationSchema>) {
  const { db, auth, clock, config } = deps;
  const now = clock();
  const existingUser = await withinDeadline("Auth", auth.getUserByEmail(input.email)).catch((error: { code?: string }) => {
    if (error.code === "auth/user-not-found") return null;
    throw error;
  });
  const token = `inv_${randomBase62(43)}`;
  const invitation: InvitationRecord = {
    id: randomBase62(20),
    email: input.email,
    role: input.role,
    seat: input.seat,
    invitedBy: caller.uid,
    invitedByName: null,
    createdAt: now,
    expiresAt: new Date(now.getTime() + INVITATION_LIFETIME_MS),
    tokenHash: tokenHash(token),
  };
  const acceptUrl = `${siteUrl(config.publicBaseUrl)}/invitations/${token}`;
  const created = { id: invitation.id, email: invitation.email, role: invitation.role, seat: invitation.seat, expiresAt: toIso(invitation.expiresAt), acceptUrl };
  await inBusinessTransaction(
    deps,
    businessId,
    async (tx, state) => {
    const business = requireAdmin(state, caller, businessId, "invite people");
    const invitee = existingUser ? await memberStore(db).get(tx, businessId, existingUser.uid) : null;
    if (invitee?.suspended) {
      throw new ApiError("already_member", `${input.email} is a member suspended by the business's identity provider (SCIM): restore them there.`);
    }
    if (invitee) throw new ApiError("already_member", `${input.email} is already a member of this business.`);
    const sentToday = business.invitationsSent.filter((at) => at.getTime() > now.getTime() - DAY_MS);
    if (sentToday.length >= INVITATIONS_PER_DAY) {
      const retryAfter = Math.max(1, Math.ceil((Math.min(...sentToday.map((at) => at.getTime())) + DAY_MS - now.getTime()) / 1000));
      throw new ApiError("rate_limited", `A business may send ${INVITATIONS_PER_DAY} invitations in 24 hours.`, { headers: { "Retry-After": String(retryAfter) } });
    }
    // A pending invitation of the same email is replaced; expired ones are cleared on the way.
    const replaced = business.invitations.filter((other) => other.email === input.email || other.expiresAt <= now);
    const stillPending = pending(business, now).filter((other) => other.email !== input.email);
    if (input.seat) await assertSeatForInvitation(deps, tx, businessId, state.subscription, stillPending.filter((other) => other.seat).length);
    // Who invites, as the invitee will recognise them: their name, else their address.
    const record = { ...invitation, invitedByName: caller.name ?? caller.email };
    const businesses = businessStore(db);
    const tokens = invitationTokenStore(db);
    businesses.deleteInvitations(tx, businessId, replaced.map((other) => other.id));
    tokens.deleteIn(tx, replaced.map((other) => other.tokenHash));
    businesses.putInvitation(tx, businessId, record, sentToday);
    tokens.createIn(tx, record.tokenHash, { businessId, invitationId: record.id });
    if (config.invitationEmails) mailStore(db).queueIn(tx, invitationEmail(business.name, record, acceptUrl), now);
    auditLog(db).record(
      tx,
      actor,
      {
        action: "business.invitation.create",
        target: businessId,
        details: { invitationId: record.id, email: record.email, role: record.role, seat: record.seat, replaced: replaced.filter((other) => other.email === input.email).map((other) => other.id) },
        emits: [outboundEvent("business.invitation.created", [{ kind: "business", id: businessId }], { businessId, id: record.id, email: record.email, role: record.role, seat: record.seat, path: `/businesses/${businessId}/invitations` })],
        answer: created,
      },
      now,
    );
    },
    { uid: caller.uid },
  );
  return created;
}

/** GET /businesses/:id/invitations: the pending ones, newest first, never their tokens. */
export async function listInvitations(deps: Deps, caller: MemberCaller, businessId: string) {
  const business = requireAdmin(await readBusiness(deps, null, businessId, caller.uid), caller, businessId, "see its invitations");
  const now = deps.clock();
  return {
    items: pending(business, now)
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? -1 : 1))
      .map((invitation) => ({
        id: invitation.id,
        email: invitation.email,
        role: invitation.role,
        seat: invitation.seat,
        expiresAt: toIso(invitation.expiresAt),
        invitedBy: invitation.invitedByName,
        createdAt: toIso(invitation.createdAt),
      })),
  };
}

/** DELETE /businesses/:id/invitations/:invitationId. */
export async function revokeInvitation(deps: Deps, caller: MemberCaller, actor: Actor, businessId: string, invitationId: string): Promise<void> {
  const { db, clock } = deps;
  await inBusinessTransaction(
    deps,
    businessId,
    (tx, state) => {
    const business = requireAdmin(state, caller, businessId, "revoke invitations");
    const invitation = pending(business, clock()).find((candidate) => candidate.id === invitationId);
    if (!invitation) throw notFound();
    businessStore(db).deleteInvitations(tx, businessId, [invitation.id]);
    invitationTokenStore(db).deleteIn(tx, [invitation.tokenHash]);
    auditLog(db).record(tx, actor, { action: "business.invitation.revoke", target: businessId, details: { invitationId, email: invitation.email } }, clock());
    },
    { uid: caller.uid },
  );
}

/** The pending invitation a token opens, read inside a transaction, or 404 for every other case alike. */
async function openInvitation(deps: Deps, tx: Transaction, token: string) {
  if (!INVITATION_TOKEN.test(token)) throw notFound();
  const hash = tokenHash(token);
  const tokens = invitationTokenStore(deps.db);
  const record = tokens.read(await tx.get(tokens.ref(hash)));
  if (!record) throw notFound();
  return { hash, record };
}

function findPending(business: BusinessRecord | null, invitationId: string, hash: string, now: Date): InvitationRecord {
  const invitation = business?.invitations.find((candidate) => candidate.id === invitationId);
  if (!invitation || invitation.tokenHash !== hash || invitation.expiresAt <= now) throw notFound();
  return invitation;
}

/** GET /invitations/:token (public): what the invitation is, with the email masked. */
export async function previewInvitation(deps: Deps, token: string) {
  const now = deps.clock();
  return withinDeadline(
    "Firestore",
    deps.db.runTransaction(
      async (tx) => {
        const { hash, record } = await openInvitation(deps, tx, token);
        const businesses = businessStore(deps.db);
        const business = businesses.read(await tx.get(businesses.ref(record.businessId)));
        const invitation = findPending(business, record.invitationId, hash, now);
        return {
          businessName: business!.name,
          invitedBy: invitation.invitedByName,
          role: invitation.role,
          seat: invitation.seat,
          expiresAt: toIso(invitation.expiresAt),
          emailHint: emailHint(invitation.email),
        };
      },
      { readOnly: true },
    ),
  );
}

/** POST /invitations/accept: the caller's verified email must be the invited one; a token works once. */
export async function acceptInvitation(deps: Deps, uid: string, actor: Actor, token: string) {
  const { db, auth, clock } = deps;
  const user = await withinDeadline("Auth", auth.getUser(uid));
  const now = clock();
  return withinDeadline(
    "Firestore",
    seatTransaction(db, async (tx) => {
      const { hash, record } = await openInvitation(deps, tx, token);
      const { business, subscription, member } = await readBusiness(deps, tx, record.businessId, uid);
      const invitation = findPending(business, record.invitationId, hash, now);
      if (!user.email || user.email.toLowerCase() !== invitation.email) {
        throw new ApiError("invitation_email_mismatch", `This invitation is for ${emailHint(invitation.email)}; sign in with that address to accept it.`);
      }
      if (!user.emailVerified) throw new ApiError("email_not_verified", `Verify ${user.email} first: an invitation is accepted only by a verified email address.`);
      if (member?.suspended) throw new ApiError("already_member", "You are a member suspended by the business's identity provider; ask its IT administrators.");
      if (member) throw new ApiError("already_member", "You are already a member of this business.");
      const seatShard = invitation.seat ? await takeSeat(deps, tx, record.businessId, subscription) : null;
      memberStore(db).put(tx, record.businessId, null, {
        uid,
        role: invitation.role,
        joinedAt: now,
        seat: invitation.seat,
        seatAssignedAt: invitation.seat ? now : null,
        seatShard,
        waitingSince: null,
        source: "invitation",
        suspended: false,
        managed: false,
        scim: null,
        groups: [],
      });
      businessStore(db).deleteInvitations(tx, record.businessId, [invitation.id]);
      invitationTokenStore(db).deleteIn(tx, [hash]);
      const owners = [{ kind: "business" as const, id: record.businessId }];
      const joined = { businessId: record.businessId, role: invitation.role, seat: invitation.seat };
      auditLog(db).record(
        tx,
        actor,
        {
          action: "business.invitation.accept",
          target: record.businessId,
          details: { invitationId: invitation.id, uid, role: invitation.role, seat: invitation.seat },
          emits: [
            outboundEvent("business.invitation.accepted", owners, { businessId: record.businessId, id: invitation.id, email: invitation.email, uid, path: `/businesses/${record.businessId}/members/${uid}` }),
            outboundEvent("business.member.joined", owners, { businessId: record.businessId, uid, role: invitation.role, seat: invitation.seat, path: `/businesses/${record.businessId}/members/${uid}` }),
          ],
          answer: joined,
        },
        now,
      );
      return joined;
    }),
  );
}

/** POST /invitations/decline: whoever holds the token may turn it down. */
export async function declineInvitation(deps: Deps, actor: Actor, token: string): Promise<void> {
  const { db, clock } = deps;
  const now = clock();
  await withinDeadline(
    "Firestore",
    db.runTransaction(async (tx) => {
      const { hash, record } = await openInvitation(deps, tx, token);
      const { business } = await readBusiness(deps, tx, record.businessId);
      const invitation = findPending(business, record.invitationId, hash, now);
      businessStore(db).deleteInvitations(tx, record.businessId, [invitation.id]);
      invitationTokenStore(db).deleteIn(tx, [hash]);
      auditLog(db).record(tx, actor, { action: "business.invitation.decline", target: record.businessId, details: { invitationId: invitation.id, email: invitation.email } }, now);
    }),
  );
}

/** "a***@example.com": enough to recognise one's own address, not to learn someone else's. */
export function emailHint(email: string): string {
  const at = email.lastIndexOf("@");
  return `${email.slice(0, Math.min(1, at))}***${email.slice(at)}`;
}


function invitationEmail(businessName: string, invitation: InvitationRecord, acceptUrl: string) {
  const who = invitation.invitedByName ?? "A member";
  const what = `${invitation.role === "admin" ? "an admin" : "a member"}${invitation.seat ? " with a seat" : ""}`;
  const expires = invitation.expiresAt.toISOString().slice(0, 10);
  return {
    to: invitation.email,
    subject: `${who} invited you to ${businessName} on the Marketplace`,
    text: `${who} invited you to join ${businessName} as ${what}.\n\nAccept or decline: ${acceptUrl}\n\nThe link works once and expires on ${expires}. If you did not expect it, ignore this email.\n`,
    html:
      `<p>${escapeHtml(who)} invited you to join <strong>${escapeHtml(businessName)}</strong> as ${what}.</p>` +
      `<p><a href="${escapeHtml(acceptUrl)}">Accept or decline the invitation</a></p>` +
      `<p>The link works once and expires on ${expires}. If you did not expect it, ignore this email.</p>`,
  };
}
