import type { User } from "@firebase/auth";
import { refreshUser, resendVerification } from "../auth";
import { ErrorMessage, StatusMessage } from "../ui/messages";
import { useAction } from "../ui/use-action";

/** A notice for an unverified email: invitations are accepted only by verified addresses (§17). */
export function VerifyEmail({ user, onVerified }: { user: User; onVerified?: () => void }) {
  const { error, status, run } = useAction();
  const resend = () =>
    run(async () => {
      await resendVerification(user);
      return `Sent a new verification link to ${user.email}.`;
    });
  const check = () =>
    run(async () => {
      await refreshUser(user);
      if (!user.emailVerified) return "Not verified yet: open the link in the email, then check again.";
      onVerified?.();
      return "Your email is verified.";
    });
  return (
    <div class="notice" role="region" aria-label="Email verification">
      <p>
        Verify <strong>{user.email}</strong>: we sent a link to it when the account was made. Invitations are accepted only from a verified address.
      </p>
      <p class="button-row">
        <button type="button" onClick={() => void check()}>
          I have verified it
        </button>
        <button type="button" class="secondary" onClick={() => void resend()}>
          Send the link again
        </button>
      </p>
      <ErrorMessage error={error} />
      <StatusMessage>{status}</StatusMessage>
    </div>
  );
}
