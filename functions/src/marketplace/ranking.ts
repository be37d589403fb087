import type { Options, Query, SearchResult } from "minisearch";
import type { PublicPrice } from "./price";
import { adjacentSwaps, words } from "./search";
import { TextIndex, type PackedTextIndex } from "./text-index";

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

/** What the text index reads of a module: its entry, and its description, which only the index keeps (as words). */
export interface IndexedModule extends CatalogEntry {
  description: string;
}

export interface RatingFigures {
  count: number;
  sum: number;
}

export const SORTS = ["relevance", "updated", "downloads", "rating", "name"] as const;
export type Sort = (typeof SORTS)[number];
export const PRICINGS = ["free", "paid"] as const;

/** A search: text, a sort, and filters; a facet's several values are alternatives (§24: OR within a facet, AND across). */
export interface SearchQuery {
  q?: string;
  sort?: Sort;
  category?: string[];
  publisher?: string[];
  tag?: string[];
  pricing?: (typeof PRICINGS)[number];
}

/** The facets a search counts and filters by. */
export const FACETS = ["category", "publisher", "tag", "pricing"] as const;
type Facet = (typeof FACETS)[number];

/** Field weights: id and name above tags, above publisher and category, above summary and description. */
export const FIELD_WEIGHTS = { id: 6, name: 6, tags: 3, publisherId: 2, category: 2, summary: 1, description: 0.5 } as const;
const FIELDS = Object.keys(FIELD_WEIGHTS) as (keyof typeof FIELD_WEIGHTS)[];

/** Edits a query word may be from an indexed word: none below 4 letters, one from 4, two from 8. */
export const allowedEdits = (word: string) => (word.length >= 8 ? 2 : word.length >= 4 ? 1 : 0);

export type CatalogTextIndex = TextIndex<IndexedModule>;

/** A new, empty text index of catalog entries. */
export const newTextIndex = (): CatalogTextIndex => new TextIndex<IndexedModule>(TEXT_INDEX_OPTIONS);

/** A packed text index (a snapshot's) for the entries `ids`, or null when it was packed with other fields. */
export const unpackedTextIndex = (packed: PackedTextIndex, ids: readonly string[]): CatalogTextIndex | null => TextIndex.unpack<IndexedModule>(packed, ids, TEXT_INDEX_OPTIONS);

const TEXT_INDEX_OPTIONS: Options<IndexedModule> = {
    fields: FIELDS,
    storeFields: [],
    idField: "id",
    extractField: (entry, field) => {
      const value = entry[field as keyof IndexedModule];
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

const chosen = (values: string[] | undefined) => values !== undefined && values.length > 0;

/** Whether an entry passes the filters, all of them or all but one facet's (whose counts then show its siblings). */
const passes =
  (query: SearchQuery, except?: Facet) =>
  (entry: CatalogEntry): boolean =>
    (except === "category" || !chosen(query.category) || (entry.category !== null && query.category!.includes(entry.category))) &&
    (except === "publisher" || !chosen(query.publisher) || query.publisher!.includes(entry.publisherId)) &&
    (except === "tag" || !chosen(query.tag) || entry.tags.some((tag) => query.tag!.includes(tag))) &&
    (except === "pricing" || !query.pricing || (query.pricing === "free") === isFree(entry));

/**
 * The text query MiniSearch runs: every word must match (AND); a word matches as itself (prefix,
 * and the edits it allows) or, from 4 letters to 7, with two neighbouring letters swapped, which
 * counts as its one edit (§24: `chrat` finds Charts; from 8 letters two edits cover a swap).
 */
function textQuery(queryWords: string[]): Query {
  return {
    combineWith: "AND",
    queries: queryWords.map((word) => {
      const swaps = allowedEdits(word) === 1 ? adjacentSwaps(word) : [];
      return swaps.length === 0 ? word : { combineWith: "OR", queries: [word, { combineWith: "OR", queries: swaps, fuzzy: false }] };
    }),
  };
}

/** What a text search found, before the filters: every entry with its score (all of them, scored 0, without text). */
function textHits(index: CatalogTextIndex, entries: ReadonlyMap<string, CatalogEntry>, queryWords: string[]): { entry: CatalogEntry; score: number }[] {
  if (queryWords.length === 0) return [...entries.values()].map((entry) => ({ entry, score: 0 }));
  const results: SearchResult[] = index.search(textQuery(queryWords));
  return results.flatMap((result) => {
    const entry = entries.get(String(result.id));
    return entry ? [{ entry, score: result.score }] : [];
  });
}

/** The sort a query gets: relevance with text, else the last updated first. */
export const effectiveSort = (query: SearchQuery): Sort => query.sort ?? (query.q && words(query.q).length > 0 ? "relevance" : "updated");

/**
 * What a query finds: every entry in its order, with each one's sort key (a page is the entries
 * after a cursor's key; keys sort ascending, descending figures negated), and, asked for, its
 * facet counts and a spelling suggestion.
 */
export function findModules(index: CatalogTextIndex, entries: ReadonlyMap<string, CatalogEntry>, query: SearchQuery, prior: CatalogRatingPrior) {
  const queryWords = query.q ? words(query.q) : [];
  const hits = textHits(index, entries, queryWords);
  const ranked = ranking(hits.filter(({ entry }) => passes(query)(entry)), query, queryWords, prior);
  return {
    ranked,
    /** Counts per facet value over the result with every other facet's filter applied, so a chosen value's siblings stay in view. */
    facets: (): Facets => facetCounts((facet) => hits.filter(({ entry }) => passes(query, facet)(entry)).map(({ entry }) => entry)),
    /**
     * For a text search that found nothing: another spelling within 2 edits of each of its words
     * (1 under 4 letters) whose words, as they are, all occur in a module within the same filters;
     * the nearest such spelling, then the one of the most common words. Null when there is none.
     */
    suggestion: (): string | null => (ranked.length > 0 || queryWords.length === 0 ? null : respelt(index, entries, queryWords, query)),
  };
}

/** Spellings tried per word, and phrases checked in all: a bound on a suggestion's work whatever the query. */
const SPELLINGS_PER_WORD = 5;
const PHRASES_CHECKED = 20;

function respelt(index: CatalogTextIndex, entries: ReadonlyMap<string, CatalogEntry>, queryWords: string[], query: SearchQuery): string | null {
  let phrases: { words: string[]; distance: number; rarity: number }[] = [{ words: [], distance: 0, rarity: 0 }];
  for (const word of queryWords) {
    const spellings = index.spellings(word, word.length >= 4 ? 2 : 1).slice(0, SPELLINGS_PER_WORD);
    phrases = phrases
      .flatMap((phrase) => spellings.map((spelling) => ({ words: [...phrase.words, spelling.term], distance: phrase.distance + spelling.distance, rarity: phrase.rarity - Math.log(spelling.documents) })))
      .sort((a, b) => a.distance - b.distance || a.rarity - b.rarity)
      .slice(0, PHRASES_CHECKED);
  }
  const asked = queryWords.join(" ");
  const within = passes(query);
  const found = (id: unknown) => {
    const entry = entries.get(String(id));
    return entry !== undefined && within(entry);
  };
  for (const phrase of phrases) {
    const candidate = phrase.words.join(" ");
    if (candidate !== asked && index.documentsWithEvery(phrase.words).some(found)) return candidate;
  }
  return null;
}

/** The entries a search found, in its sort, each with its key. */
function ranking(found: { entry: CatalogEntry; score: number }[], query: SearchQuery, queryWords: string[], prior: CatalogRatingPrior): Ranked[] {
  const sort = effectiveSort(query);
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

/** Counts per category, publisher, tag and pricing, each over the entries `within` gives for it, largest first, then by value. */
function facetCounts(within: (facet: Facet) => CatalogEntry[]): Facets {
  const count = (facet: Facet, values: (entry: CatalogEntry) => (string | null)[]) => {
    const counts = new Map<string, number>();
    for (const entry of within(facet)) for (const value of values(entry)) if (value !== null) counts.set(value, (counts.get(value) ?? 0) + 1);
    return [...counts].map(([value, n]) => ({ value, count: n })).sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : 1));
  };
  return {
    category: count("category", (entry) => [entry.category]),
    publisher: count("publisher", (entry) => [entry.publisherId]),
    tag: count("tag", (entry) => entry.tags),
    pricing: count("pricing", (entry) => [isFree(entry) ? "free" : "paid"]),
  };
}

/** Two ranked results of one query (the public catalog's and a business's private one, §26) as one, in the same order. */
export function mergeRanked(a: readonly Ranked[], b: readonly Ranked[]): Ranked[] {
  const merged: Ranked[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) merged.push(j >= b.length || (i < a.length && compareKeys(a[i].key, b[j].key) <= 0) ? a[i++] : b[j++]);
  return merged;
}

/** Facet counts of two results added up, in the order facetCounts gives (largest first, then by value). */
export function mergeFacets(a: Facets, b: Facets): Facets {
  const add = (x: FacetCount[], y: FacetCount[]) => {
    const counts = new Map<string, number>();
    for (const { value, count } of [...x, ...y]) counts.set(value, (counts.get(value) ?? 0) + count);
    return [...counts].map(([value, count]) => ({ value, count })).sort((p, q) => q.count - p.count || (p.value < q.value ? -1 : 1));
  };
  return { category: add(a.category, b.category), publisher: add(a.publisher, b.publisher), tag: add(a.tag, b.tag), pricing: add(a.pricing, b.pricing) };
}
