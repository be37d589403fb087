import { useState } from "preact/hooks";
import { signIn } from "../auth";
import { ErrorMessage } from "../ui/messages";

export function SignIn() {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(null);
    try {
      await signIn(String(form.get("email")), String(form.get("password")));
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  };

  return (
    <section class="page narrow">
      <h1>Publisher portal</h1>
      <p>Sign in with the account you publish modules with.</p>
      <form class="stacked" onSubmit={submit}>
        <div class="field">
          <label for="sign-in-email">Email</label>
          <input id="sign-in-email" name="email" type="email" autoComplete="username" required />
        </div>
        <div class="field">
          <label for="sign-in-password">Password</label>
          <input id="sign-in-password" name="password" type="password" autoComplete="current-password" required />
        </div>
        <ErrorMessage error={error} />
        <button type="submit" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
      <p class="muted">
        No developer account yet? Register with <code>POST /api/v1/developers/auth/register</code> (see the <a href="/docs/">API reference</a>), then sign in here.
      </p>
    </section>
  );
}
