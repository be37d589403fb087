import { useState } from "preact/hooks";
import { dataOf, type Schemas, type SignedInApi } from "../api";
import { formatDate } from "../format";
import { ErrorMessage, StatusMessage } from "../ui/messages";
import { useAction } from "../ui/use-action";

type Declaration = Schemas["TraderDeclaration"];

/**
 * Who sells (§30, the DSA's Art. 30): the trader declaration a price needs, shown to buyers on a
 * paid module's page. `declaration` is null before the first one.
 */
export function Trader({ api, declaration, onDeclared }: { api: SignedInApi; declaration: Declaration | null; onDeclared: (declaration: Declaration) => void }) {
  const [trader, setTrader] = useState(declaration?.trader ?? true);
  const { error, status, run } = useAction();
  const current = declaration?.trader ? declaration : null;

  const save = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const text = (name: string) => String(form.get(name) ?? "").trim();
    const optional = (name: string) => text(name) || undefined;
    return run(async () => {
      const body: Schemas["TraderDeclarationInput"] = trader
        ? { trader: true, name: text("name"), address: text("address"), email: text("email"), phone: text("phone"), tradeRegister: optional("tradeRegister"), registrationNumber: optional("registrationNumber"), selfCertification: true }
        : { trader: false };
      onDeclared(await dataOf(api.PUT("/developers/trader", { body })));
      return "Declaration saved.";
    });
  };

  return (
    <form class="stacked trader-form" aria-labelledby="trader-heading" onSubmit={save}>
      <h3 id="trader-heading">Who sells</h3>
      <p class="muted">
        The EU's Digital Services Act asks who sells: buyers see your name, address, email and phone on your paid modules' pages. {declaration && `Declared ${formatDate(declaration.updatedAt)}.`}
      </p>
      <fieldset>
        <legend>I sell</legend>
        <label>
          <input type="radio" name="trader" checked={trader} onChange={() => setTrader(true)} /> as a trader (a business, or a person selling as one)
        </label>
        <label>
          <input type="radio" name="trader" checked={!trader} onChange={() => setTrader(false)} /> not at all: I publish free modules only
        </label>
      </fieldset>
      {trader && (
        <>
          <div class="field">
            <label for="trader-name">Legal name</label>
            <input id="trader-name" name="name" required maxLength={200} defaultValue={current?.name} autocomplete="organization" />
          </div>
          <div class="field">
            <label for="trader-address">Address</label>
            <input id="trader-address" name="address" required maxLength={500} defaultValue={current?.address} autocomplete="street-address" />
          </div>
          <div class="field">
            <label for="trader-email">Email</label>
            <input id="trader-email" name="email" type="email" required maxLength={254} defaultValue={current?.email} autocomplete="email" />
          </div>
          <div class="field">
            <label for="trader-phone">Phone</label>
            <input id="trader-phone" name="phone" type="tel" required maxLength={32} defaultValue={current?.phone} autocomplete="tel" />
          </div>
          <div class="field">
            <label for="trader-register">Trade register (optional)</label>
            <input id="trader-register" name="tradeRegister" maxLength={200} defaultValue={current?.tradeRegister ?? ""} />
          </div>
          <div class="field">
            <label for="trader-number">Registration number (optional)</label>
            <input id="trader-number" name="registrationNumber" maxLength={100} defaultValue={current?.registrationNumber ?? ""} />
          </div>
          <label class="checkbox">
            <input type="checkbox" name="selfCertification" required /> I offer only products and services that comply with EU law.
          </label>
        </>
      )}
      <button type="submit">Save declaration</button>
      <ErrorMessage error={error} />
      <StatusMessage>{status}</StatusMessage>
    </form>
  );
}
