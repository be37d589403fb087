import type { Schemas } from "../api";
import { formatDate } from "../format";

type Purchase = Schemas["PurchaseSummary"];

const GRANTING = new Set(["active", "trialing", "past_due"]);

/**
 * `/account`'s modules bought (§20, §27): what each purchase gives now, and for a subscription that
 * ended with a perpetual fallback, the versions that stay the user's, with Renew on the module's
 * page (where checkout is).
 */
export function LicencesSection({ purchases }: { purchases: Purchase[] }) {
  if (purchases.length === 0) return null;
  return (
    <section aria-labelledby="licences-heading" class="panel">
      <h2 id="licences-heading">Your modules</h2>
      <ul class="plain-list licences">
        {purchases.map((purchase) => (
          <li key={purchase.id}>
            <a href={`/modules/${purchase.moduleId}`}>
              <code>{purchase.moduleId}</code>
            </a>
            <span>{standing(purchase)}</span>
            {!GRANTING.has(purchase.status) && purchase.model === "subscription" && (
              <a class="button secondary" href={`/modules/${purchase.moduleId}`} aria-label={`Renew ${purchase.moduleId}`}>
                Renew
              </a>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

function standing(purchase: Purchase): string {
  const through = purchase.businessId ? ` through ${purchase.businessId}` : "";
  if (GRANTING.has(purchase.status)) {
    if (purchase.model === "one_time") return `Owned${through}`;
    const ends = purchase.currentPeriodEnd ? `, ${purchase.status === "trialing" ? "trial until" : "renews or ends"} ${formatDate(purchase.currentPeriodEnd)}` : "";
    const kept = purchase.fallbackIfEnded?.fallbackVersion ? `; versions up to ${purchase.fallbackIfEnded.fallbackVersion} stay yours if it ends` : "";
    return `Subscribed${through}${ends}${kept}`;
  }
  if (purchase.fallbackVersion) return `Yours to keep: versions up to ${purchase.fallbackVersion}${through}`;
  return `Ended (${purchase.status.replace("_", " ")})${through}`;
}
