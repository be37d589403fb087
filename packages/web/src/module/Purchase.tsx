import type { User } from "@firebase/auth";
import { useEffect, useMemo, useState } from "preact/hooks";
import { dataOf, signedInApi, type Schemas, type SignedInApi } from "../api";
import { formatDate, formatPrice } from "../format";
import { ErrorMessage, StatusMessage } from "../ui/messages";
import { signInReturningTo } from "../ui/sign-in-link";
import { useAction } from "../ui/use-action";

type Price = NonNullable<Schemas["ModulePage"]["price"]>;
type Profile = Schemas["UserProfile"];

const GRANTING = new Set(["active", "trialing", "past_due"]);

/**
 * What a priced module's page offers (§20): its price, and for a signed-in user "Owned", "Buy" or
 * "Start a N-day trial" (one trial per buyer), or, once a subscription with a perpetual fallback
 * ended, the versions that stay theirs and "Renew" (§27), and for owners and admins of a business, seats for
 * it when the module is sold per seat. Buying goes to Stripe Checkout; back here, the purchase
 * shows once Stripe's event has reached the service.
 */
export function Purchase({ moduleId, price }: { moduleId: string; price: Price }) {
  const [user, setUser] = useState<User | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const api = useMemo(() => (user ? signedInApi(() => user.getIdToken()) : null), [user]);
  useEffect(() => {
    let stop: (() => void) | undefined;
    import("../auth").then(({ watchUser }) => watchUser(setUser)).then((unsubscribe) => (stop = unsubscribe), setError);
    return () => stop?.();
  }, []);

  return (
    <section class="purchase panel" aria-labelledby="purchase-heading">
      <h2 id="purchase-heading" class="visually-hidden">
        Price
      </h2>
      <p class="price">
        <strong>{formatPrice(price)}</strong>
        {price.model === "subscription" && price.trialDays > 0 && <span class="muted"> · {price.trialDays}-day free trial</span>}
      </p>
      <ErrorMessage error={error} />
      {user === null && (
        <p>
          <a class="button" href={signInReturningTo(`/modules/${moduleId}`)}>
            {price.model === "subscription" && price.trialDays > 0 ? `Sign in to start a ${price.trialDays}-day trial` : "Sign in to buy"}
          </a>
        </p>
      )}
      {api && <Offers api={api} moduleId={moduleId} price={price} />}
    </section>
  );
}

function Offers({ api, moduleId, price }: { api: SignedInApi; moduleId: string; price: Price }) {
  const [profile, setProfile] = useState<Profile | null>(null);
  const { error, status, run, setError } = useAction();
  const returned = new URLSearchParams(location.search).get("checkout");

  useEffect(() => {
    let tries = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Back from a paid checkout, the purchase appears once Stripe's event has arrived: look a few times.
    const load = async () => {
      const me = await dataOf(api.GET("/users/me"));
      setProfile(me);
      tries += 1;
      if (returned === "success" && !owns(me, moduleId) && tries < 10) timer = setTimeout(() => void load().catch(setError), 1_000);
    };
    load().catch(setError);
    return () => clearTimeout(timer);
  }, [api, moduleId]);

  if (!profile) return <ErrorMessage error={error} />;
  const mine = profile.purchases.filter((purchase) => purchase.moduleId === moduleId);
  const owned = mine.find((purchase) => GRANTING.has(purchase.status));
  // Ended with a perpetual fallback (§27): the versions it keeps, and Renew for the newer ones.
  const kept = owned ? undefined : mine.find((purchase) => !GRANTING.has(purchase.status) && purchase.fallbackVersion);
  const trial = price.model === "subscription" && price.trialDays > 0 && !mine.some((purchase) => purchase.model === "subscription" && !purchase.businessId);
  const managed = profile.businesses.filter((business) => business.role !== "member");

  const checkout = (body: { businessId?: string; seats?: number }) =>
    run(async () => {
      const { url } = await dataOf(api.POST("/modules/{id}/checkout", { params: { path: { id: moduleId } }, body }));
      location.assign(url);
      return "Opening Stripe Checkout…";
    });
  const buySeats = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    return checkout({ businessId: String(form.get("businessId")), seats: Number(form.get("seats")) });
  };

  return (
    <>
      {returned === "success" && !owned && <StatusMessage>Payment received: your purchase is being confirmed…</StatusMessage>}
      {returned === "canceled" && <p class="muted">Checkout canceled: nothing was charged.</p>}
      {owned ? (
        <p>
          <span class="badge ok">Owned</span>{" "}
          {owned.businessId ? <>through {owned.businessId}</> : owned.status === "trialing" ? <>trial until {formatDate(owned.currentPeriodEnd)}</> : owned.currentPeriodEnd ? <>renews or ends {formatDate(owned.currentPeriodEnd)}</> : null}
        </p>
      ) : (
        <>
          {kept && (
            <p class="kept">
              <strong>Yours to keep:</strong> versions up to {kept.fallbackVersion}
              {kept.businessId ? <> through {kept.businessId}</> : null}. Renew for newer versions.
            </p>
          )}
          <p>
            <button type="button" onClick={() => void checkout({})}>
              {kept ? "Renew" : trial ? `Start a ${price.trialDays}-day trial` : "Buy"}
            </button>
          </p>
        </>
      )}
      {price.perSeat && managed.length > 0 && (
        <form class="grid-form seats-form" onSubmit={buySeats}>
          <div class="field">
            <label for="seats-business">For business</label>
            <select id="seats-business" name="businessId" required>
              {managed.map((business) => (
                <option value={business.id} key={business.id}>
                  {business.name}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="seats-count">Seats</label>
            <input id="seats-count" name="seats" type="number" min={1} max={10000} defaultValue="1" required />
          </div>
          <button type="submit" class="secondary">
            Buy seats
          </button>
        </form>
      )}
      {profile.purchases.length > 0 && (
        <p>
          <button type="button" class="link-button" onClick={() => void run(async () => (location.assign((await dataOf(api.POST("/users/me/billing/portal"))).url), "Opening the billing portal…"))}>
            Invoices and payment methods
          </button>
        </p>
      )}
      <ErrorMessage error={error} />
      <StatusMessage>{status}</StatusMessage>
    </>
  );
}

const owns = (profile: Profile, moduleId: string) => profile.purchases.some((purchase) => purchase.moduleId === moduleId && GRANTING.has(purchase.status));
