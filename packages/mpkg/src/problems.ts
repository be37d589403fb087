import type { Problem } from "@marketplace/client";

/** A refusal of the command line or its input, found before or without the API: exit 2. */
export class UsageError extends Error {}

/** An API answer that is a problem (RFC 9457): exit 2 when the input was wrong, else 1. */
export class ProblemError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.errors?.length ? `${problem.detail ?? problem.title}: ${problem.errors.map((error) => `${error.path}: ${error.message}`).join("; ")}` : (problem.detail ?? problem.title));
  }

  get exitCode(): 1 | 2 {
    return [400, 413, 415, 422].includes(this.problem.status) ? 2 : 1;
  }
}

/** The data of an openapi-fetch answer, or its problem thrown. */
export function unwrap<T>(answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.error !== undefined || !answer.response.ok) throw problemOf(answer.error, answer.response);
  return answer.data as T;
}

export function problemOf(body: unknown, response: Response): ProblemError {
  const problem = body as Partial<Problem> | undefined;
  if (problem && typeof problem.code === "string") return new ProblemError(problem as Problem);
  return new ProblemError({ type: "about:blank", title: response.statusText || "Error", status: response.status, code: "unknown", requestId: "" });
}
