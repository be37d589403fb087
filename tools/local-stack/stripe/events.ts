import { createHmac } from "node:crypto";
import { id, nowSeconds, type StripeObject } from "./objects";

export interface StripeEvent {
  id: string;
  type: string;
  data: { object: Record<string, unknown> };
}

/**
 * Where events go, and the secrets that sign them (STRIPE_WEBHOOK_SECRET): as Stripe's two
 * endpoints do, connected accounts' events (those carrying `account`) are signed with the Connect
 * endpoint's own secret, the others with the platform endpoint's.
 */
export interface WebhookTarget {
  url: string;
  secret: string;
  connectSecret: string;
}

/** Stripe's events: made, kept in order, signed as Stripe signs them and sent to the webhook (or held back until released). */
export class EventSender {
  readonly events: StripeEvent[] = [];
  private held: (() => Promise<void>)[] | null = null;

  constructor(private readonly webhook: WebhookTarget | undefined) {}

  /** Makes an event of `object` as it is now and sends it; throws unless the webhook accepts it. */
  async send(type: string, object: StripeObject, account?: string): Promise<void> {
    const event = { id: id("evt"), object: "event", type, created: nowSeconds(), ...(account ? { account } : {}), data: { object: structuredClone(object) } };
    this.events.push(event);
    if (this.held) this.held.push(() => this.deliver(event, account));
    else await this.deliver(event, account);
  }

  /** Keeps the events made from now on (as a slow or failing delivery would) until the returned function sends them, in order. */
  hold(): () => Promise<void> {
    const waiting = (this.held ??= []);
    return async () => {
      if (this.held === waiting) this.held = null;
      for (const send of waiting.splice(0)) await send();
    };
  }

  private async deliver(event: StripeEvent, account?: string): Promise<void> {
    if (!this.webhook) return;
    const payload = JSON.stringify(event);
    const timestamp = nowSeconds();
    const secret = account ? this.webhook.connectSecret : this.webhook.secret;
    const signature = createHmac("sha256", secret).update(`${timestamp}.${payload}`).digest("hex");
    const answer = await fetch(this.webhook.url, { method: "POST", headers: { "Content-Type": "application/json", "Stripe-Signature": `t=${timestamp},v1=${signature}` }, body: payload });
    if (!answer.ok) throw new Error(`the webhook answered ${answer.status} to ${event.type}: ${await answer.text()}`);
  }
}
