import type { Transaction } from "firebase-admin/firestore";
import type Stripe from "stripe";
import type { z } from "zod";
import type { DeveloperAccount } from "../core/auth";
import { auditLog, type Actor } from "../core/audit-log";
import { withinDeadline } from "../core/deadline";
import { ApiError } from "../core/errors";
import { callStripe, stripeClient } from "../core/stripe";
import type { Deps } from "../deps";
import { siteUrl } from "../businesses/invitations";
import { payoutAccountStore, type PayoutAccountRecord } from "./payout-account-store";
import { accountObject } from "./stripe-objects";

/**
 * A publisher's payouts account (contract §20): a Stripe connected account whose dashboard is
 * Stripe's Express one, whose fees the platform pays and whose payment losses the platform bears,
 * able to receive transfers. Onboarding happens on Stripe's pages; `account.updated` (fulfilment.ts)
 * tells what it may do.
 */

const view = (account: PayoutAccountRecord) => ({
  accountId: account.accountId,
  chargesEnabled: account.chargesEnabled,
  payoutsEnabled: account.payoutsEnabled,
  requirementsDue: account.requirementsDue,
});

/**
 * GET /developers/payouts. While the account cannot take charges yet, Stripe is asked for its
 * current state (a publisher just back from onboarding must not wait for `account.updated`) and
 * what it says is recorded; should Stripe not answer, the recorded state is answered and the
 * event brings the rest.
 */
export async function getPayoutAccount(deps: Deps, developer: DeveloperAccount, actor: Actor) {
  const { db, config, logger, clock } = deps;
  const accounts = payoutAccountStore(db);
  const stored = await accounts.get(developer.publisherId);
  if (!stored) throw new ApiError("payouts_account_not_found", "This publisher has no payouts account yet: POST /developers/payouts/account sets one up.");
  if (stored.chargesEnabled || !config.billing.stripeSecretKey) return view(stored);
  const readAt = clock();
  let current: Stripe.Account;
  try {
    const stripe = await stripeClient(config.billing, config.deadlines.callMs);
    current = await callStripe(logger, "accounts.retrieve", () => stripe.accounts.retrieve(stored.accountId));
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return view(stored);
  }
  const parsed = accountObject.safeParse(current);
  if (!parsed.success) return view(stored);
  const account = parsed.data;
  if (JSON.stringify(stateOf(account)) === JSON.stringify(view(stored))) return view(stored);
  const recorded = await withinDeadline(
    "Firestore (payouts account)",
    db.runTransaction(async (tx) => {
      const latest = accounts.read(await tx.get(accounts.ref(developer.publisherId)));
      if (!latest) return stored;
      return recordAccountState(tx, deps, latest, account, readAt, actor, clock()) ?? latest;
    }),
  );
  return view(recorded);
}

/** What Stripe's account says the publisher may do, in the answer's order and names. */
const stateOf = (account: z.output<typeof accountObject>) => ({
  accountId: account.id,
  chargesEnabled: account.charges_enabled ?? false,
  payoutsEnabled: account.payouts_enabled ?? false,
  requirementsDue: account.requirements?.currently_due ?? [],
});

/**
 * Records what Stripe says of a connected account as of `seenAt` (an event's creation, or when it
 * was read), unless something newer was recorded already: Stripe does not deliver in order.
 * Returns the record written, or null when nothing was.
 */
export function recordAccountState(tx: Transaction, deps: Deps, stored: PayoutAccountRecord, account: z.output<typeof accountObject>, seenAt: Date, actor: Actor, now: Date): PayoutAccountRecord | null {
  if (stored.accountId !== account.id) return null;
  if (stored.stripeEventCreated && seenAt < stored.stripeEventCreated) return null;
  const next = { ...stored, ...stateOf(account), stripeEventCreated: seenAt, updatedAt: now };
  payoutAccountStore(deps.db).setIn(tx, next);
  auditLog(deps.db).record(tx, actor, { action: "payouts.account.updated", target: stored.publisherId, details: { accountId: account.id, chargesEnabled: next.chargesEnabled, payoutsEnabled: next.payoutsEnabled, requirementsDue: next.requirementsDue } }, now);
  return next;
}

/**
 * POST /developers/payouts/account: the publisher's account, created on the first call, and a
 * fresh onboarding link every time. The account is recorded only once Stripe has answered both
 * calls, so a failure records nothing; the next call gets the same account back from Stripe (its
 * idempotency key is the publisher's), as do two first calls at once.
 */
export async function openPayoutAccount(deps: Deps, developer: DeveloperAccount, actor: Actor) {
  const { db, config, logger } = deps;
  const accounts = payoutAccountStore(db);
  const stripe = await stripeClient(config.billing, config.deadlines.callMs);
  const stored = await accounts.get(developer.publisherId);
  const created = stored
    ? null
    : await callStripe(logger, "accounts.create", () =>
        stripe.accounts.create(
          {
            controller: { stripe_dashboard: { type: "express" }, fees: { payer: "application" }, losses: { payments: "application" } },
            capabilities: { transfers: { requested: true } },
            ...(developer.email ? { email: developer.email } : {}),
            metadata: { publisherId: developer.publisherId },
          },
          { idempotencyKey: `payouts-account-${developer.publisherId}` },
        ),
      );
  const accountId = stored?.accountId ?? created!.id;
  const portal = `${siteUrl(config.publicBaseUrl)}/publisher?payouts=`;
  const link = await callStripe(logger, "accountLinks.create", () =>
    stripe.accountLinks.create({ account: accountId, type: "account_onboarding", refresh_url: `${portal}refresh`, return_url: `${portal}return` }),
  );
  const account = stored ?? (await recordAccount(deps, developer, actor, created!, link.url));
  return { ...view(account), onboardingUrl: link.url };
}

/** Records a new connected account with its audit entry, unless a concurrent first call recorded it first. */
function recordAccount(deps: Deps, developer: DeveloperAccount, actor: Actor, created: Stripe.Account, onboardingUrl: string): Promise<PayoutAccountRecord> {
  const { db, clock } = deps;
  const accounts = payoutAccountStore(db);
  const now = clock();
  return withinDeadline(
    "Firestore (payouts account)",
    db.runTransaction(async (tx) => {
      const stored = accounts.read(await tx.get(accounts.ref(developer.publisherId)));
      if (stored) return stored;
      const record: PayoutAccountRecord = {
        publisherId: developer.publisherId,
        accountId: created.id,
        developerId: developer.id,
        chargesEnabled: created.charges_enabled ?? false,
        payoutsEnabled: created.payouts_enabled ?? false,
        requirementsDue: created.requirements?.currently_due ?? [],
        stripeEventCreated: null,
        createdAt: now,
        updatedAt: now,
      };
      accounts.setIn(tx, record);
      const answer = { ...view(record), onboardingUrl };
      auditLog(db).record(tx, actor, { action: "payouts.account.created", target: developer.publisherId, details: { accountId: created.id }, answer }, now);
      return record;
    }),
  );
}
