import type { DeveloperAccount } from "../core/auth";
import { auditLog, type Actor } from "../core/audit-log";
import { withinDeadline } from "../core/deadline";
import { ApiError } from "../core/errors";
import { callStripe, stripeClient } from "../core/stripe";
import type { Deps } from "../deps";
import { siteUrl } from "../businesses/invitations";
import { payoutAccountStore, type PayoutAccountRecord } from "./payout-account-store";

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

/** GET /developers/payouts. */
export async function getPayoutAccount({ db }: Deps, developer: DeveloperAccount) {
  const account = await payoutAccountStore(db).get(developer.publisherId);
  if (!account) throw new ApiError("payouts_account_not_found", "This publisher has no payouts account yet: POST /developers/payouts/account sets one up.");
  return view(account);
}

/**
 * POST /developers/payouts/account: the publisher's account, created on the first call (with a
 * Stripe idempotency key of the publisher, so two first calls at once create one account), and a
 * fresh onboarding link every time.
 */
export async function openPayoutAccount(deps: Deps, developer: DeveloperAccount, actor: Actor) {
  const { db, config, logger, clock } = deps;
  const accounts = payoutAccountStore(db);
  const stripe = await stripeClient(config.billing, config.deadlines.callMs);
  let account = await accounts.get(developer.publisherId);
  if (!account) {
    const created = await callStripe(logger, "accounts.create", () =>
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
    const now = clock();
    account = await withinDeadline(
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
        auditLog(db).record(tx, actor, { action: "payouts.account.created", target: developer.publisherId, details: { accountId: created.id } }, now);
        return record;
      }),
    );
  }
  const portal = `${siteUrl(config.publicBaseUrl)}/publisher?payouts=`;
  const accountId = account.accountId;
  const link = await callStripe(logger, "accountLinks.create", () =>
    stripe.accountLinks.create({ account: accountId, type: "account_onboarding", refresh_url: `${portal}refresh`, return_url: `${portal}return` }),
  );
  return { ...view(account), onboardingUrl: link.url };
}
