/** `purchases`: module purchases and refunds through Stripe (§20). */
import type { Command } from "commander";
import { listPurchases, refundPurchase } from "../../../functions/src/payments/purchases";
import { UsageError, stderrLogger, refundStripe, type GlobalOptions, type Cli } from "../cli";

export function registerPurchaseCommands(program: Command, { action, io }: Cli): void {
  const purchases = program.command("purchases").description("module purchases (§20)");
  purchases
    .command("list")
    .description("purchases, newest first: of a module, of a buyer, else the latest 200")
    .option("--module <id>")
    .option("--user <uid|email>", "the buyer")
    .action(action((ctx, options: { module?: string; user?: string }) => listPurchases(ctx, options)));
  purchases
    .command("refund")
    .description("refund a purchase's payment through Stripe (STRIPE_SECRET_KEY), reversing the publisher's transfer and the fee; the webhook then records it")
    .argument("<purchaseId>")
    .option("--amount <minor units>", "a partial refund, in the currency's minor unit (default: all)")
    .option("--invoice <id>", "a subscription's invoice to refund (default: its latest paid one)")
    .option("--cancel", "also cancel the subscription at once, which ends its access")
    .option("--idempotency-key <key>", "repeat an earlier command's key (it prints the one it used) to retry it without refunding twice; default: a new key, a new refund")
    .action(
      action((ctx, purchaseId: string, options: { amount?: string; invoice?: string; cancel?: boolean; idempotencyKey?: string }, command: Command) => {
        const amount = options.amount === undefined ? undefined : Number(options.amount);
        if (amount !== undefined && !(Number.isInteger(amount) && amount > 0)) throw new UsageError(`--amount must be a positive whole number of minor units, got '${options.amount}'.`);
        const { invoice, cancel, idempotencyKey } = options;
        return refundPurchase({ ...ctx, stripe: refundStripe(command.optsWithGlobals<GlobalOptions>(), io.env), logger: stderrLogger(io), timeoutMs: 30_000 }, { purchaseId, amount, invoice, cancel, idempotencyKey });
      }),
    );
}
