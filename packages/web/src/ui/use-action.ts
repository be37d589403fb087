import { useState } from "preact/hooks";

/**
 * What the last action of a form or button came to: the error it ended in (for ErrorMessage), or
 * what it did (for StatusMessage). `run` clears both, then records the outcome of `action`, whose
 * result is the status to announce.
 */
export function useAction() {
  const [error, setError] = useState<unknown>(null);
  const [status, setStatus] = useState("");
  const run = async (action: () => Promise<string>) => {
    setError(null);
    setStatus("");
    try {
      setStatus(await action());
    } catch (failure) {
      setError(failure);
    }
  };
  return { error, status, run, setError };
}
