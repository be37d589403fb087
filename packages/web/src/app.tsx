import { ErrorBoundary, lazy, LocationProvider, Route, Router, useLocation } from "preact-iso";
import { useEffect } from "preact/hooks";
import { MarketplacePage } from "./marketplace/MarketplacePage";
import { useTitle } from "./ui/use-title";
import { ModulePage } from "./module/ModulePage";

// Firebase Auth and the chart library load only with the pages that sign in.
const PublisherPortal = lazy(() => import("./publisher/PublisherPortal").then((module) => module.PublisherPortal));
const AccountPage = lazy(() => import("./account/AccountPage").then((module) => module.AccountPage));
const InvitationPage = lazy(() => import("./account/InvitationPage").then((module) => module.InvitationPage));
const TransparencyPage = lazy(() => import("./moderation/TransparencyPage").then((module) => module.TransparencyPage));

/** Links the pages route themselves; /docs (the API reference) and /api are pages of their own. */
const ROUTED = /^\/(?!docs(\/|$)|api\/)/;

export function App() {
  return (
    <LocationProvider scope={ROUTED}>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="site-header">
        <a class="brand" href="/">
          Marketplace
        </a>
        <nav aria-label="Main">
          <ul>
            <li>
              <NavLink href="/">Modules</NavLink>
            </li>
            <li>
              <NavLink href="/account">Account</NavLink>
            </li>
            <li>
              <NavLink href="/publisher">Publisher portal</NavLink>
            </li>
            <li>
              <a href="/docs/">API</a>
            </li>
          </ul>
        </nav>
      </header>
      <main id="main" tabIndex={-1}>
        <ErrorBoundary>
          <Router>
            <Route path="/" component={MarketplacePage} />
            <Route path="/modules/:id" component={ModulePage} />
            <Route path="/publisher" component={PublisherPortal} />
            <Route path="/account" component={AccountPage} />
            <Route path="/invitations/:token" component={InvitationPage} />
            <Route path="/transparency" component={TransparencyPage} />
            <Route default component={NotFound} />
          </Router>
        </ErrorBoundary>
      </main>
      <footer class="site-footer">
        <a href="/transparency">Transparency</a>
        <span aria-hidden="true"> · </span>
        <span class="muted">Report a module or a review from its page; no account needed.</span>
      </footer>
      <TitleAndFocus />
    </LocationProvider>
  );
}

function NavLink({ href, children }: { href: string; children: string }) {
  const { path } = useLocation();
  const current = href === "/" ? path === "/" || path.startsWith("/modules/") : path.startsWith(href);
  return (
    <a href={href} aria-current={current ? "page" : undefined}>
      {children}
    </a>
  );
}

/** After a client-side navigation, focus moves to the page's content, as a page load would put it. */
function TitleAndFocus() {
  const { path } = useLocation();
  useEffect(() => {
    if (document.activeElement && document.activeElement !== document.body) document.getElementById("main")?.focus({ preventScroll: true });
    window.scrollTo(0, 0);
  }, [path]);
  return null;
}

function NotFound() {
  useTitle("Not found");
  return (
    <section class="page">
      <h1>Not found</h1>
      <p>
        There is no page here. <a href="/">Browse the modules</a>.
      </p>
    </section>
  );
}
