import type { User } from "@firebase/auth";
import { useLocation } from "preact-iso";
import { useEffect, useMemo, useState } from "preact/hooks";
import { dataOf, publicApi, signedInApi, type Schemas } from "../api";
import { useTitle } from "../ui/use-title";
import { formatCount } from "../format";
import { Loading, RetryableError, StatusMessage } from "../ui/messages";
import { ModuleCard } from "./ModuleCard";

type Module = Schemas["MarketplaceModule"];
type Facets = Schemas["ModuleFacets"];

const PAGE_SIZE = 12;
const POPULAR = 6;
const FILTERS = ["category", "publisher", "tag", "pricing"] as const;
type Filter = (typeof FILTERS)[number];
/** Facets whose values combine (any of them, §24); a price is one or the other. */
const MULTI: ReadonlySet<Filter> = new Set(["category", "publisher", "tag"]);
const FILTER_NAMES: Record<Filter, string> = { category: "Category", publisher: "Publisher", tag: "Tag", pricing: "Price" };
const SORTS = [
  ["relevance", "Best match"],
  ["updated", "Recently updated"],
  ["downloads", "Most installed"],
  ["rating", "Highest rated"],
  ["name", "Name"],
] as const;
type Sort = (typeof SORTS)[number][0];

/**
 * `/`: the marketplace (§18, §24). The search, sort and filters live in the address, so a search
 * can be shared. Several values of a facet combine (any of them); each choice shows as a chip
 * that removes it. On a narrow screen the filters fold behind a button, so the first result is
 * on the first screen. A signed-in member picks one of their businesses' catalogs (§26): its
 * private modules beside the public ones, each with what the business's install policy says.
 */
export function MarketplacePage() {
  const { query, route } = useLocation();
  const q = query.q ?? "";
  const sort = (SORTS.some(([value]) => value === query.sort) ? query.sort : q ? "relevance" : "updated") as Sort;
  const chosen = Object.fromEntries(FILTERS.map((name) => [name, (query[name] ?? "").split(",").filter(Boolean)])) as Record<Filter, string[]>;
  useTitle(q ? `“${q}”` : "Modules");
  const [modules, setModules] = useState<Module[]>([]);
  const [facets, setFacets] = useState<Facets | null>(null);
  const [total, setTotal] = useState<number | null>(null);
  const [suggestion, setSuggestion] = useState<string | null>(null);
  const [popular, setPopular] = useState<Module[]>([]);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>(null);
  const [filtersOpen, setFiltersOpen] = useState(false);
  const business = query.business ?? "";
  const [user, setUser] = useState<User | null | undefined>(undefined);
  const [businesses, setBusinesses] = useState<{ id: string; name: string }[]>([]);
  const api = useMemo(() => (user ? signedInApi(() => user.getIdToken()) : null), [user]);
  useEffect(() => {
    let stop: (() => void) | undefined;
    import("../auth").then(({ watchUser }) => watchUser(setUser)).then((unsubscribe) => (stop = unsubscribe), () => setUser(null));
    return () => stop?.();
  }, []);
  useEffect(() => {
    if (!api) return setBusinesses([]);
    dataOf(api.GET("/users/me")).then((me) => setBusinesses(me.businesses.map(({ id, name }) => ({ id, name }))), () => setBusinesses([]));
  }, [api]);

  const filterParams = Object.fromEntries(FILTERS.flatMap((name) => (chosen[name].length ? [[name, chosen[name].join(",")]] : [])));
  const load = async (cursor: string | null) => {
    setLoading(true);
    setError(null);
    try {
      // A business's catalog needs the member's token; the public one is asked anonymously, so shared caches answer it.
      const client = business && api ? api : publicApi;
      const page = await dataOf(
        client.GET("/modules", {
          params: { query: { limit: PAGE_SIZE, ...(q ? { q } : {}), sort, ...filterParams, ...(business ? { business } : {}), ...(cursor ? { cursor } : { facets: "true" as const }) } },
        }),
      );
      setModules((shown) => (cursor ? [...shown, ...page.items] : page.items));
      setNextCursor(page.nextCursor);
      if (!cursor) {
        setFacets(page.facets ?? null);
        setTotal(page.total);
        setSuggestion(page.suggestion ?? null);
        // Nothing found and no better spelling: the most installed modules instead of an empty page.
        setPopular(page.total === 0 && !page.suggestion ? (await dataOf(publicApi.GET("/modules", { params: { query: { limit: POPULAR, sort: "downloads" } } }))).items : []);
      }
    } catch (failure) {
      setError(failure);
    } finally {
      setLoading(false);
    }
  };

  const address = JSON.stringify([q, sort, filterParams, business]);
  // A business's catalog waits until the sign-in is known.
  const ready = !business || user !== undefined;
  useEffect(() => {
    setModules([]);
    setTotal(null);
    if (!ready) return;
    if (business && !api) {
      setLoading(false);
      setError(new Error("Sign in to see your company's modules."));
      return;
    }
    void load(null);
  }, [address, ready, api]);

  /** The address of this search with some parameters changed (undefined drops one). */
  const withParams = (changes: Record<string, string | undefined>) => {
    const params = new URLSearchParams();
    const current: Record<string, string | undefined> = { q: q || undefined, sort: query.sort, ...filterParams, business: business || undefined, ...changes };
    for (const [name, value] of Object.entries(current)) if (value) params.set(name, value);
    return params.size ? `/?${params}` : "/";
  };
  /** The address with one facet value chosen or dropped: combined with the others for a facet that allows several. */
  const toggled = (name: Filter, value: string) => {
    const values = chosen[name].includes(value) ? chosen[name].filter((other) => other !== value) : MULTI.has(name) ? [...chosen[name], value] : [value];
    return withParams({ [name]: values.join(",") || undefined });
  };
  const search = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    route(withParams({ q: String(form.get("q") ?? "").trim() || undefined, sort: undefined }));
  };
  const chips = FILTERS.flatMap((name) => chosen[name].map((value) => ({ name, value })));

  return (
    <section class="page">
      <h1>Modules</h1>
      <form class="search" role="search" onSubmit={search}>
        <div class="field">
          <label for="search-q">Search</label>
          <input id="search-q" name="q" type="search" defaultValue={q} placeholder="e.g. chart plot" maxLength={200} key={`q-${q}`} />
        </div>
        <button type="submit">Search</button>
        {businesses.length > 0 && (
          <div class="field">
            <label for="search-catalog">Catalog</label>
            <select id="search-catalog" value={business} onChange={(event) => route(withParams({ business: event.currentTarget.value || undefined, cursor: undefined }))}>
              <option value="">All public modules</option>
              {businesses.map(({ id, name }) => (
                <option value={id} key={id}>
                  {name}'s modules
                </option>
              ))}
            </select>
          </div>
        )}
        <div class="field">
          <label for="search-sort">Sort by</label>
          <select id="search-sort" value={sort} onChange={(event) => route(withParams({ sort: event.currentTarget.value }))}>
            {SORTS.filter(([value]) => value !== "relevance" || q).map(([value, label]) => (
              <option value={value} key={value}>
                {label}
              </option>
            ))}
          </select>
        </div>
      </form>
      <div class="results-layout">
        {facets && (
          <div class="filters">
            <button type="button" class="secondary filters-toggle" aria-expanded={filtersOpen} aria-controls="filters" onClick={() => setFiltersOpen(!filtersOpen)}>
              Filters{chips.length ? ` (${chips.length})` : ""}
            </button>
            <nav id="filters" class={`facets${filtersOpen ? " open" : ""}`} aria-label="Filters">
              {FILTERS.map((name) => {
                const counts = facets[name];
                if (counts.length === 0) return null;
                return (
                  <section key={name} aria-labelledby={`facet-${name}`}>
                    <h2 id={`facet-${name}`}>{FILTER_NAMES[name]}</h2>
                    <ul>
                      {counts.slice(0, 8).map(({ value, count }) => (
                        <li key={value}>
                          <a href={toggled(name, value)} aria-current={chosen[name].includes(value) ? "true" : undefined}>
                            <span class="check" aria-hidden="true">
                              {chosen[name].includes(value) ? "☑" : "☐"}
                            </span>{" "}
                            {value} <span class="count">({formatCount(count)})</span>
                          </a>
                        </li>
                      ))}
                    </ul>
                  </section>
                );
              })}
            </nav>
          </div>
        )}
        <div class="results">
          {chips.length > 0 && (
            <ul class="chips" aria-label="Chosen filters">
              {chips.map(({ name, value }) => (
                <li key={`${name}:${value}`}>
                  <a href={toggled(name, value)} aria-label={`Remove ${FILTER_NAMES[name].toLowerCase()} ${value}`}>
                    {FILTER_NAMES[name]}: {value} <span aria-hidden="true">×</span>
                  </a>
                </li>
              ))}
              <li>
                <a href={withParams(Object.fromEntries(FILTERS.map((name) => [name, undefined])))}>Clear all</a>
              </li>
            </ul>
          )}
          {error ? <RetryableError error={error} what="the modules" retry={() => void load(modules.length ? nextCursor : null)} /> : null}
          <StatusMessage>{!loading && !error && total !== null ? resultsText(total, q, chosen) : ""}</StatusMessage>
          {suggestion && (
            <p class="suggestion">
              Did you mean <a href={withParams({ q: suggestion, sort: undefined })}>{suggestion}</a>?
            </p>
          )}
          {modules.length > 0 && (
            <ul class="cards" aria-label="Modules">
              {modules.map((module) => (
                <li key={module.id}>
                  <ModuleCard module={module} />
                </li>
              ))}
            </ul>
          )}
          {popular.length > 0 && (
            <section aria-labelledby="popular-heading">
              <h2 id="popular-heading">Most installed modules</h2>
              <ul class="cards" aria-label="Most installed modules">
                {popular.map((module) => (
                  <li key={module.id}>
                    <ModuleCard module={module} />
                  </li>
                ))}
              </ul>
            </section>
          )}
          {loading && <Loading what="modules" />}
          {!loading && !error && nextCursor && (
            <button type="button" class="secondary more" onClick={() => void load(nextCursor)}>
              Show more modules
            </button>
          )}
        </div>
      </div>
    </section>
  );
}

function resultsText(total: number, q: string, chosen: Record<Filter, string[]>): string {
  const filter = [q && `matching “${q}”`, ...FILTERS.flatMap((name) => (chosen[name].length ? [`${FILTER_NAMES[name].toLowerCase()} ${chosen[name].join(" or ")}`] : []))].filter(Boolean).join(", ");
  if (total === 0) return `No modules ${filter || "yet"}.`;
  return `${formatCount(total)} module${total === 1 ? "" : "s"} ${filter}`.trim() + ".";
}
