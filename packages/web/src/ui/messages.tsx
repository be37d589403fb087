import type { ComponentChildren } from "preact";

/** What went wrong, announced at once (role="alert"). */
export function ErrorMessage({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p class="message error" role="alert">
      {error instanceof Error ? error.message : String(error)}
    </p>
  );
}

/** What just happened, announced politely (role="status"); always present so changes are read out. */
export function StatusMessage({ children }: { children?: ComponentChildren }) {
  return (
    <p class="message status" role="status">
      {children}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" aria-busy="true">
      Loading {what}…
    </p>
  );
}

/** A request that failed: what failed, and a way to try again (never a false empty state, §24). */
export function RetryableError({ error, what, retry }: { error: unknown; what: string; retry: () => void }) {
  return (
    <div class="message error retryable" role="alert">
      <p>
        Could not load {what}: {error instanceof Error ? error.message : String(error)}
      </p>
      <button type="button" class="secondary" onClick={retry}>
        Retry
      </button>
    </div>
  );
}
