import { dataOf, type Schemas } from "../api";
import { formatDate } from "../format";
import type { PanelActions } from "./panel-actions";

/** A business's plan and seats, and for its owners, buying seats and the billing portal (§17). */
export function PlanSection({ business, actions }: { business: Schemas["Business"]; actions: PanelActions }) {
  const { api, businessId, run } = actions;
  const { subscription } = business;
  const owns = business.role === "owner";
  const path = { businessId };
  const buySeats = (event: Event) => {
    event.preventDefault();
    const seats = Number(new FormData(event.currentTarget as HTMLFormElement).get("seats"));
    return run(async () => {
      location.assign((await dataOf(api.POST("/businesses/{businessId}/billing/checkout", { params: { path }, body: { plan: "team", seats } }))).url);
      return "Opening the checkout…";
    });
  };
  const manageBilling = () =>
    run(async () => {
      location.assign((await dataOf(api.POST("/businesses/{businessId}/billing/portal", { params: { path } }))).url);
      return "Opening the billing portal…";
    });
  const live = ["active", "trialing", "past_due"].includes(subscription.status);

  return (
    <>
      <p>
        You are {business.role === "admin" ? "an admin" : `the ${business.role === "owner" ? "owner" : "member"}`} {business.seat ? "with a seat" : "without a seat"}.{" "}
        {subscription.status === "none" ? (
          "No subscription yet."
        ) : (
          <>
            Plan <strong>{subscription.plan}</strong>, <span class={`badge ${live ? "ok" : "warn"}`}>{subscription.status.replace("_", " ")}</span>, seats used{" "}
            <strong>
              {subscription.seatsUsed} of {subscription.seats ?? "any number"}
            </strong>
            {subscription.currentPeriodEnd && (live ? (subscription.cancelAtPeriodEnd ? <>, ends {formatDate(subscription.currentPeriodEnd)}</> : <>, renews {formatDate(subscription.currentPeriodEnd)}</>) : <>, ended on {formatDate(subscription.currentPeriodEnd)}</>)}.
          </>
        )}
      </p>
      {owns && (
        <div class="button-row">
          {!live && (
            <form class="inline-form" onSubmit={buySeats}>
              <label for={`seats-${businessId}`}>Seats</label>
              <input id={`seats-${businessId}`} name="seats" type="number" min={Math.max(1, subscription.seatsUsed)} max={10000} defaultValue={String(Math.max(1, subscription.seatsUsed))} required />
              <button type="submit">Buy seats</button>
            </form>
          )}
          {business.billingAccount ? (
            <button type="button" class="secondary" onClick={() => void manageBilling()}>
              {live ? "Change seats" : "Billing history"}
            </button>
          ) : (
            subscription.status !== "none" && <span class="muted">This plan is managed by the marketplace's operators: ask them to change it.</span>
          )}
        </div>
      )}
    </>
  );
}
