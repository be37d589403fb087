import { z } from "zod";
import { moduleIdSchema } from "../marketplace/schemas";
import { INTERVALS, METRICS, SPLITS, type Metric } from "../metrics/rules";

/** The request and answer shapes of analytics (contract §28). */

const day = z.iso.date().meta({ description: "A UTC day, YYYY-MM-DD." });

/** `metrics=a,b`: each a known metric, none twice; absent: every metric. */
const metricList = z
  .string()
  .max(400)
  .transform((value, context) => {
    const names = value.split(",").map((name) => name.trim());
    const unknown = names.filter((name) => !(METRICS as readonly string[]).includes(name));
    if (unknown.length > 0 || names.length === 0) {
      context.addIssue({ code: "custom", message: `Unknown metric${unknown.length === 1 ? "" : "s"}: ${unknown.join(", ") || "(none)"}. Known: ${METRICS.join(", ")}.` });
      return z.NEVER;
    }
    return [...new Set(names)] as Metric[];
  })
  .meta({ description: `Comma-separated, any of: ${METRICS.join(", ")} (default: all).` });

export const metricsQuerySchema = z
  .strictObject({
    from: day.optional().meta({ description: "First day (default: 29 days before to)." }),
    to: day.optional().meta({ description: "Last day, inclusive (default: today, UTC). At most 10 years after from." }),
    interval: z.enum(INTERVALS).default("day").meta({ description: "Buckets: day, week (starting on Monday) or month." }),
    metrics: metricList.optional(),
    split: z.enum(SPLITS).optional().meta({ description: "One series per version or platform (unknown: not reported)." }),
    format: z.enum(["json", "csv"]).optional().meta({ description: "csv: RFC 4180 (as Accept: text/csv)." }),
  })
  .meta({ id: "MetricsQuery" });

export const moduleMetricsParamsSchema = z.strictObject({ id: moduleIdSchema });

const value = z.union([z.number().int(), z.record(z.string(), z.number().int())]).meta({ description: "A count, or for revenue, refunds and net, minor units per currency ({ usd: 1900 })." });

export const metricsSchema = z
  .object({
    moduleId: z.string().optional().meta({ description: "The module (absent over all of the publisher's modules)." }),
    from: z.string(),
    to: z.string(),
    interval: z.enum(INTERVALS),
    series: z.array(
      z.object({
        metric: z.enum(METRICS),
        split: z.string().optional().meta({ description: "The version or platform this series counts, when split; `other` sums the values past the 19 largest (at most 20 series a metric)." }),
        points: z.array(z.object({ date: z.string().meta({ description: "The bucket's first day." }), value })),
      }),
    ),
    totals: z.record(z.string(), value).meta({ description: "Per metric: the sum over the range (activeDevices: its last day's value)." }),
  })
  .meta({ id: "Metrics" });

export const pageViewParamsSchema = z.strictObject({ id: moduleIdSchema });
