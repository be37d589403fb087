/** `business`, `subscription`: businesses, members, verified domains, single sign-on, subscriptions. */
import type { Command } from "commander";
import { BUSINESS_ROLES, SUBSCRIPTION_STATUSES } from "../../../functions/src/access/rules";
import { addMember, createBusiness, describeBusiness, removeMember } from "../../../functions/src/businesses/operators";
import { recheckDomains } from "../../../functions/src/domains/recheck";
import { verifyDomainForBusiness } from "../../../functions/src/domains/service";
import { setSsoForBusiness } from "../../../functions/src/sso/service";
import { setSubscription } from "../../../functions/src/subscriptions/service";
import { oneOf, stderrLogger, domainResolvers, type GlobalOptions, type Cli } from "../cli";

export function registerBusinessCommands(program: Command, { action, io }: Cli): void {
  const business = program.command("business").description("businesses and their members");
  business
    .command("create")
    .requiredOption("--id <businessId>")
    .requiredOption("--name <name>")
    .action(action((ctx, options: { id: string; name: string }) => createBusiness(ctx, options)));
  business
    .command("add-member")
    .requiredOption("--id <businessId>")
    .requiredOption("--user <uid|email>")
    .option("--role <role>", `${oneOf(BUSINESS_ROLES)} (default member)`)
    .option("--no-seat", "add without a seat (by default the member takes one, if the paid seats allow)")
    .action(action((ctx, options: { id: string; user: string; role?: string; seat: boolean }) => addMember(ctx, options as Parameters<typeof addMember>[1])));
  business
    .command("show")
    .description("a business: plan, seats paid, used and held back, pending invitations, and a row per member (a page of them, by when they joined) with role, seat and entitlement; nextAfter continues; its publisher id and install policy version (§26)")
    .requiredOption("--id <businessId>")
    .option("--limit <n>", "members on the page, 1–1000 (default 100)")
    .option("--after <uid>", "continue after this member (the previous page's nextAfter)")
    .action(action((ctx, options: { id: string; limit?: string; after?: string }) => describeBusiness(ctx, options)));
  business
    .command("verify-domain")
    .description("record a domain as verified for a business on the operator's word, without a DNS lookup (§22); refused when another business holds it")
    .requiredOption("--id <businessId>")
    .requiredOption("--domain <domain>")
    .action(action((ctx, options: { id: string; domain: string }) => verifyDomainForBusiness(ctx, options)));
  business
    .command("recheck-domains")
    .description("check the TXT record of every verified domain whose daily check is due (§22), as the scheduled domainChecks does: owners are emailed at a first failure, a record missing 7 days in a row releases its domain")
    .action(action((ctx, _options: object, command: Command) => recheckDomains({ ...ctx, logger: stderrLogger(io), config: { dnsResolvers: domainResolvers(command.optsWithGlobals<GlobalOptions>(), io.env) } })));
  business
    .command("sso")
    .description("set a business's single sign-on (§22): the SAML or OIDC provider id of Firebase Authentication, enforcement, just-in-time membership")
    .requiredOption("--id <businessId>")
    .option("--provider <providerId>", "saml.… or oidc.…; leave out to turn single sign-on off")
    .option("--enforce", "members reach the business only when signed in through the provider (owners excepted)")
    .option("--jit", "people of the business's verified domains join when they sign in through the provider")
    .action(action((ctx, options: { id: string; provider?: string; enforce?: boolean; jit?: boolean }) => setSsoForBusiness(ctx, { id: options.id, providerId: options.provider ?? null, enforce: options.enforce, jit: options.jit })));
  business
    .command("remove-member")
    .requiredOption("--id <businessId>")
    .requiredOption("--user <uid|email>")
    .action(action((ctx, options: { id: string; user: string }) => removeMember(ctx, options)));

  program
    .command("subscription")
    .description("business subscriptions")
    .command("set")
    .description("write a business's subscription")
    .requiredOption("--business <id>")
    .requiredOption("--status <status>", oneOf(SUBSCRIPTION_STATUSES))
    .requiredOption("--plan <plan>")
    .requiredOption("--period-end <date>", "RFC 3339 date or date-time")
    .option("--seats <n>")
    .option("--entitlements <keys>", "comma-separated entitlement keys")
    .option("--cancel-at-period-end")
    .action(
      action((ctx, { entitlements, cancelAtPeriodEnd, ...options }: { business: string; status: string; plan: string; periodEnd: string; seats?: string; entitlements?: string; cancelAtPeriodEnd?: boolean }) =>
        setSubscription(ctx, {
          ...options,
          entitlements: (entitlements ?? "").split(",").map((key) => key.trim()).filter(Boolean),
          cancelAtPeriodEnd: cancelAtPeriodEnd ?? false,
        } as Parameters<typeof setSubscription>[1]),
      ),
    );
}
