import type { User } from "@firebase/auth";
import { useEffect, useMemo, useState } from "preact/hooks";
import { dataOf, signedInApi, type Schemas } from "../api";
import { useTitle } from "../ui/use-title";
import { useSignedInUser } from "../ui/use-signed-in-user";
import { signOutUser } from "../auth";
import { ErrorMessage, Loading, StatusMessage } from "../ui/messages";
import { SignIn } from "../ui/SignIn";
import { useAction } from "../ui/use-action";
import { BusinessPanel } from "./BusinessPanel";
import { JoinedNotice } from "./JoinedNotice";
import { LicencesSection } from "./LicencesSection";
import { VerifyEmail } from "./VerifyEmail";
import { Decisions } from "../moderation/Decisions";

/** `/account`: any signed-in user's businesses; owners and admins run their team and billing here (§17). */
export function AccountPage() {
  useTitle("Your account");
  const user = useSignedInUser();
  if (user instanceof Error) {
    return (
      <section class="page">
        <h1>Your account</h1>
        <ErrorMessage error={user} />
      </section>
    );
  }
  if (user === undefined) return <Loading what="your account" />;
  if (!user) return <SignIn title="Your account" intro="Sign in to see your businesses, their seats and members." allowCreate />;
  const next = returnPath();
  if (next) {
    // Signed in from another page (a module's "Sign in to buy"): back to it.
    location.replace(next);
    return <Loading what="the page you came from" />;
  }
  return <Account user={user} />;
}

/** Where to go back to after signing in (`?next=`): a path of this site only, never another origin. */
function returnPath(): string | null {
  const next = new URLSearchParams(location.search).get("next");
  return next && next.startsWith("/") && !next.startsWith("//") && !next.startsWith("/\\") ? next : null;
}

function Account({ user }: { user: User }) {
  const api = useMemo(() => signedInApi(() => user.getIdToken()), [user]);
  const [profile, setProfile] = useState<Schemas["UserProfile"] | null>(null);
  const { error, status, run, setError } = useAction();
  const params = new URLSearchParams(location.search);
  const [chosen, setChosen] = useState<string | null>(params.get("business"));
  const reload = async () => setProfile(await dataOf(api.GET("/users/me")));
  const choose = (businessId: string) => {
    setChosen(businessId);
    const url = new URL(location.href);
    url.searchParams.set("business", businessId);
    history.replaceState(null, "", url);
  };
  useEffect(() => {
    reload().catch(setError);
  }, [api]);

  const create = (event: Event) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const name = String(new FormData(formElement).get("name") ?? "");
    return run(async () => {
      await dataOf(api.POST("/businesses", { body: { name } }));
      formElement.reset();
      await reload();
      return `Created ${name}; you own it and hold its first seat.`;
    });
  };

  return (
    <section class="page portal">
      <div class="portal-header">
        <h1>Your account</h1>
        <p class="signed-in">
          Signed in as <strong>{user.email}</strong>{" "}
          <button type="button" class="link-button" onClick={() => void signOutUser()}>
            Sign out
          </button>
        </p>
      </div>
      {params.get("checkout") === "success" && <p class="message status">Payment received: the seats appear here as soon as the billing provider confirms them.</p>}
      {params.get("checkout") === "canceled" && <p class="message status">Checkout canceled: nothing was bought.</p>}
      {profile && params.get("joined") && <JoinedNotice profile={profile} businessId={params.get("joined")!} />}
      {!user.emailVerified && <VerifyEmail user={user} />}
      <ErrorMessage error={error} />
      {!profile && !error && <Loading what="your businesses" />}
      {profile && profile.businesses.length === 0 && <p>You are not a member of any business yet.</p>}
      {profile && profile.businesses.length > 1 && (
        <div class="field inline-field business-switcher">
          <label for="business-switcher">Business</label>
          <select id="business-switcher" value={shownBusiness(profile, chosen)} onChange={(event) => choose(event.currentTarget.value)}>
            {profile.businesses.map((business) => (
              <option value={business.id} key={business.id}>
                {business.name} ({business.role})
              </option>
            ))}
          </select>
        </div>
      )}
      {profile && <LicencesSection purchases={profile.purchases} />}
      <Decisions api={api} whose="reviews" />
      {profile && profile.businesses.length > 0 && <BusinessPanel key={shownBusiness(profile, chosen)} api={api} uid={user.uid} businessId={shownBusiness(profile, chosen)} onChange={reload} />}
      <section aria-labelledby="create-heading" class="panel">
        <h2 id="create-heading">Create a business</h2>
        <p class="muted">You become its owner and hold its first seat; invite your team and buy seats from here.</p>
        <form class="grid-form" onSubmit={create}>
          <div class="field">
            <label for="business-name">Name</label>
            <input id="business-name" name="name" required maxLength={200} placeholder="Acme Corp" />
          </div>
          <button type="submit">Create</button>
        </form>
        <StatusMessage>{status}</StatusMessage>
      </section>
    </section>
  );
}

/** The business the page shows: the one chosen (`?business=`) while the user is in it, else their first. */
const shownBusiness = (profile: Schemas["UserProfile"], chosen: string | null) =>
  profile.businesses.find((business) => business.id === chosen)?.id ?? profile.businesses[0].id;
