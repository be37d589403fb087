/**
 * Every failure of the SDK: `code` is the contract's problem code when the service refused
 * (`not_entitled`, `blocked_by_policy`, `device_limit_reached`, …), or one of the SDK's own:
 * `offline` (the service cannot be reached, or nothing kept answers), `integrity_failed` (bytes,
 * signatures or TUF metadata that do not verify), `clock_rollback` (the clock is behind the newest
 * time the SDK has seen), `not_installed`, `cancelled`.
 */
export class DesktopError extends Error {
  readonly code: string;
  /** The HTTP status of the service's refusal, when it refused. */
  readonly status?: number;
  /** The problem's other members (e.g. `businessId` and `reason` of `blocked_by_policy`). */
  readonly details: Record<string, unknown>;

  constructor(code: string, message: string, options: { status?: number; details?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "DesktopError";
    this.code = code;
    this.status = options.status;
    this.details = options.details ?? {};
  }
}

/** A problem+json answer of the service as a DesktopError with its code. */
export function problemError(status: number, problem: unknown): DesktopError {
  const body = (problem && typeof problem === "object" ? problem : {}) as Record<string, unknown>;
  const { code, detail, title, type: _type, status: _status, ...details } = body;
  const text = typeof detail === "string" ? detail : typeof title === "string" ? title : `The service answered ${status}.`;
  return new DesktopError(typeof code === "string" ? code : "unavailable", text, { status, details });
}

export const integrityFailed = (message: string, cause?: unknown) => new DesktopError("integrity_failed", message, { cause });
export const offline = (message: string, cause?: unknown) => new DesktopError("offline", message, { cause });
