/**
 * `notices`, `appeals`, `flaggers`, `transparency`, `trader`: the Digital Services Act's notices and
 * decisions (§30), their appeals, the trusted flaggers whose notices come first, the transparency
 * figures, and traders.
 */
import type { Command } from "commander";
import { emailAddress } from "../../../functions/src/core/schemas";
import { parseInput } from "../../../functions/src/core/validation";
import { decideAppeal, decideNotice, listAppeals } from "../../../functions/src/moderation/service";
import { transparencyFigures } from "../../../functions/src/moderation/transparency";
import { listNotices, listTrustedFlaggers, setTrustedFlagger, showNotice } from "../../../functions/src/notices/service";
import type { AdminContext } from "../../../functions/src/local";
import { showTrader } from "../../../functions/src/traders/service";
import { type Cli } from "../cli";
import { RawText } from "../output";

/** A decision's or an appeal's operator: `--operator <email>`, who the audit log and the appeal rule (Art. 20(6)) name. */
const asOperator = (ctx: AdminContext, email: string): AdminContext => ({ ...ctx, actor: { kind: "operator", id: parseInput(emailAddress(), email, `--operator '${email}' is not an email address.`).toLowerCase() } });

/** The figures as CSV: one row per count (section, key, value). */
function figuresCsv(figures: Awaited<ReturnType<typeof transparencyFigures>>): RawText {
  const rows: (string | number | null)[][] = [["section", "key", "value"]];
  for (const [key, value] of Object.entries(figures.notices.byCategory)) rows.push(["notices.byCategory", key, value]);
  for (const [key, value] of Object.entries(figures.notices.bySource)) rows.push(["notices.bySource", key, value]);
  for (const [key, value] of Object.entries(figures.decisions.byKind)) rows.push(["decisions.byKind", key, value]);
  for (const [key, value] of Object.entries(figures.decisions.byGround)) rows.push(["decisions.byGround", key, value]);
  rows.push(["medianHoursToDecision", "", figures.medianHoursToDecision]);
  for (const [key, value] of Object.entries(figures.appeals)) rows.push(["appeals", key, value]);
  rows.push(["suspensions", "", figures.suspensions]);
  return new RawText(`# ${figures.from} to ${figures.to}\n${rows.map((row) => row.map((cell) => cell ?? "").join(",")).join("\n")}\n`);
}

export function registerNoticeCommands(program: Command, { action }: Cli): void {
  const notices = program.command("notices").description("notices about modules and reviews (§30): the queue, one notice");
  notices
    .command("list")
    .description("the queue: trusted flaggers' notices first, then the oldest first")
    .option("--status <status>", "open (default) or decided")
    .option("--limit <n>", "at most this many (default 100)")
    .action(action((ctx, options: { status?: string; limit?: string }) => listNotices(ctx, options)));
  notices
    .command("show")
    .description("one notice, with its reporter")
    .argument("<id>")
    .action(action((ctx, id: string) => showNotice(ctx, id)));
  notices
    .command("decide")
    .description("decides a notice (Art. 17): the decision takes effect, and both sides get its statement of reasons")
    .argument("<id>")
    .requiredOption("--decision <kind>", "no_action, restrict_visibility, remove or suspend_publisher")
    .requiredOption("--ground <ground>", "law or terms")
    .requiredOption("--reference <text>", "the law's provision, or the terms' clause")
    .requiredOption("--facts <text>", "the facts and circumstances decided on")
    .option("--automated", "automated means took or detected it")
    .requiredOption("--operator <email>", "who decides (an appeal is heard by another operator)")
    .action(
      action((ctx, id: string, options: { decision: string; ground: string; reference: string; facts: string; automated?: boolean; operator: string }) =>
        decideNotice(asOperator(ctx, options.operator), id, { decision: options.decision as never, ground: options.ground as never, reference: options.reference, facts: options.facts, automated: options.automated ?? false }),
      ),
    );

  const appeals = program.command("appeals").description("appeals against decisions (Art. 20)");
  appeals
    .command("list")
    .description("the appeals, oldest first")
    .option("--status <status>", "open (default), upheld or reversed")
    .option("--limit <n>", "at most this many (default 100)")
    .action(action((ctx, options: { status?: string; limit?: string }) => listAppeals(ctx, options)));
  appeals
    .command("decide")
    .description("decides an appeal, as another operator than the one who decided; reversed undoes the decision's effect")
    .argument("<id>")
    .requiredOption("--outcome <outcome>", "upheld or reversed")
    .requiredOption("--reasons <text>", "why, told to both sides")
    .requiredOption("--operator <email>", "who decides the appeal")
    .action(action((ctx, id: string, options: { outcome: string; reasons: string; operator: string }) => decideAppeal(asOperator(ctx, options.operator), id, { outcome: options.outcome as never, reasons: options.reasons })));

  program
    .command("transparency")
    .description("the transparency figures (Art. 15, 24) of a period of UTC days, both included")
    .requiredOption("--from <day>", "the first day, YYYY-MM-DD")
    .requiredOption("--to <day>", "the last day, YYYY-MM-DD")
    .option("--csv", "one row per count, as CSV")
    .action(
      action(async (ctx, options: { from: string; to: string; csv?: boolean }) => {
        const figures = await transparencyFigures(ctx, options);
        return options.csv ? figuresCsv(figures) : figures;
      }),
    );

  const flaggers = program.command("flaggers").description("trusted flaggers (Art. 22): accounts whose notices come first");
  flaggers
    .command("add")
    .description("names a trusted flagger by the verified email of their account (an audit entry)")
    .argument("<email>")
    .action(action((ctx, email: string) => setTrustedFlagger(ctx, email, true)));
  flaggers
    .command("remove")
    .description("no longer a trusted flagger (an audit entry)")
    .argument("<email>")
    .action(action((ctx, email: string) => setTrustedFlagger(ctx, email, false)));
  flaggers
    .command("list")
    .description("the trusted flaggers")
    .action(action((ctx) => listTrustedFlaggers(ctx)));

  program
    .command("trader")
    .description("traders (Art. 30): who sells")
    .command("show")
    .description("a publisher's trader declaration, and the developer who made it")
    .argument("<publisherId>")
    .action(action((ctx, publisherId: string) => showTrader(ctx, publisherId)));
}
