import type { Command } from "commander";
import type { Cli } from "../cli";
import { unwrap } from "../problems";

/** `stats`: a module's downloads per day and version. */
export function registerStatsCommands(program: Command, { globals, print, asPublisher }: Cli): void {
  program
    .command("stats")
    .description("downloads of one of your modules per day and version (default: the last 30 days)")
    .argument("<moduleId>")
    .option("--from <YYYY-MM-DD>", "first day (UTC)")
    .option("--to <YYYY-MM-DD>", "last day (UTC), inclusive")
    .action(async (moduleId: string, options: { from?: string; to?: string }, command: Command) => {
      const { client } = await asPublisher(command);
      const stats = unwrap(await client.GET("/developers/modules/{id}/stats", { params: { path: { id: moduleId }, query: options } }));
      if (globals(command).json) return print(command, stats);
      print(command, {
        moduleId: stats.moduleId,
        from: stats.from,
        to: stats.to,
        total: stats.total,
        days: stats.days.map((day) => ({ date: day.date, downloads: day.downloads, versions: Object.entries(day.versions).map(([version, n]) => `${version}: ${n}`).join(", ") })),
      });
    });
}
