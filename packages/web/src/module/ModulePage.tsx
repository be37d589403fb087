import type { User } from "@firebase/auth";
import { useRoute } from "preact-iso";
import { useEffect, useState } from "preact/hooks";
import { dataUnless, publicApi, signedInApi, sitePath, type Schemas, type SignedInApi } from "../api";
import { ReportContent } from "../notices/ReportContent";
import { useTitle } from "../ui/use-title";
import { compatibility, formatCount, formatDate, formatPrice } from "../format";
import { Loading, RetryableError } from "../ui/messages";
import { ModuleIcon } from "../ui/ModuleIcon";
import { PublisherName } from "../ui/PublisherName";
import { Stars } from "../ui/Stars";
import { Purchase } from "./Purchase";
import { Reviews } from "./Reviews";
import { Tabs } from "../ui/Tabs";

/**
 * `/modules/:id`: a module's page. Its README and CHANGELOG arrive as HTML the API sanitized when
 * the package was signed (§16); the site's Content-Security-Policy allows no inline script on top.
 */
export function ModulePage() {
  const { params } = useRoute();
  const [page, setPage] = useState<Schemas["ModulePage"] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [rating, setRating] = useState<Schemas["ModulePage"]["rating"] | undefined>(undefined);
  useTitle(page?.name ?? params.id);

  const [missingPublicly, setMissingPublicly] = useState(false);
  const [missingForUser, setMissingForUser] = useState(false);
  const [attempt, setAttempt] = useState(0);
  const [user, setUser] = useState<User | null | undefined>(undefined);
  useEffect(() => {
    let stop: (() => void) | undefined;
    import("../auth").then(({ watchUser }) => watchUser(setUser)).then((unsubscribe) => (stop = unsubscribe), () => setUser(null));
    return () => stop?.();
  }, []);

  // Anonymously first (shared caches answer it); then, signed in, as the user sees it: a company's
  // private module exists only for its members, and their install policies may block it (§26).
  useEffect(() => {
    setPage(null);
    setError(null);
    setMissingPublicly(false);
    dataUnless("module_not_found", publicApi.GET("/modules/{id}", { params: { path: { id: params.id } } })).then((found) => (found ? setPage((shown) => shown ?? found) : setMissingPublicly(true)), setError);
  }, [params.id, attempt]);
  useEffect(() => {
    setMissingForUser(false);
    if (!user) return;
    dataUnless("module_not_found", signedInApi(() => user.getIdToken()).GET("/modules/{id}", { params: { path: { id: params.id } } })).then((found) => (found ? setPage(found) : setMissingForUser(true)), setError);
  }, [params.id, attempt, user]);
  // One view of the page (§28), once the visitor is known: the signed-in user, else the browser (its __session cookie).
  useEffect(() => {
    if (user === undefined) return;
    const api = user ? signedInApi(() => user.getIdToken()) : publicApi;
    api.POST("/modules/{id}/views", { params: { path: { id: params.id } } }).catch(() => undefined);
  }, [params.id, user === undefined]);
  const missing = user ? missingForUser : user === null && missingPublicly;

  if (missing || error) {
    // A module that does not exist is said so; a failure to load one (the API down, a 503) can be retried.
    return (
      <section class="page">
        <h1>{params.id}</h1>
        {missing ? <p class="message error">There is no module '{params.id}'. It may have been removed, or the link is mistyped.</p> : <RetryableError error={error} what="the module" retry={() => setAttempt((count) => count + 1)} />}
        <p>
          <a href="/">Back to the modules</a>
        </p>
      </section>
    );
  }
  if (!page) return <Loading what="the module" />;
  return (
    <article class="page module-page">
      <header class="module-header">
        <ModuleIcon url={page.iconUrl ? sitePath(page.iconUrl) : null} name={page.name} size={96} />
        <div>
          <h1>{page.name}</h1>
          <p class="publisher">
            by <PublisherName publisher={page.publisher} />
          </p>
          <p class="summary">{page.summary}</p>
          <p>
            <a href="#reviews">
              <Stars rating={rating === undefined ? page.rating : rating} />
            </a>
          </p>
          <dl class="facts">
            <div>
              <dt>Version</dt>
              <dd>{page.latestVersion}</dd>
            </div>
            <div>
              <dt>Updated</dt>
              <dd>{formatDate(page.updatedAt)}</dd>
            </div>
            <div>
              <dt>Downloads</dt>
              <dd>{formatCount(page.downloads)}</dd>
            </div>
            {page.category && (
              <div>
                <dt>Category</dt>
                <dd>
                  <a href={`/?category=${encodeURIComponent(page.category)}`}>{page.category}</a>
                </dd>
              </div>
            )}
            <div>
              <dt>{page.price ? "Price" : "Access"}</dt>
              <dd>{page.price ? formatPrice(page.price) : page.entitlement ? <span class="badge">Needs {page.entitlement}</span> : "Free"}</dd>
            </div>
          </dl>
          {page.tags.length > 0 && (
            <ul class="tags" aria-label="Tags">
              {page.tags.map((tag) => (
                <li key={tag}>
                  <a href={`/?tag=${encodeURIComponent(tag)}`}>{tag}</a>
                </li>
              ))}
            </ul>
          )}
          <p class="module-id">
            Id: <code>{page.id}</code>
          </p>
        </div>
      </header>
      {page.policy?.allowed === false ? (
        <p class="main-action blocked-notice message error" role="status">
          <strong>Blocked by {page.policy.businessName}:</strong> {page.policy.reason}
        </p>
      ) : page.price ? (
        <Purchase moduleId={page.id} price={page.price} />
      ) : page.entitlement ? (
        <p class="main-action">
          <span class="badge">Needs {page.entitlement}</span> It comes with a plan that grants “{page.entitlement}”: ask your business's owner for a seat, or <a href="/account">buy seats for your business</a>.
        </p>
      ) : (
        <p class="main-action">
          <a class="button" href={page.installUrl}>
            Install
          </a>{" "}
          <span class="muted">Opens the desktop app on this module.</span>
        </p>
      )}
      {page.trader && (
        <section class="trader" aria-labelledby="trader-heading">
          <h2 id="trader-heading">Sold by</h2>
          <address>
            {page.trader.name}
            <br />
            {page.trader.address}
            <br />
            <a href={`mailto:${page.trader.email}`}>{page.trader.email}</a> · <a href={`tel:${page.trader.phone.replace(/[^+0-9]/g, "")}`}>{page.trader.phone}</a>
          </address>
          <p class="muted">As the publisher declared it under the EU's Digital Services Act.</p>
        </section>
      )}
      {page.description && <p class="description">{page.description}</p>}
      <div class="module-body">
        <Tabs
          label={`About ${page.name}`}
          tabs={[
            ["overview", "Overview", <>{page.readmeHtml ? <div class="markdown" dangerouslySetInnerHTML={{ __html: readmeForPage(page.readmeHtml, page) }} /> : <p class="muted">This version has no README.</p>}</>],
            ["reviews", "Reviews", <Reviews moduleId={page.id} publisherName={page.publisher.displayName} onRating={setRating} />],
            ["versions", "Versions", <Versions page={page} />],
            ["changelog", "Changelog", <>{page.changelogHtml ? <div class="markdown" dangerouslySetInnerHTML={{ __html: page.changelogHtml }} /> : <p class="muted">This version has no changelog.</p>}</>],
          ]}
        />
        <Resources page={page} api={user ? signedInApi(() => user.getIdToken()) : null} />
      </div>
    </article>
  );
}

/** The side column (§24): where the module lives beyond the marketplace, as its module.json says. */
function Resources({ page, api }: { page: Schemas["ModulePage"]; api: SignedInApi | null }) {
  const { homepage, repository, issues, license } = page.resources;
  const links = [
    ["Homepage", homepage],
    ["Source code", repository],
    ["Report an issue", issues],
  ].filter((entry): entry is [string, string] => entry[1] !== null);
  return (
    <aside class="resources" aria-label="Resources">
      <h2>Resources</h2>
      {links.length === 0 && !license ? (
        <p class="muted">The publisher lists no links for this module.</p>
      ) : (
        <ul>
          {links.map(([label, url]) => (
            <li key={label}>
              <a href={url} rel="noopener nofollow ugc">
                {label}
              </a>
              <span class="muted"> · {new URL(url).host}</span>
            </li>
          ))}
          {license && <li>License: {license}</li>}
        </ul>
      )}
      <h2>Publisher</h2>
      <p>
        <PublisherName publisher={page.publisher} />
      </p>
      <h2>Report</h2>
      <ReportContent target={{ moduleId: page.id }} what="this module" api={api} />
    </aside>
  );
}

/**
 * The README as the page shows it: without what the header already shows (a first heading that is
 * the module's name, and a first paragraph that is its summary), and with the images the package
 * ships loaded through the site (the sanitized HTML is parsed, never run).
 */
function readmeForPage(html: string, page: { name: string; summary: string }): string {
  const document = new DOMParser().parseFromString(html, "text/html");
  for (const image of document.querySelectorAll("img")) {
    image.setAttribute("src", sitePath(image.getAttribute("src") ?? ""));
    image.setAttribute("loading", "lazy");
  }
  const same = (node: Element | null | undefined, text: string) => node?.textContent?.trim().toLowerCase() === text.trim().toLowerCase();
  const first = document.body.firstElementChild;
  if (first?.tagName === "H1" && same(first, page.name)) {
    const next = first.nextElementSibling;
    first.remove();
    if (next?.tagName === "P" && same(next, page.summary)) next.remove();
  }
  return document.body.innerHTML;
}

function Versions({ page }: { page: Schemas["ModulePage"] }) {
  return (
    <section aria-labelledby="versions-heading">
        <h2 id="versions-heading" class="visually-hidden">Versions</h2>
        <div class="table-scroll" tabIndex={0} role="region" aria-labelledby="versions-heading">
          <table class="stacked">
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Published</th>
                <th scope="col">Runs on app</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {page.versions.map((version) => (
                <tr key={version.version}>
                  <th data-label="Version" scope="row">{version.version}</th>
                  <td data-label="Published">{formatDate(version.publishedAt)}</td>
                  <td data-label="Runs on app">{compatibility(version.minAppVersion, version.maxAppVersion)}</td>
                  <td data-label="Status">{version.yanked ? <span class="badge warn">Yanked</span> : version.version === page.latestVersion ? "Latest" : "Available"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
    </section>
  );
}
