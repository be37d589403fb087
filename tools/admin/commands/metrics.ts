/** `metrics`: the marketplace's analytics (§28), one module's or all of them. */
import type { Command } from "commander";
import { marketplaceMetrics } from "../../../functions/src/analytics/service";
import { currencies } from "../../../functions/src/config/billing";
import { METRICS, type Metric } from "../../../functions/src/metrics/rules";
import { UsageError, type Cli } from "../cli";
import { RawText } from "../output";

const DAY = /^\d{4}-\d{2}-\d{2}$/;

export function registerMetricsCommands(program: Command, { action, io, jsonOutput }: Cli): void {
  program
    .command("metrics")
    .description("analytics per UTC day (§28): every metric of one module, or of the whole marketplace (default: the last 30 days)")
    .option("--module <id>", "one module (default: all of them)")
    .option("--from <YYYY-MM-DD>")
    .option("--to <YYYY-MM-DD>")
    .option("--interval <day|week|month>", "buckets", "day")
    .option("--split <version|platform>", "version: with --module only (versions are a module's own)")
    .option("--csv", "RFC 4180 CSV, one row per day (and split value), whose columns sum to the totals")
    .action(
      action(async (ctx, options: { module?: string; from?: string; to?: string; interval: string; split?: string; csv?: boolean }, command: Command) => {
        for (const field of ["from", "to"] as const) if (options[field] !== undefined && !DAY.test(options[field]!)) throw new UsageError(`--${field} must be a day, YYYY-MM-DD, got '${options[field]}'.`);
        if (!["day", "week", "month"].includes(options.interval)) throw new UsageError(`--interval must be day, week or month, got '${options.interval}'.`);
        if (options.split !== undefined && !["version", "platform"].includes(options.split)) throw new UsageError(`--split must be version or platform, got '${options.split}'.`);
        if (options.split === "version" && options.module === undefined) throw new UsageError("--split version needs --module: versions are a module's own, and the marketplace's figures are split by platform only.");
        const query = {
          module: options.module,
          from: options.from,
          to: options.to,
          interval: options.interval as "day" | "week" | "month",
          split: options.split as "version" | "platform" | undefined,
          metrics: [...METRICS] as Metric[],
        };
        const known = currencies(io.env.MARKETPLACE_CURRENCIES);
        if (jsonOutput(command)) {
          const answer = await marketplaceMetrics(ctx, { ...query, format: "json" }, known);
          return "json" in answer ? answer.json : undefined;
        }
        const answer = await marketplaceMetrics(ctx, { ...query, format: "csv" }, known);
        if (!("csv" in answer)) return undefined;
        if (options.csv) return new RawText(answer.csv);
        // A table: the CSV's rows, as they are.
        const [header, ...rows] = answer.csv.trimEnd().split("\r\n").map((line) => line.split(","));
        return rows.map((row) => Object.fromEntries(header.map((name, index) => [name, row[index]])));
      }),
    );
}
