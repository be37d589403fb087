import { STATUS_CODES } from "node:http";

/**
 * Every problem code the service answers with, and its HTTP status: the one table that maps
 * them (the API contract's §1, plus the codes noted below). Domain code throws codes; only this
 * table, and the CLI's exit codes derived from it, turn them into statuses.
 */
export const PROBLEM_STATUS = {
  invalid_request: 400,
  invalid_signature: 400,
  invalid_webhook_url: 400,
  unauthenticated: 401,
  invalid_token: 401,
  token_revoked: 401,
  user_disabled: 401,
  invalid_credentials: 401,
  not_a_developer: 403,
  not_entitled: 403,
  not_owner: 403,
  namespace_mismatch: 403,
  no_trusted_publisher: 403,
  policy_violation: 403,
  not_business_admin: 403,
  /** §26: what only an owner of the business may do (its publisher id). */
  not_business_owner: 403,
  /** §30: a publisher that declared it does not sell as a trader. */
  not_a_trader: 403,
  /** Beyond the contract's table (§30): an appeal is decided by another operator than the one who made the decision. */
  same_operator: 403,
  /** §30: sign and publish of a publisher a moderation decision suspended. */
  publisher_suspended: 403,
  not_activated: 403,
  invitation_email_mismatch: 403,
  email_not_verified: 403,
  sso_required: 403,
  /** §26: a module version a business's install policy does not allow; with businessId and reason. */
  blocked_by_policy: 403,
  fallback_only: 403,
  not_found: 404,
  module_not_found: 404,
  version_not_found: 404,
  /** §30: a publisher that has not declared whether it sells as a trader. */
  trader_declaration_not_found: 404,
  /** §30: a notice's review that does not exist for the caller (hidden, or of a private module). */
  review_not_found: 404,
  business_not_found: 404,
  release_not_found: 404,
  no_compatible_version: 404,
  token_not_found: 404,
  device_not_found: 404,
  /** Operator operations: an unknown user, membership or direct grant. */
  user_not_found: 404,
  membership_not_found: 404,
  entitlement_not_found: 404,
  invitation_not_found: 404,
  payouts_account_not_found: 404,
  webhook_not_found: 404,
  /** §26: a business without a publisher id of its own. */
  publisher_not_found: 404,
  message_not_found: 404,
  /** Beyond the contract's table: §22's domains and SCIM tokens by an unknown name or id. */
  domain_not_found: 404,
  scim_token_not_found: 404,
  /** Beyond the contract's table: a known path with a method it does not serve. */
  method_not_allowed: 405,
  email_exists: 409,
  /** §30: a second appeal of one side against one decision. */
  appeal_exists: 409,
  /** Beyond the contract's table (§30): an appeal after the six months (Art. 20(1)). */
  appeal_window_closed: 409,
  /** Beyond the contract's table (§30): a notice, or an appeal, that is decided already. */
  already_decided: 409,
  publisher_taken: 409,
  already_registered: 409,
  version_already_published: 409,
  version_not_newer: 409,
  device_limit_reached: 409,
  last_owner: 409,
  no_seat_available: 409,
  already_member: 409,
  subscription_exists: 409,
  no_billing_account: 409,
  /** Beyond the contract's table: a user owns the most businesses one may (§17: 10). */
  business_limit_reached: 409,
  /** Beyond the contract's table: an author key registered already (§15), by anyone, revoked or not. */
  author_key_exists: 409,
  under_review: 409,
  /** Operator operations: a review decision on a version that is not quarantined. */
  not_under_review: 409,
  /** Operator operations: the release or business exists already. */
  release_exists: 409,
  business_exists: 409,
  /** §26: a business has a publisher id already (one per business). */
  business_publisher_exists: 409,
  payouts_not_ready: 409,
  /** §30: a price needs the publisher's trader declaration; a publisher with prices stays a trader. */
  trader_declaration_required: 409,
  not_for_sale: 409,
  already_owned: 409,
  too_many_webhooks: 409,
  domain_not_verified: 409,
  domain_taken: 409,
  /** Beyond the contract's table: a business has the most SCIM tokens (20) or domains (20) it may. */
  too_many_scim_tokens: 409,
  too_many_domains: 409,
  /** §1 safe retries: the first request with this Idempotency-Key is still running. */
  request_in_progress: 409,
  release_yanked: 410,
  module_revoked: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  /** Beyond the contract's table: request headers over Node's limit (local server only). */
  headers_too_large: 431,
  invalid_package: 422,
  package_rejected: 422,
  invalid_author_signature: 422,
  idempotency_key_reused: 422,
  rate_limited: 429,
  internal: 500,
  billing_unavailable: 502,
  unavailable: 503,
  billing_not_configured: 503,
} as const;

export type ProblemCode = keyof typeof PROBLEM_STATUS;

/** The operator CLI's exit code for a problem: 2 when the input was wrong, else 1. */
export const exitCodeFor = (code: ProblemCode): 1 | 2 => (PROBLEM_STATUS[code] === 400 ? 2 : 1);

/** One field-level problem of a validation failure. */
export interface FieldError {
  path: string;
  message: string;
}

interface ApiErrorOptions {
  errors?: FieldError[];
  headers?: Record<string, string>;
  /** Members the problem carries beyond the standard ones, e.g. a refused package's `findings`. */
  extensions?: Record<string, unknown>;
}

/**
 * The one error type of the service. Everything a handler, middleware or operation throws on
 * purpose is an ApiError with a code of the table; the error handler turns it into RFC 9457
 * problem details, the operator CLI into an `error:` line and an exit code.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly errors?: FieldError[];
  readonly headers: Record<string, string>;
  readonly extensions: Record<string, unknown>;

  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    options: ApiErrorOptions = {},
  ) {
    super(detail);
    this.name = "ApiError";
    this.status = PROBLEM_STATUS[code];
    this.errors = options.errors;
    this.headers = options.headers ?? {};
    this.extensions = options.extensions ?? {};
  }

  get title(): string {
    return STATUS_CODES[this.status] ?? "Error";
  }
}

export const invalidRequest = (detail: string, errors?: FieldError[]) => new ApiError("invalid_request", detail, { errors });

export const unauthenticated = (detail: string) =>
  new ApiError("unauthenticated", detail, { headers: { "WWW-Authenticate": "Bearer" } });

/** Text fit for a quoted header parameter (RFC 9110 quoted-string): printable ASCII, no quote or backslash. */
const headerSafe = (text: string) => text.replace(/…/g, "...").replace(/[^\x20-\x7e]|["\\]/g, "'");

export const tokenError = (code: "invalid_token" | "token_revoked" | "user_disabled", detail: string) =>
  new ApiError(code, detail, {
    headers: { "WWW-Authenticate": `Bearer error="invalid_token", error_description="${headerSafe(detail)}"` },
  });

export const methodNotAllowed = (allowed: string[]) =>
  new ApiError("method_not_allowed", `Allowed methods: ${allowed.join(", ")}.`, { headers: { Allow: allowed.join(", ") } });

export const payloadTooLarge = (limitBytes: number) =>
  new ApiError("payload_too_large", `The request body exceeds the limit of ${limitBytes} bytes.`);

export const unsupportedMediaType = (expected: string) =>
  new ApiError("unsupported_media_type", `The request body must be sent as ${expected}.`);

export const rateLimited = (retryAfterSeconds: number, detail = "Too many requests; retry later.") =>
  new ApiError("rate_limited", detail, { headers: { "Retry-After": String(retryAfterSeconds) } });

export const unavailable = (detail: string, retryAfterSeconds: number) =>
  new ApiError("unavailable", detail, { headers: { "Retry-After": String(retryAfterSeconds) } });

export const internalError = () => new ApiError("internal", "An unexpected error occurred. Quote the request id when reporting it.");
