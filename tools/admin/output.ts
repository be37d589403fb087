/** Human-readable tables by default; JSON (one document) with --json. Shared by the operator and publisher CLIs. */
import { SingleBar } from "cli-progress";

type Row = Record<string, unknown>;

/** A result printed as it is, whatever the format asked for (a CSV). */
export class RawText {
  constructor(readonly text: string) {}
}

export function printResult(result: unknown, { json, out }: { json: boolean; out: { write(text: string): unknown } }): void {
  if (result instanceof RawText) {
    out.write(result.text);
    return;
  }
  if (json) {
    out.write(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  out.write(`${render(result)}\n`);
}

function render(result: unknown): string {
  if (Array.isArray(result)) return result.length === 0 ? "(none)" : table(result as Row[]);
  if (result && typeof result === "object") {
    const entries = Object.entries(result as Row);
    const isTable = (value: unknown) => Array.isArray(value) && value.some((item) => item !== null && typeof item === "object");
    const scalars = entries.filter(([, value]) => !isTable(value));
    const lists = entries.filter(([, value]) => isTable(value)) as [string, Row[]][];
    const width = Math.max(...scalars.map(([key]) => key.length), 0);
    const lines = scalars.map(([key, value]) => `${key.padEnd(width)}  ${cell(value)}`);
    for (const [key, rows] of lists) lines.push("", `${key}:`, rows.length === 0 ? "  (none)" : indent(table(rows)));
    return lines.join("\n");
  }
  return String(result);
}

function table(rows: Row[]): string {
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const cells = rows.map((row) => columns.map((column) => cell(row[column])));
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((row) => row[i].length)));
  const line = (values: string[]) => values.map((value, i) => value.padEnd(widths[i])).join("  ").trimEnd();
  return [line(columns), line(widths.map((width) => "-".repeat(width))), ...cells.map(line)].join("\n");
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (Array.isArray(value)) return value.length === 0 ? "-" : value.map(cell).join(", ");
  if (typeof value === "object") {
    return Object.entries(value as Row)
      .map(([key, inner]) => `${key}=${cell(inner)}`)
      .join(" ");
  }
  return String(value);
}

const indent = (text: string) => text.split("\n").map((line) => `  ${line}`).join("\n");

/** An upload progress bar on a terminal, started by the first report (nothing when not a terminal). */
export function uploadProgress(stream: { write(text: string): unknown; isTTY?: boolean }): ((sent: number, total: number) => void) | undefined {
  if (!stream.isTTY) return undefined;
  let bar: SingleBar | undefined;
  return (sent, total) => {
    if (!bar) {
      bar = new SingleBar({ stream: stream as NodeJS.WritableStream, format: "uploading [{bar}] {percentage}% {value}/{total} bytes" });
      bar.start(total, 0);
    }
    bar.update(sent);
    if (sent >= total) bar.stop();
  };
}
