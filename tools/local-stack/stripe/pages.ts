import type { Metadata, StripeObject } from "./objects";

/** The HTML of the checkout, billing portal and onboarding pages: what a browser sees at the URLs the API handed out. */

const escape = (value: unknown) => String(value).replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

const page = (title: string, body: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escape(title)} (local Stripe)</title>
<style>body{font:16px system-ui;max-width:32rem;margin:2rem auto;padding:0 1rem}dt{font-weight:600}button{font:inherit;padding:.5rem 1rem}</style></head>
<body><main><h1>${escape(title)} (local Stripe)</h1>${body}</main></body></html>`;

const money = (amount: unknown, currency: unknown) => `${(Number(amount) / 100).toFixed(2)} ${String(currency).toUpperCase()}`;

export function checkoutPage(session: StripeObject, price: StripeObject): string {
  const [item] = session.line_items as { price: string; quantity: string; adjustable_quantity?: { minimum?: string; maximum?: string } }[];
  const payment = session.payment_intent_data as { application_fee_amount?: string; transfer_data?: { destination?: string }; metadata?: Metadata } | undefined;
  const subscription = session.subscription_data as { application_fee_percent?: string; transfer_data?: { destination?: string }; trial_period_days?: string; metadata?: Metadata } | undefined;
  const metadata: Metadata = payment?.metadata ?? subscription?.metadata ?? {};
  const who = typeof session.customer === "string" ? `customer ${session.customer}` : `new customer ${session.customer_email ?? ""}`;
  const rows: [string, unknown][] = [
    ["Price", `${item.price}: ${money(price.unit_amount, price.currency)}${price.recurring ? ` a ${(price.recurring as { interval: string }).interval}` : ""}`],
    [metadata.moduleId ? "Module" : "Business", metadata.moduleId ?? metadata.businessId ?? "?"],
    ...(metadata.businessId && metadata.moduleId ? [["For business", metadata.businessId] as [string, unknown]] : []),
    ["Billed to", who],
    ...(payment?.application_fee_amount ? [["Marketplace fee", money(payment.application_fee_amount, price.currency)] as [string, unknown]] : []),
    ...(subscription?.application_fee_percent ? [["Marketplace fee", `${subscription.application_fee_percent} %`] as [string, unknown]] : []),
    ...((payment ?? subscription)?.transfer_data?.destination ? [["Paid out to", (payment ?? subscription)!.transfer_data!.destination] as [string, unknown]] : []),
    ...(subscription?.trial_period_days ? [["Free trial", `${subscription.trial_period_days} days`] as [string, unknown]] : []),
  ];
  const adjustable = session.mode === "subscription" && !metadata.moduleId;
  return page(
    "Checkout",
    `<p>What the Marketplace API sent to Stripe:</p>
<dl>${rows.map(([term, value]) => `<dt>${escape(term)}</dt><dd>${escape(value)}</dd>`).join("")}</dl>
<form method="post" action="/checkout/${escape(session.id)}/pay"><label>${metadata.moduleId ? "Quantity" : "Seats"} <input name="quantity" type="number" value="${escape(item.quantity)}" min="${escape(item.adjustable_quantity?.minimum ?? 1)}" max="${escape(item.adjustable_quantity?.maximum ?? 10000)}"${adjustable ? "" : " readonly"}></label>
<p><button type="submit">Pay</button>${session.mode === "payment" ? ` <button type="submit" name="method" value="sepa_debit">Pay by SEPA debit (settles later)</button>` : ""} <a href="${escape(session.cancel_url)}">Cancel</a></p></form>${
      session.payment_status === "unpaid"
        ? `<form method="post" action="/checkout/${escape(session.id)}/settle"><p>The SEPA debit is pending. <button type="submit" name="outcome" value="succeeded">Settle as paid</button> <button type="submit" name="outcome" value="failed">Fail it</button></p></form>`
        : ""
    }`,
  );
}

export function portalPage(session: StripeObject): string {
  return page("Billing portal", `<p>Customer ${escape(session.customer)}.</p><p><a href="${escape(session.return_url)}">Return to the Marketplace</a></p>`);
}

export function onboardingPage(link: StripeObject, account: StripeObject): string {
  const due = (account.requirements as { currently_due: string[] }).currently_due;
  return page(
    "Payouts onboarding",
    `<p>Connected account ${escape(account.id)} of publisher ${escape((account.metadata as Metadata).publisherId ?? "?")}.</p>
<p>${due.length ? `Stripe still needs: ${due.map(escape).join(", ")}.` : "Nothing more is needed."}</p>
<form method="post" action="/onboarding/${escape(link.id)}/complete"><p><button type="submit">Complete onboarding</button> <a href="${escape(link.refresh_url)}">Leave</a></p></form>`,
  );
}
