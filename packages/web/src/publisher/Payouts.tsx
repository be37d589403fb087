import { useEffect, useState } from "preact/hooks";
import { dataOf, dataUnless, type Schemas, type SignedInApi } from "../api";
import { formatMoney, formatPrice, utcDay } from "../format";
import { ErrorMessage, Loading, StatusMessage } from "../ui/messages";
import { useAction } from "../ui/use-action";
import { Trader } from "./Trader";

type DeveloperModule = Schemas["DeveloperModules"]["items"][number];
type Account = Schemas["PayoutAccount"];

const CURRENCIES = ["usd", "eur", "gbp"];

/**
 * Selling modules (§20): the payouts account (set up, continue onboarding, what Stripe still
 * needs), a price per module, and earnings per module and currency.
 */
export function Payouts({ api, modules, reloadModules }: { api: SignedInApi; modules: DeveloperModule[]; reloadModules: () => Promise<void> }) {
  const [account, setAccount] = useState<Account | null | undefined>(undefined);
  const [declaration, setDeclaration] = useState<Schemas["TraderDeclaration"] | null | undefined>(undefined);
  const { error, status, run, setError } = useAction();
  useEffect(() => {
    dataUnless("payouts_account_not_found", api.GET("/developers/payouts")).then(setAccount, setError);
    dataUnless("trader_declaration_not_found", api.GET("/developers/trader")).then(setDeclaration, setError);
  }, [api]);

  const onboard = () =>
    run(async () => {
      const opened = await dataOf(api.POST("/developers/payouts/account"));
      // Null only in a replay under an Idempotency-Key, which this page never sends.
      if (!opened.onboardingUrl) return "Stripe's onboarding link was already used: try again.";
      location.assign(opened.onboardingUrl);
      return "Opening Stripe…";
    });

  return (
    <section aria-labelledby="payouts-heading" class="panel">
      <h2 id="payouts-heading">Payouts and pricing</h2>
      {account === undefined && !error && <Loading what="your payouts account" />}
      {account === null && (
        <>
          <p>Sell your modules: Stripe pays you what buyers pay, less the marketplace's fee. Set up a payouts account with Stripe first.</p>
          <button type="button" onClick={() => void onboard()}>
            Set up payouts
          </button>
        </>
      )}
      {account && (
        <>
          <p>
            Stripe account <code>{account.accountId}</code>: {account.chargesEnabled ? <span class="badge ok">Can sell</span> : <span class="badge warn">Cannot sell yet</span>}{" "}
            {account.payoutsEnabled ? <span class="badge ok">Payouts on</span> : <span class="badge warn">Payouts off</span>}
          </p>
          {account.requirementsDue.length > 0 && (
            <>
              <p class="payouts-due">Stripe still needs: {account.requirementsDue.join(", ")}.</p>
              <button type="button" onClick={() => void onboard()}>
                Continue onboarding
              </button>
            </>
          )}
        </>
      )}
      <ErrorMessage error={error} />
      <StatusMessage>{status}</StatusMessage>
      {declaration !== undefined && <Trader api={api} declaration={declaration} onDeclared={setDeclaration} />}
      {account?.chargesEnabled && modules.length > 0 && declaration?.trader && <Pricing api={api} modules={modules} reload={reloadModules} />}
      {account?.chargesEnabled && modules.length > 0 && declaration !== undefined && !declaration?.trader && <p class="muted">Declare yourself a trader above to set prices.</p>}
      {account && <Earnings api={api} />}
    </section>
  );
}

function Pricing({ api, modules, reload }: { api: SignedInApi; modules: DeveloperModule[]; reload: () => Promise<void> }) {
  const [moduleId, setModuleId] = useState(modules[0].id);
  const [model, setModel] = useState<"one_time" | "subscription">("one_time");
  const { error, status, run } = useAction();
  const module = modules.find((item) => item.id === moduleId) ?? modules[0];
  const path = { params: { path: { id: module.id } } };

  const save = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const amount = Math.round(Number(form.get("amount")) * 100);
    return run(async () => {
      const body =
        model === "subscription"
          ? {
              model,
              amount,
              currency: String(form.get("currency")),
              interval: String(form.get("interval")) as "month" | "year",
              trialDays: Number(form.get("trialDays") || 0),
              perSeat: form.get("perSeat") === "on",
              fallback: form.get("fallback") === "on" ? ("perpetual" as const) : ("none" as const),
            }
          : { model, amount, currency: String(form.get("currency")), perSeat: form.get("perSeat") === "on", fallback: "none" as const };
      const priced = await dataOf(api.PUT("/developers/modules/{id}/pricing", { ...path, body }));
      await reload();
      return `${module.id} now costs ${formatPrice(priced)}.`;
    });
  };
  const makeFree = () =>
    run(async () => {
      await dataOf(api.DELETE("/developers/modules/{id}/pricing", path));
      await reload();
      return `${module.id} is free from now on.`;
    });

  return (
    <div role="region" aria-labelledby="pricing-heading">
      <h3 id="pricing-heading">Prices</h3>
      <ul class="plain-list">
        {modules.map((item) => (
          <li key={item.id}>
            <code>{item.id}</code>
            <span>{item.price ? formatPrice(item.price) : "Free"}</span>
          </li>
        ))}
      </ul>
      <form class="grid-form" onSubmit={save}>
        <div class="field">
          <label for="pricing-module">Module</label>
          <select id="pricing-module" value={module.id} onChange={(event) => setModuleId(event.currentTarget.value)}>
            {modules.map((item) => (
              <option value={item.id} key={item.id}>
                {item.id}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="pricing-model">Sold as</label>
          <select id="pricing-model" value={model} onChange={(event) => setModel(event.currentTarget.value as typeof model)}>
            <option value="one_time">One-time purchase</option>
            <option value="subscription">Subscription</option>
          </select>
        </div>
        <div class="field">
          <label for="pricing-amount">Price</label>
          <input id="pricing-amount" name="amount" type="number" min={1} max={10000} step="0.01" required defaultValue="9.00" />
        </div>
        <div class="field">
          <label for="pricing-currency">Currency</label>
          <select id="pricing-currency" name="currency">
            {CURRENCIES.map((code) => (
              <option value={code} key={code}>
                {code.toUpperCase()}
              </option>
            ))}
          </select>
        </div>
        {model === "subscription" && (
          <>
            <div class="field">
              <label for="pricing-interval">Billed every</label>
              <select id="pricing-interval" name="interval">
                <option value="month">Month</option>
                <option value="year">Year</option>
              </select>
            </div>
            <div class="field">
              <label for="pricing-trial">Free trial (days)</label>
              <input id="pricing-trial" name="trialDays" type="number" min={0} max={30} defaultValue="0" />
            </div>
            <div class="field checkbox-field wide-field">
              <label>
                <input name="fallback" type="checkbox" aria-describedby="pricing-fallback-help" /> Perpetual fallback licence
              </label>
              <p id="pricing-fallback-help" class="muted">
                A buyer who paid a year (a yearly price, or 12 months in a row) keeps, when the subscription ends, the versions you had published by the start of that year and
                their later bug fixes (same major and minor version), for good. Buyers keep the promise they bought with, even if you change the price later.
              </p>
            </div>
          </>
        )}
        <div class="field checkbox-field">
          <label>
            <input name="perSeat" type="checkbox" /> Businesses buy seats
          </label>
        </div>
        <button type="submit">Save price</button>
        {module.price && (
          <button type="button" class="secondary" onClick={() => void makeFree()}>
            Make free
          </button>
        )}
      </form>
      <ErrorMessage error={error} />
      <StatusMessage>{status}</StatusMessage>
    </div>
  );
}

function Earnings({ api }: { api: SignedInApi }) {
  const [range, setRange] = useState({ from: utcDay(-29), to: utcDay() });
  const [earnings, setEarnings] = useState<Schemas["Earnings"] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    setError(null);
    dataOf(api.GET("/developers/earnings", { params: { query: range } })).then(setEarnings, setError);
  }, [api, range.from, range.to]);

  return (
    <div role="region" aria-labelledby="earnings-heading">
      <h3 id="earnings-heading">Earnings</h3>
      <form class="grid-form" onSubmit={(event) => event.preventDefault()}>
        <div class="field">
          <label for="earnings-from">From</label>
          <input id="earnings-from" type="date" value={range.from} max={range.to} onChange={(event) => setRange({ ...range, from: event.currentTarget.value })} />
        </div>
        <div class="field">
          <label for="earnings-to">To</label>
          <input id="earnings-to" type="date" value={range.to} min={range.from} onChange={(event) => setRange({ ...range, to: event.currentTarget.value })} />
        </div>
      </form>
      <ErrorMessage error={error} />
      {earnings && earnings.modules.length === 0 && <p class="muted">No sales in these days.</p>}
      {earnings && earnings.modules.length > 0 && (
        <div class="table-scroll" tabIndex={0} role="region" aria-labelledby="earnings-heading">
          <table class="stacked">
            <thead>
              <tr>
                <th scope="col">Module</th>
                <th scope="col">Sales</th>
                <th scope="col">Gross</th>
                <th scope="col">Fees</th>
                <th scope="col">Refunds</th>
                <th scope="col">Net</th>
              </tr>
            </thead>
            <tbody>
              {earnings.modules.map((row) => (
                <FiguresRow key={`${row.moduleId} ${row.currency}`} label={row.moduleId} figures={row} />
              ))}
              {earnings.totals.map((row) => (
                <FiguresRow key={`total ${row.currency}`} label={`All modules (${row.currency.toUpperCase()})`} figures={row} total />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

function FiguresRow({ label, figures, total = false }: { label: string; figures: Schemas["Earnings"]["totals"][number]; total?: boolean }) {
  const money = (minor: number) => formatMoney(minor, figures.currency);
  return (
    <tr class={total ? "total-row" : undefined}>
      <th scope="row" data-label="Module">{label}</th>
      <td data-label="Sales">{figures.sales}</td>
      <td data-label="Gross">{money(figures.gross)}</td>
      <td data-label="Fees">{money(figures.fees)}</td>
      <td data-label="Refunds">{money(figures.refunds)}</td>
      <td data-label="Net">{money(figures.net)}</td>
    </tr>
  );
}
