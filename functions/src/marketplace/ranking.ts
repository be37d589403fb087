import MiniSearch, { type AsPlainObject, type Options, type SearchResult } from "minisearch";
import type { PublicPrice } from "./price";
import { words } from "./search";

/** Free: neither an entitlement nor a price stands between a user and the module. */
const isFree = (entry: Pick<CatalogEntry, "entitlement" | "price">) => entry.entitlement === null && entry.price === null;

/**
 * How the marketplace finds and orders modules (contract §18), as pure functions of an in-memory
 * catalog: MiniSearch (a maintained in-process full-text index) scores the text with field
 * weights, prefix and typo-tolerant matching; this module adds the exact-match rule, quality,
 * the filters, the sorts, the facets and stable positions for cursors.
 */

/** What the catalog knows of a listed module for search, sorting and facets. */
export interface CatalogEntry {
  id: string;
  name: string;
  summary: string;
  description: string;
  tags: string[];
  category: string | null;
  publisherId: string;
  entitlement: string | null;
  /** Its price while it is for sale (§20). */
  price: PublicPrice | null;
  updatedAt: number;
  downloads: number;
  rating: RatingFigures | null;
}

export interface RatingFigures {
  count: number;
  sum: number;
}

export const SORTS = ["relevance", "updated", "downloads", "rating", "name"] as const;
export type Sort = (typeof SORTS)[number];
export const PRICINGS = ["free", "paid"] as const;

export interface SearchQuery {
  q?: string;
  sort?: Sort;
  category?: string;
  publisher?: string;
  tag?: string;
  pricing?: (typeof PRICINGS)[number];
}

/** Field weights: id and name above tags, above publisher and category, above summary and description. */
export const FIELD_WEIGHTS = { id: 6, name: 6, tags: 3, publisherId: 2, category: 2, summary: 1, description: 0.5 } as const;
const FIELDS = Object.keys(FIELD_WEIGHTS) as (keyof typeof FIELD_WEIGHTS)[];

/** Edits a query word may be from an indexed word: none below 4 letters, one from 4, two from 8. */
export const allowedEdits = (word: string) => (word.length >= 8 ? 2 : word.length >= 4 ? 1 : 0);

/** A new, empty text index of catalog entries. */
export const newTextIndex = (): MiniSearch<CatalogEntry> => new MiniSearch<CatalogEntry>(TEXT_INDEX_OPTIONS);

/** A text index as `JSON.stringify(index)` wrote it (a snapshot's): a fifth of the time of indexing the entries again. */
export const loadedTextIndex = (serialized: AsPlainObject): MiniSearch<CatalogEntry> => MiniSearch.loadJS<CatalogEntry>(serialized, TEXT_INDEX_OPTIONS);

const TEXT_INDEX_OPTIONS: Options<CatalogEntry> = {
    fields: FIELDS,
    storeFields: [],
    idField: "id",
    extractField: (entry, field) => {
      const value = entry[field as keyof CatalogEntry];
      return Array.isArray(value) ? value.join(" ") : value === null || value === undefined ? "" : String(value);
    },
    tokenize: (text) => words(text),
    searchOptions: {
      boost: FIELD_WEIGHTS,
      combineWith: "AND",
      prefix: true,
      fuzzy: (term) => allowedEdits(term),
      weights: { fuzzy: 0.3, prefix: 0.6 },
    },
};

/** The Bayesian average toward the catalog's mean: what sort=rating and quality use. */
export function smoothedRating(rating: RatingFigures | null, catalog: CatalogRatingPrior): number {
  const count = rating?.count ?? 0;
  const sum = rating?.sum ?? 0;
  return (catalog.weight * catalog.mean + sum) / (catalog.weight + count);
}

/** The prior of smoothed ratings: the catalog's mean rating, weighted as this many reviews. */
export interface CatalogRatingPrior {
  mean: number;
  weight: number;
}

export function ratingPrior(entries: Iterable<CatalogEntry>): CatalogRatingPrior {
  let sum = 0;
  let count = 0;
  for (const entry of entries) {
    sum += entry.rating?.sum ?? 0;
    count += entry.rating?.count ?? 0;
  }
  // Halfway between the catalog's mean and the middle of the scale (3), counted as ten reviews:
  // toward the catalog's mean alone, in a catalog of good ratings a single 5 would still come out
  // above hundreds of 4.8s.
  return { mean: count > 0 ? (sum / count + 3) / 2 : 3, weight: 10 };
}

/** Quality as a multiplier of relevance: more downloads and a better smoothed rating lift a match a little. */
export function quality(entry: CatalogEntry, prior: CatalogRatingPrior): number {
  return 1 + 0.1 * Math.log10(1 + entry.downloads) + 0.05 * (smoothedRating(entry.rating, prior) - 3);
}

/** A position in one ordering: the keys compared in turn, the id last. */
export type SortKey = (string | number)[];

export interface Ranked {
  entry: CatalogEntry;
  key: SortKey;
}

export interface Facets {
  category: FacetCount[];
  publisher: FacetCount[];
  tag: FacetCount[];
  pricing: FacetCount[];
}
export interface FacetCount {
  value: string;
  count: number;
}

/** Whether an entry passes the filters. */
const passes = (query: SearchQuery) => (entry: CatalogEntry) =>
  (!query.category || entry.category === query.category) &&
  (!query.publisher || entry.publisherId === query.publisher) &&
  (!query.tag || entry.tags.includes(query.tag)) &&
  (!query.pricing || (query.pricing === "free") === isFree(entry));

/** The sort a query gets: relevance with text, else the last updated first. */
export const effectiveSort = (query: SearchQuery): Sort => query.sort ?? (query.q && words(query.q).length > 0 ? "relevance" : "updated");

/**
 * Every entry a query finds, in its order, with each one's sort key: a page is the entries after
 * a cursor's key. Keys sort ascending (descending figures are negated).
 */
export function rank(index: MiniSearch<CatalogEntry>, entries: ReadonlyMap<string, CatalogEntry>, query: SearchQuery, prior: CatalogRatingPrior): Ranked[] {
  const sort = effectiveSort(query);
  const queryWords = query.q ? words(query.q) : [];
  const filter = passes(query);
  let found: { entry: CatalogEntry; score: number }[];
  if (queryWords.length > 0) {
    const results: SearchResult[] = index.search(queryWords.join(" "));
    found = results.flatMap((result) => {
      const entry = entries.get(String(result.id));
      return entry && filter(entry) ? [{ entry, score: result.score }] : [];
    });
  } else {
    found = [...entries.values()].filter(filter).map((entry) => ({ entry, score: 0 }));
  }
  const phrase = queryWords.join(" ");
  const exact = (entry: CatalogEntry) => phrase !== "" && (entry.id === phrase || matchKeys(entry).includes(phrase));
  const keyOf = ({ entry, score }: { entry: CatalogEntry; score: number }): SortKey => {
    switch (sort) {
      case "relevance":
        return [exact(entry) ? 0 : 1, -round(score * quality(entry, prior)), entry.id];
      case "downloads":
        return [-entry.downloads, entry.id];
      case "rating":
        return [-round(smoothedRating(entry.rating, prior)), -(entry.rating?.count ?? 0), entry.id];
      case "name":
        return [entry.name.toLowerCase(), entry.id];
      case "updated":
        return [-entry.updatedAt, entry.id];
    }
  };
  return found.map((hit) => ({ entry: hit.entry, key: keyOf(hit) })).sort((a, b) => compareKeys(a.key, b.key));
}

const keys = new WeakMap<CatalogEntry, string[]>();
/** The name and the id as a query's words would be joined, worked out once per entry. */
function matchKeys(entry: CatalogEntry): string[] {
  let known = keys.get(entry);
  if (!known) keys.set(entry, (known = [words(entry.name).join(" "), words(entry.id).join(" ")]));
  return known;
}

/** Scores kept to 9 significant digits, so a key survives its trip through a cursor unchanged. */
const round = (value: number) => Number(value.toPrecision(9));

export function compareKeys(a: SortKey, b: SortKey): number {
  for (let i = 0; i < Math.max(a.length, b.length); i += 1) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

/** The entries after a position (exclusive), at most `limit`, and whether more follow. */
export function pageAfter(ranked: Ranked[], after: SortKey | undefined, limit: number): { items: Ranked[]; more: boolean } {
  let start = 0;
  if (after) {
    // Binary search: the first entry whose key is greater than the cursor's.
    let low = 0;
    let high = ranked.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (compareKeys(ranked[middle].key, after) <= 0) low = middle + 1;
      else high = middle;
    }
    start = low;
  }
  return { items: ranked.slice(start, start + limit), more: start + limit < ranked.length };
}

/** Counts per category, publisher, tag and pricing over a whole result, largest first, then by value. */
export function facetsOf(ranked: Ranked[]): Facets {
  const count = (values: (entry: CatalogEntry) => (string | null)[]) => {
    const counts = new Map<string, number>();
    for (const { entry } of ranked) for (const value of values(entry)) if (value !== null) counts.set(value, (counts.get(value) ?? 0) + 1);
    return [...counts].map(([value, n]) => ({ value, count: n })).sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : 1));
  };
  return {
    category: count((entry) => [entry.category]),
    publisher: count((entry) => [entry.publisherId]),
    tag: count((entry) => entry.tags),
    pricing: count((entry) => [isFree(entry) ? "free" : "paid"]),
  };
}
