import { useLocation } from "preact-iso";
import { useEffect, useState } from "preact/hooks";
import { dataOf, publicApi, type Schemas } from "../api";
import { useTitle } from "../app";
import { ErrorMessage, Loading, StatusMessage } from "../ui/messages";
import { ModuleCard } from "./ModuleCard";

type Module = Schemas["MarketplaceModule"];
type Facets = Schemas["ModuleFacets"];

const PAGE_SIZE = 12;
const FILTERS = ["category", "publisher", "tag", "pricing"] as const;
type Filter = (typeof FILTERS)[number];
const FILTER_NAMES: Record<Filter, string> = { category: "Category", publisher: "Publisher", tag: "Tag", pricing: "Price" };
const SORTS = [
  ["relevance", "Best match"],
  ["updated", "Recently updated"],
  ["downloads", "Most downloaded"],
  ["rating", "Highest rated"],
  ["name", "Name"],
] as const;
type Sort = (typeof SORTS)[number][0];

/** `/`: the marketplace (§18). The search, sort and filters live in the address, so a search can be shared. */
export function MarketplacePage() {
  const { query, route } = useLocation();
  const q = query.q ?? "";
  const sort = (SORTS.some(([value]) => value === query.sort) ? query.sort : q ? "relevance" : "updated") as Sort;
  const filters = Object.fromEntries(FILTERS.flatMap((name) => (query[name] ? [[name, query[name]]] : []))) as Partial<Record<Filter, string>>;
  useTitle(q ? `“${q}”` : "Modules");
  const [modules, setModules] = useState<Module[]>([]);
  const [facets, setFacets] = useState<Facets | null>(null);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>(null);

  const load = async (cursor: string | null) => {
    setLoading(true);
    setError(null);
    try {
      const page = await dataOf(
        publicApi.GET("/modules", {
          params: {
            query: {
              limit: PAGE_SIZE,
              ...(q ? { q } : {}),
              sort,
              ...(filters as Record<string, string>),
              ...(cursor ? { cursor } : { facets: "true" as const }),
            },
          },
        }),
      );
      setModules((shown) => (cursor ? [...shown, ...page.items] : page.items));
      if (!cursor) setFacets(page.facets ?? null);
      setNextCursor(page.nextCursor);
    } catch (failure) {
      if (!cursor) setModules([]);
      setError(failure);
    } finally {
      setLoading(false);
    }
  };

  const address = JSON.stringify([q, sort, filters]);
  useEffect(() => {
    void load(null);
  }, [address]);

  /** The address of this search with some parameters changed (undefined drops one). */
  const withParams = (changes: Record<string, string | undefined>) => {
    const params = new URLSearchParams();
    const current: Record<string, string | undefined> = { q: q || undefined, sort: query.sort, ...filters, ...changes };
    for (const [name, value] of Object.entries(current)) if (value) params.set(name, value);
    return params.size ? `/?${params}` : "/";
  };
  const search = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    route(withParams({ q: String(form.get("q") ?? "").trim() || undefined, sort: undefined }));
  };

  return (
    <section class="page">
      <h1>Modules</h1>
      <form class="search" role="search" onSubmit={search}>
        <div class="field">
          <label for="search-q">Search</label>
          <input id="search-q" name="q" type="search" defaultValue={q} placeholder="e.g. chart plot" maxLength={200} key={`q-${q}`} />
        </div>
        <button type="submit">Search</button>
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
          <nav class="facets" aria-label="Filters">
            {FILTERS.map((name) => {
              const counts = facets[name];
              if (counts.length === 0) return null;
              return (
                <section key={name} aria-labelledby={`facet-${name}`}>
                  <h2 id={`facet-${name}`}>{FILTER_NAMES[name]}</h2>
                  <ul>
                    {filters[name] && (
                      <li>
                        <a href={withParams({ [name]: undefined })}>Any {FILTER_NAMES[name].toLowerCase()}</a>
                      </li>
                    )}
                    {counts.slice(0, 8).map(({ value, count }) => (
                      <li key={value}>
                        <a href={withParams({ [name]: value })} aria-current={filters[name] === value ? "true" : undefined}>
                          {value} <span class="count">({count})</span>
                        </a>
                      </li>
                    ))}
                  </ul>
                </section>
              );
            })}
          </nav>
        )}
        <div class="results">
          <ErrorMessage error={error} />
          <StatusMessage>{loading ? "" : resultsText(modules.length, nextCursor !== null, q, filters)}</StatusMessage>
          {modules.length > 0 && (
            <ul class="cards" aria-label="Modules">
              {modules.map((module) => (
                <li key={module.id}>
                  <ModuleCard module={module} />
                </li>
              ))}
            </ul>
          )}
          {loading && <Loading what="modules" />}
          {!loading && nextCursor && (
            <button type="button" class="secondary more" onClick={() => void load(nextCursor)}>
              Show more modules
            </button>
          )}
        </div>
      </div>
    </section>
  );
}

function resultsText(count: number, more: boolean, q: string, filters: Partial<Record<Filter, string>>): string {
  const filter = [q && `matching “${q}”`, ...Object.entries(filters).map(([name, value]) => `${FILTER_NAMES[name as Filter].toLowerCase()} ${value}`)].filter(Boolean).join(", ");
  if (count === 0) return `No modules ${filter || "yet"}.`;
  return `${count}${more ? "+" : ""} module${count === 1 ? "" : "s"} ${filter}`.trim() + ".";
}
