import type { User } from "@firebase/auth";
import { useEffect, useMemo, useState } from "preact/hooks";
import { dataOf, signedInApi, type Schemas, type SignedInApi } from "../api";
import { useTitle } from "../app";
import { signOutUser, watchUser } from "../auth";
import { ErrorMessage, Loading } from "../ui/messages";
import { AuthorKeys } from "./AuthorKeys";
import { DownloadsChart } from "./DownloadsChart";
import { ModulesPanel } from "./ModulesPanel";
import { Payouts } from "./Payouts";
import { SignIn } from "../ui/SignIn";
import { AccessTokens } from "./AccessTokens";
import { ReviewReplies } from "./ReviewReplies";

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
        <p class="muted">
          No developer account yet? Register with <code>POST /api/v1/developers/auth/register</code> (see the <a href="/docs/">API reference</a>), then sign in here.
        </p>
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

  const reloadModules = async () => setModules((await dataOf(api.GET("/developers/modules"))).items);
  useEffect(() => {
    dataOf(api.GET("/developers/me"))
      .then((me) => {
        setDeveloper(me);
        return reloadModules();
      })
      .catch(setError);
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
      {developer && modules === null && !error && <Loading what="your modules" />}
      {developer && modules && <PortalSections api={api} modules={modules} reloadModules={reloadModules} />}
    </section>
  );
}

function PortalSections({ api, modules, reloadModules }: { api: SignedInApi; modules: Schemas["DeveloperModules"]["items"]; reloadModules: () => Promise<void> }) {
  return (
    <>
      <ModulesPanel api={api} modules={modules} reload={reloadModules} />
      <Payouts api={api} modules={modules} reloadModules={reloadModules} />
      <DownloadsChart api={api} modules={modules} />
      <ReviewReplies api={api} modules={modules} />
      <AccessTokens api={api} />
      <AuthorKeys api={api} />
    </>
  );
}
