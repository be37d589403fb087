import { catalogCache, MODULES_TOPIC } from "../core/catalog-changes";
import type { Deps } from "../deps";
import { developerStore } from "../developers/developer-store";
import type { ListedModule } from "./catalog-snapshot";
import { downloadStore } from "./download-store";
import { moduleStore } from "./module-store";
import { ratingStore } from "./rating-store";
import { newTextIndex, type CatalogTextIndex } from "./ranking";
import { catalogEntryOf } from "./search-catalog";

/**
 * A business's private modules (§26) as a small catalog of their own, which its members' listing
 * searches beside the public one: the public catalog (and its snapshot) never holds them. Read
 * when first asked, and again after any module changes anywhere (the catalog feed's delay, §13),
 * so a publish shows on every instance within 2 s.
 */
export interface PrivateCatalog {
  entries: ReadonlyMap<string, ListedModule>;
  index: CatalogTextIndex;
}

export function privateCatalogs(deps: Pick<Deps, "db" | "config">) {
  const kept = catalogCache<PrivateCatalog>(deps.db, { ttlMs: deps.config.memoryCacheMs, maxEntries: 256 });
  return (businessId: string) => kept.get(businessId, MODULES_TOPIC, () => readPrivateCatalog(deps, businessId));
}

async function readPrivateCatalog({ db, config }: Pick<Deps, "db" | "config">, businessId: string): Promise<PrivateCatalog> {
  const modules = await moduleStore(db).listedOfBusiness(businessId);
  const ids = modules.map((module) => module.id);
  const [ratings, downloads, publishers] = await Promise.all([
    ratingStore(db).figures(ids),
    Promise.all(ids.map((id) => downloadStore(db, config.downloadShards).total(id))),
    developerStore(db).profiles(modules.map((module) => module.publisherId)),
  ]);
  const entries = new Map<string, ListedModule>();
  const index = newTextIndex();
  modules.forEach((module, at) => {
    const entry = catalogEntryOf(module, publishers, downloads[at], ratings.get(module.id) ?? null);
    if (!entry) return;
    entries.set(module.id, entry);
    index.add({ ...entry, description: module.description ?? "" });
  });
  return { entries, index };
}
