import { STATUS_CODES } from "node:http";

/** One field-level problem of a validation failure. */
export interface FieldError {
  path: string;
  message: string;
}

interface ApiErrorOptions {
  errors?: FieldError[];
  headers?: Record<string, string>;
}

/**
 * The one error type of the API. Everything a handler or middleware throws on purpose is an
 * ApiError; the error handler turns it into RFC 9457 problem details with the contract's `code`.
 */
export class ApiError extends Error {
  readonly errors?: FieldError[];
  readonly headers: Record<string, string>;

  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    options: ApiErrorOptions = {},
  ) {
    super(detail);
    this.name = "ApiError";
    this.errors = options.errors;
    this.headers = options.headers ?? {};
  }

  get title(): string {
    return STATUS_CODES[this.status] ?? "Error";
  }
}

export const invalidRequest = (detail: string, errors?: FieldError[]) =>
  new ApiError(400, "invalid_request", detail, { errors });

export const unauthenticated = (detail: string) =>
  new ApiError(401, "unauthenticated", detail, { headers: { "WWW-Authenticate": "Bearer" } });

export const tokenError = (code: "invalid_token" | "token_revoked" | "user_disabled", detail: string) =>
  new ApiError(401, code, detail, {
    headers: { "WWW-Authenticate": `Bearer error="invalid_token", error_description="${detail}"` },
  });

export const forbidden = (code: string, detail: string) => new ApiError(403, code, detail);

export const notFound = (code: string, detail: string) => new ApiError(404, code, detail);

export const conflict = (code: string, detail: string) => new ApiError(409, code, detail);

export const methodNotAllowed = (allowed: string[]) =>
  new ApiError(405, "method_not_allowed", `Allowed methods: ${allowed.join(", ")}.`, {
    headers: { Allow: allowed.join(", ") },
  });

export const payloadTooLarge = (limitBytes: number) =>
  new ApiError(413, "payload_too_large", `The request body exceeds the limit of ${limitBytes} bytes.`);

export const unsupportedMediaType = (expected: string) =>
  new ApiError(415, "unsupported_media_type", `The request body must be sent as ${expected}.`);

export const rateLimited = (retryAfterSeconds: number) =>
  new ApiError(429, "rate_limited", "Too many requests; retry later.", {
    headers: { "Retry-After": String(retryAfterSeconds) },
  });

export const internalError = () =>
  new ApiError(500, "internal", "An unexpected error occurred. Quote the request id when reporting it.");
