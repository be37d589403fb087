import { useEffect, useState } from "preact/hooks";
import { formatDate } from "../format";
import { useConfirm } from "../ui/confirm";
import { CopyButton } from "../ui/CopyButton";
import { ErrorMessage, RetryableError, StatusMessage } from "../ui/messages";
import { useAction } from "../ui/use-action";
import { eventTypes, type Delivery, type EventType, type Webhook, type WebhookApi } from "./webhook-api";

/**
 * An owner's webhook endpoints (§21), on `/account` for a business and in the publisher portal:
 * add one with the event types to tick, its secret shown once with a copy button, send a test,
 * rotate, disable, delete (each asked first when it destroys), and the deliveries with their
 * attempts and a Redeliver button.
 */
export function WebhooksPanel({ webhooks, headingId, nested = false }: { webhooks: WebhookApi; headingId: string; nested?: boolean }) {
  const Heading = nested ? "h3" : "h2";
  const Subheading = nested ? "h4" : "h3";
  const [endpoints, setEndpoints] = useState<Webhook[] | null>(null);
  const [types, setTypes] = useState<EventType[]>([]);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [secret, setSecret] = useState<{ url: string; value: string } | null>(null);
  const { error, status, run } = useAction();
  const load = () => {
    setLoadError(null);
    Promise.all([webhooks.list(), eventTypes()]).then(([listed, all]) => {
      setEndpoints(listed);
      setTypes(all.filter((type) => type.owner === webhooks.owner || type.owner === "any"));
    }, setLoadError);
  };
  useEffect(load, [webhooks]);

  const create = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    const chosen = data.getAll("events").map(String);
    return run(async () => {
      const created = await webhooks.create({ url: String(data.get("url") ?? "").trim(), events: chosen.length > 0 ? chosen : ["*"], ...(data.get("description") ? { description: String(data.get("description")) } : {}) });
      setSecret({ url: created.url, value: created.secret });
      form.reset();
      setEndpoints(await webhooks.list());
      return `Added ${created.url}. Copy its secret now: it is not shown again.`;
    });
  };

  return (
    <section aria-labelledby={headingId} class={nested ? "webhooks" : "panel webhooks"}>
      <Heading id={headingId}>Webhooks</Heading>
      <p class="muted">
        Signed HTTP calls to your systems when something changes, in the Standard Webhooks format: verify them with its libraries (see the <a href="/docs">API reference</a>).
      </p>
      {loadError ? <RetryableError error={loadError} what="the webhooks" retry={load} /> : null}
      {secret && (
        <div class="message status secret-once" role="status">
          <p>
            Secret of {secret.url}, shown only now: <code class="wrap">{secret.value}</code> <CopyButton text={secret.value} label="the webhook secret" />
          </p>
          <button type="button" class="link-button" onClick={() => setSecret(null)}>
            I have stored it
          </button>
        </div>
      )}
      {endpoints && endpoints.length === 0 && <p>No endpoints yet.</p>}
      <ul class="plain-list endpoints">
        {endpoints?.map((endpoint) => (
          <li key={endpoint.id}>
            <Endpoint endpoint={endpoint} webhooks={webhooks} onChange={(changed) => setEndpoints((all) => (all ?? []).flatMap((item) => (item.id !== endpoint.id ? [item] : changed ? [changed] : [])))} onSecret={(value) => setSecret({ url: endpoint.url, value })} />
          </li>
        ))}
      </ul>
      <Subheading>Add an endpoint</Subheading>
      <form class="stacked" onSubmit={create}>
        <div class="field">
          <label for={`${headingId}-url`}>URL (https)</label>
          <input id={`${headingId}-url`} name="url" type="url" required maxLength={2000} placeholder="https://hooks.example.com/marketplace" />
        </div>
        <fieldset class="event-types">
          <legend>Events (none ticked: all of them)</legend>
          {types.map((type) => (
            <label key={type.type} title={type.description}>
              <input type="checkbox" name="events" value={type.type} /> <code>{type.type}</code>
            </label>
          ))}
        </fieldset>
        <div class="field">
          <label for={`${headingId}-description`}>Description (optional)</label>
          <input id={`${headingId}-description`} name="description" maxLength={500} />
        </div>
        <p class="button-row">
          <button type="submit">Add endpoint</button>
        </p>
      </form>
      <ErrorMessage error={error} />
      <StatusMessage>{status}</StatusMessage>
    </section>
  );
}

function Endpoint({ endpoint, webhooks, onChange, onSecret }: { endpoint: Webhook; webhooks: WebhookApi; onChange: (changed: Webhook | null) => void; onSecret: (secret: string) => void }) {
  const [deliveries, setDeliveries] = useState<Delivery[] | null>(null);
  const { error, status, run } = useAction();
  const { confirm, dialog } = useConfirm();
  const showDeliveries = () => run(async () => (setDeliveries(await webhooks.deliveries(endpoint.id)), ""));
  const test = () =>
    run(async () => {
      await webhooks.test(endpoint.id);
      setTimeout(() => void showDeliveries(), 1_500);
      return "Test message queued.";
    });
  const toggle = () => run(async () => (onChange(await webhooks.update(endpoint.id, { disabled: !endpoint.disabled })), endpoint.disabled ? "Enabled." : "Disabled."));
  const rotate = async () => {
    if (!(await confirm({ title: `Rotate the secret of ${endpoint.url}?`, detail: "A new secret signs from now on; the current one keeps signing beside it for 24 hours only.", action: "Rotate secret" }))) return;
    await run(async () => (onSecret(await webhooks.rotate(endpoint.id)), "New secret made: copy it above."));
  };
  const remove = async () => {
    if (!(await confirm({ title: `Delete the endpoint ${endpoint.url}?`, detail: "Nothing more is sent to it, and its deliveries are no longer listed.", action: "Delete endpoint" }))) return;
    await run(async () => (await webhooks.remove(endpoint.id), onChange(null), ""));
  };
  const redeliver = (delivery: Delivery) =>
    run(async () => {
      await webhooks.redeliver(endpoint.id, delivery.id);
      setTimeout(() => void showDeliveries(), 1_500);
      return `${delivery.type} queued again.`;
    });
  return (
    <article class="endpoint">
      <p>
        <code class="wrap">{endpoint.url}</code> <span class={`badge ${endpoint.disabled ? "warn" : "ok"}`}>{endpoint.disabled ? "Disabled" : "Enabled"}</span>
      </p>
      {endpoint.disabledReason && <p class="muted">{endpoint.disabledReason}</p>}
      {endpoint.description && <p>{endpoint.description}</p>}
      <p class="muted">Events: {endpoint.events.includes("*") ? "all" : endpoint.events.join(", ")}</p>
      <div class="button-row">
        <button type="button" class="secondary" onClick={() => void test()} disabled={endpoint.disabled} aria-describedby={endpoint.disabled ? `disabled-${endpoint.id}` : undefined}>
          Send a test
        </button>
        <button type="button" class="secondary" onClick={() => void showDeliveries()}>
          Deliveries
        </button>
        <button type="button" class="secondary" onClick={() => void toggle()}>
          {endpoint.disabled ? "Enable" : "Disable"}
        </button>
        <button type="button" class="secondary" onClick={() => void rotate()}>
          Rotate secret
        </button>
        <button type="button" class="danger" onClick={() => void remove()}>
          Delete<span class="visually-hidden"> {endpoint.url}</span>
        </button>
      </div>
      {endpoint.disabled && (
        <p class="reason" id={`disabled-${endpoint.id}`}>
          Enable it to send a test.
        </p>
      )}
      <ErrorMessage error={error} />
      <StatusMessage>{status}</StatusMessage>
      {deliveries && deliveries.length === 0 && <p class="muted">No messages in the last 30 days.</p>}
      {deliveries && deliveries.length > 0 && (
        <ul class="plain-list deliveries">
          {deliveries.map((delivery) => {
            const last = delivery.attempts.at(-1);
            return (
              <li key={delivery.id}>
                <code>{delivery.type}</code> · {formatDate(delivery.createdAt)} · <span class={`badge ${delivery.status === "succeeded" ? "ok" : delivery.status === "failed" ? "danger" : "warn"}`}>{delivery.status}</span>
                <div class="muted">
                  {delivery.attempts.length} attempt{delivery.attempts.length === 1 ? "" : "s"}
                  {last && `, last ${last.statusCode ?? "no answer"}${last.error ? ` (${last.error})` : ""}`}
                  {delivery.nextAttemptAt && `, next ${formatDate(delivery.nextAttemptAt)}`} · <code>{delivery.id}</code>
                </div>
                <button type="button" class="link-button" onClick={() => void redeliver(delivery)}>
                  Redeliver<span class="visually-hidden"> {delivery.id}</span>
                </button>
              </li>
            );
          })}
        </ul>
      )}
      {dialog}
    </article>
  );
}
