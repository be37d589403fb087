import type { User } from "@firebase/auth";
import { useEffect, useMemo, useState } from "preact/hooks";
import { dataOf, dataUnless, signedInApi, type Schemas, type SignedInApi } from "../api";
import { useTitle } from "../ui/use-title";
import { signOutUser, watchUser } from "../auth";
import { ErrorMessage, Loading, StatusMessage } from "../ui/messages";
import { useAction } from "../ui/use-action";
import { AuthorKeys } from "./AuthorKeys";
import { Analytics } from "./Analytics";
import { DownloadsChart } from "./DownloadsChart";
import { ModulesPanel } from "./ModulesPanel";
import { Payouts } from "./Payouts";
import { SignIn } from "../ui/SignIn";
import { AccessTokens } from "./AccessTokens";
import { WebhooksPanel } from "../webhooks/WebhooksPanel";
import { publisherWebhooks } from "../webhooks/webhook-api";
import { ReviewReplies } from "./ReviewReplies";
import { Tabs } from "../ui/Tabs";
import { Decisions } from "../moderation/Decisions";

/** `/publisher`: the publisher portal, for a developer signed in with Firebase Auth. */
export function PublisherPortal() {
  useTitle("Publisher portal");
  const [user, setUser] = useState<User | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    let stop: (() => void) | undefined;
    watchUser(setUser).then((unsubscribe) => (stop = unsubscribe), setError);
    return () => stop?.();
  }, []);

  if (error) {
    return (
      <section class="page">
        <h1>Publisher portal</h1>
        <ErrorMessage error={error} />
      </section>
    );
  }
  if (user === undefined) return <Loading what="the portal" />;
  if (!user) {
    return (
      <SignIn title="Publisher portal" intro="Sign in with the account you publish modules with.">
        <p class="muted">No developer account yet? Sign in (or create an account on the Account page), and register as a publisher here.</p>
      </SignIn>
    );
  }
  return <Portal user={user} />;
}

function Portal({ user }: { user: User }) {
  const api = useMemo(() => signedInApi(() => user.getIdToken()), [user]);
  const [developer, setDeveloper] = useState<Schemas["Developer"] | null>(null);
  const [modules, setModules] = useState<Schemas["DeveloperModules"]["items"] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [unregistered, setUnregistered] = useState(false);

  const reloadModules = async () => setModules((await dataOf(api.GET("/developers/modules"))).items);
  const load = async () => {
    const me = await dataUnless("not_a_developer", api.GET("/developers/me"));
    setUnregistered(me === null);
    if (!me) return;
    setDeveloper(me);
    await reloadModules();
  };
  useEffect(() => {
    load().catch(setError);
  }, [api]);

  return (
    <section class="page portal">
      <div class="portal-header">
        <h1>Publisher portal</h1>
        <p class="signed-in">
          Signed in as <strong>{user.email}</strong>
          {developer && <> · publisher <code>{developer.publisherId}</code></>}{" "}
          <button type="button" class="link-button" onClick={() => void signOutUser()}>
            Sign out
          </button>
        </p>
      </div>
      <ErrorMessage error={error} />
      {unregistered && <Register api={api} onRegistered={() => load().catch(setError)} />}
      {developer && modules === null && !error && <Loading what="your modules" />}
      {developer && modules && <PortalSections api={api} modules={modules} reloadModules={reloadModules} />}
    </section>
  );
}

/** Becoming a publisher (§4 register), in the page: a display name and a publisher id, for good. */
function Register({ api, onRegistered }: { api: SignedInApi; onRegistered: () => void }) {
  const { error, status, run } = useAction();
  const register = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    return run(async () => {
      await dataOf(api.POST("/developers/auth/register", { body: { displayName: String(form.get("displayName") ?? "").trim(), publisherId: String(form.get("publisherId") ?? "").trim() } }));
      onRegistered();
      return "Registered: your modules go under your publisher id.";
    });
  };
  return (
    <section aria-labelledby="register-heading" class="panel">
      <h2 id="register-heading">Become a publisher</h2>
      <p>Your publisher id starts every module id you publish (<code>your-id.module</code>) and cannot be changed later.</p>
      <form class="grid-form" onSubmit={register}>
        <div class="field">
          <label for="register-name">Display name</label>
          <input id="register-name" name="displayName" required maxLength={100} placeholder="Contoso Ltd" />
        </div>
        <div class="field">
          <label for="register-id">Publisher id</label>
          <input id="register-id" name="publisherId" required minLength={3} maxLength={32} pattern="[a-z][a-z0-9\-]{2,31}" placeholder="contoso" aria-describedby="register-id-rule" />
          <span class="reason" id="register-id-rule">
            3–32 of a–z, 0–9 and -, starting with a letter.
          </span>
        </div>
        <button type="submit">Register</button>
      </form>
      <ErrorMessage error={error} />
      <StatusMessage>{status}</StatusMessage>
    </section>
  );
}

/**
 * The portal's sections as tabs (§28), each with its own address (`/publisher#analytics`), as the
 * module page's are: at 375 px the portal is one section at a time, not one long page.
 */
function PortalSections({ api, modules, reloadModules }: { api: SignedInApi; modules: Schemas["DeveloperModules"]["items"]; reloadModules: () => Promise<void> }) {
  return (
    <Tabs
      label="Publisher portal"
      onlyCurrent
      // Back from Stripe's onboarding (?payouts=return|refresh): the payouts tab.
      initial={new URLSearchParams(location.search).has("payouts") ? "payouts" : undefined}
      tabs={[
        ["modules", "Modules", <ModulesPanel api={api} modules={modules} reload={reloadModules} />],
        [
          "analytics",
          "Analytics",
          modules.length === 0 ? (
            <p class="muted">Publish a module to see its figures here.</p>
          ) : (
            <>
              <Analytics api={api} modules={modules} />
              <DownloadsChart api={api} modules={modules} />
            </>
          ),
        ],
        ["reviews", "Reviews", <ReviewReplies api={api} modules={modules} />],
        [
          "tokens",
          "Tokens and keys",
          <>
            <AccessTokens api={api} />
            <AuthorKeys api={api} />
          </>,
        ],
        ["payouts", "Payouts", <Payouts api={api} modules={modules} reloadModules={reloadModules} />],
        ["webhooks", "Webhooks", <PublisherWebhooks api={api} />],
        ["decisions", "Decisions", <Decisions api={api} whose="publisher" />],
      ]}
    />
  );
}

function PublisherWebhooks({ api }: { api: SignedInApi }) {
  const webhooks = useMemo(() => publisherWebhooks(api), [api]);
  return <WebhooksPanel webhooks={webhooks} headingId="webhooks-heading" />;
}
