import { z } from "zod";
import { invalidRequest, type FieldError } from "./errors";

export type RequestPart = "body" | "query" | "path";

/** Validates one part of a request; failures are a 400 listing every offending field. */
export function parseRequestPart<S extends z.ZodType>(schema: S, value: unknown, part: RequestPart): z.output<S> {
  return parseInput(schema, value, `The request ${part} is invalid.`);
}

/** Validates an operation's input (a request part, or an operator command's options) against its schema. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, detail = "The input is invalid."): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw invalidRequest(detail, result.error.issues.flatMap(toFieldErrors));
}

function toFieldErrors(issue: z.core.$ZodIssue): FieldError[] {
  const base = issue.path.map(String).join(".");
  if (issue.code === "invalid_union" && issue.errors.length > 0) {
    // Report the alternative that came closest: the one with the fewest problems.
    const closest = issue.errors.reduce((best, option) => (option.length < best.length ? option : best));
    return closest.flatMap((nested) => toFieldErrors({ ...nested, path: [...issue.path, ...nested.path] }));
  }
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) => ({ path: base ? `${base}.${key}` : key, message: "Unknown field." }));
  }
  return [{ path: base, message: issue.message }];
}
