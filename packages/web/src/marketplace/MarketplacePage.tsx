import { useLocation } from "preact-iso";
import { useEffect, useState } from "preact/hooks";
import { dataOf, publicApi, type Schemas } from "../api";
import { useTitle } from "../app";
import { ErrorMessage, Loading, StatusMessage } from "../ui/messages";
import { ModuleCard } from "./ModuleCard";

type Module = Schemas["MarketplaceModule"];

const PAGE_SIZE = 12;

/** `/`: the marketplace. Search and category live in the address, so a search can be shared. */
export function MarketplacePage() {
  const { query, route } = useLocation();
  const q = query.q ?? "";
  const category = query.category ?? "";
  useTitle(q ? `“${q}”` : "Modules");
  const [modules, setModules] = useState<Module[]>([]);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>(null);
  const [categories, setCategories] = useState<string[]>([]);

  const load = async (cursor: string | null) => {
    setLoading(true);
    setError(null);
    try {
      const page = await dataOf(
        publicApi.GET("/modules", { params: { query: { limit: PAGE_SIZE, ...(q ? { q } : {}), ...(category ? { category } : {}), ...(cursor ? { cursor } : {}) } } }),
      );
      setModules((shown) => (cursor ? [...shown, ...page.items] : page.items));
      setNextCursor(page.nextCursor);
      setCategories((known) => [...new Set([...known, ...page.items.flatMap((item) => (item.category ? [item.category] : []))])].sort());
    } catch (failure) {
      if (!cursor) setModules([]);
      setError(failure);
    } finally {
      setLoading(false);
    }
  };

  useEffect(() => {
    void load(null);
  }, [q, category]);

  const search = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const params = new URLSearchParams();
    for (const name of ["q", "category"]) {
      const value = String(form.get(name) ?? "").trim();
      if (value) params.set(name, value);
    }
    route(params.size ? `/?${params}` : "/");
  };

  return (
    <section class="page">
      <h1>Modules</h1>
      <form class="search" role="search" onSubmit={search}>
        <div class="field">
          <label for="search-q">Search</label>
          <input id="search-q" name="q" type="search" defaultValue={q} placeholder="One word, e.g. charts" maxLength={100} key={`q-${q}`} />
        </div>
        <div class="field">
          <label for="search-category">Category</label>
          <input id="search-category" name="category" list="known-categories" defaultValue={category} placeholder="Any" maxLength={40} key={`c-${category}`} />
          <datalist id="known-categories">
            {categories.map((known) => (
              <option value={known} key={known} />
            ))}
          </datalist>
        </div>
        <button type="submit">Search</button>
      </form>
      <ErrorMessage error={error} />
      <StatusMessage>{loading ? "" : resultsText(modules.length, nextCursor !== null, q, category)}</StatusMessage>
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
    </section>
  );
}

function resultsText(count: number, more: boolean, q: string, category: string): string {
  const filter = [q && `matching “${q}”`, category && `in ${category}`].filter(Boolean).join(" ");
  if (count === 0) return `No modules ${filter || "yet"}.`;
  return `${count}${more ? "+" : ""} module${count === 1 ? "" : "s"} ${filter}`.trim() + ".";
}
