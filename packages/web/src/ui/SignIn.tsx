import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { createAccount, sendPasswordReset, signIn } from "../auth";
import { ErrorMessage, StatusMessage } from "./messages";

/**
 * Email and password sign-in for a page of the site; with `allowCreate`, also a new account (the
 * team pages are for anyone), which is sent a verification email.
 */
export function SignIn({ title, intro, allowCreate = false, nested = false, children }: { title: string; intro: string; allowCreate?: boolean; nested?: boolean; children?: ComponentChildren }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [creating, setCreating] = useState(false);
  const [status, setStatus] = useState("");

  const forgot = async () => {
    const email = (document.getElementById("sign-in-email") as HTMLInputElement).value.trim();
    setError(null);
    setStatus("");
    if (!email) return setError(new Error("Enter your email above first: the reset link is sent there."));
    try {
      await sendPasswordReset(email);
      setStatus(`If ${email} has an account, a link to choose a new password is on its way.`);
    } catch (failure) {
      setError(failure);
    }
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(null);
    try {
      await (creating ? createAccount : signIn)(String(form.get("email")), String(form.get("password")));
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  };

  return (
    <section class={nested ? "narrow" : "page narrow"}>
      {/* A page has one title: inside another page (an invitation), this is a section of it. */}
      {nested ? <h2>{title}</h2> : <h1>{title}</h1>}
      <p>{intro}</p>
      <form class="stacked" onSubmit={submit}>
        <div class="field">
          <label for="sign-in-email">Email</label>
          <input id="sign-in-email" name="email" type="email" autoComplete="username" required />
        </div>
        <div class="field">
          <label for="sign-in-password">Password</label>
          <input id="sign-in-password" name="password" type="password" autoComplete={creating ? "new-password" : "current-password"} minLength={creating ? 6 : undefined} required />
        </div>
        <ErrorMessage error={error} />
        <button type="submit" disabled={busy}>
          {busy ? (creating ? "Creating…" : "Signing in…") : creating ? "Create account" : "Sign in"}
        </button>
      </form>
      {!creating && (
        <p>
          <button type="button" class="link-button" onClick={() => void forgot()}>
            Forgot password?
          </button>
        </p>
      )}
      <StatusMessage>{status}</StatusMessage>
      {allowCreate && (
        <p>
          {creating ? "Have an account? " : "New here? "}
          <button type="button" class="link-button" onClick={() => (setCreating(!creating), setError(null))}>
            {creating ? "Sign in instead" : "Create an account"}
          </button>
        </p>
      )}
      {children}
    </section>
  );
}
