import type { User } from "@firebase/auth";
import { useEffect, useMemo, useState } from "preact/hooks";
import { useLocation, useRoute } from "preact-iso";
import { dataOf, publicApi, signedInApi, type Schemas } from "../api";
import { useTitle } from "../ui/use-title";
import { signOutUser } from "../auth";
import { formatDate } from "../format";
import { ErrorMessage, Loading, StatusMessage } from "../ui/messages";
import { SignIn } from "../ui/SignIn";
import { useAction } from "../ui/use-action";
import { useConfirm } from "../ui/confirm";
import { useSignedInUser } from "../ui/use-signed-in-user";
import { VerifyEmail } from "./VerifyEmail";

/** `/invitations/:token`: what the invitation is; sign in or create an account; accept or decline (§17). */
export function InvitationPage() {
  useTitle("Invitation");
  const { params } = useRoute();
  const token = params.token ?? "";
  const [preview, setPreview] = useState<Schemas["InvitationPreview"] | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const user = useSignedInUser();
  useEffect(() => {
    publicApi
      .GET("/invitations/{token}", { params: { path: { token } } })
      .then(({ data, response }) => (response.status === 404 ? setPreview(null) : data ? setPreview(data) : setError(new Error(`The service answered ${response.status}.`))))
      .catch(() => setError(new Error("The service could not be reached. Check the connection and try again.")));
  }, [token]);

  if (error) return <Page><ErrorMessage error={error} /></Page>;
  if (preview === undefined) return <Loading what="the invitation" />;
  if (preview === null) {
    return (
      <Page>
        <p>This invitation is no longer valid: it was used, revoked, replaced by a newer one, or it expired. Ask whoever invited you to send a new one.</p>
      </Page>
    );
  }
  const what = `${preview.role === "admin" ? "an admin" : "a member"}${preview.seat ? " with a seat" : ""}`;
  return (
    <Page>
      <p class="lead">
        {preview.invitedBy ?? "Someone"} invited you to join <strong>{preview.businessName}</strong> as {what}.
      </p>
      <p class="muted">
        Sent to {preview.emailHint}; valid until {formatDate(preview.expiresAt)}.
      </p>
      {user instanceof Error && <ErrorMessage error={user} />}
      {user === undefined && <Loading what="your sign-in" />}
      {user === null && (
        <SignIn title="Sign in to answer" intro={`Use the address the invitation was sent to (${preview.emailHint}), or create an account with it.`} allowCreate nested />
      )}
      {user && !(user instanceof Error) && <Answer user={user} token={token} />}
    </Page>
  );
}

function Page({ children }: { children: preact.ComponentChildren }) {
  return (
    <section class="page narrow">
      <h1>Invitation</h1>
      {children}
    </section>
  );
}

function Answer({ user, token }: { user: User; token: string }) {
  const api = useMemo(() => signedInApi(() => user.getIdToken()), [user]);
  const { route } = useLocation();
  const { error, status, run } = useAction();
  const [verified, setVerified] = useState(user.emailVerified);
  const [declined, setDeclined] = useState(false);
  const accept = () =>
    run(async () => {
      const joined = await dataOf(api.POST("/invitations/accept", { body: { token } }));
      route(`/account?business=${encodeURIComponent(joined.businessId)}&joined=${encodeURIComponent(joined.businessId)}`);
      return "Joined.";
    });
  const { confirm, dialog } = useConfirm();
  const decline = async () => {
    if (!(await confirm({ title: "Decline the invitation?", detail: "Its link stops working for good; to join later, you need a new invitation.", action: "Decline" }))) return;
    await run(async () => {
      await dataOf(api.POST("/invitations/decline", { body: { token } }));
      setDeclined(true);
      return "";
    });
  };
  if (declined) {
    return (
      <p class="message status" role="status">
        You declined the invitation: its link no longer works. <a href="/">Browse the modules</a>
      </p>
    );
  }
  return (
    <>
      <p>
        Signed in as <strong>{user.email}</strong>.{" "}
        <button type="button" class="link-button" onClick={() => void signOutUser()}>
          Use another account
        </button>
      </p>
      {!verified && <VerifyEmail user={user} onVerified={() => setVerified(true)} />}
      <p class="button-row">
        <button type="button" onClick={() => void accept()} disabled={!verified} aria-describedby={verified ? undefined : "accept-reason"}>
          Accept
        </button>
        <button type="button" class="secondary" onClick={() => void decline()}>
          Decline
        </button>
      </p>
      {!verified && (
        <p class="reason" id="accept-reason">
          Accept waits until your email address is verified: it proves the invitation reached you.
        </p>
      )}
      <ErrorMessage error={error} />
      <StatusMessage>{status}</StatusMessage>
      {dialog}
    </>
  );
}
