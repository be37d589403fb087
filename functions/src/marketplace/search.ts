/** Word-prefix search over a module's id, name and summary, as `?q=` of GET /modules defines it. */

const WORD_SEPARATOR = /[^\p{L}\p{N}]+/u;
/** Longer words are indexed by their first 32 characters; longer queries are cut the same way. */
const MAX_PREFIX = 32;

export function words(text: string): string[] {
  return text.toLowerCase().split(WORD_SEPARATOR).filter(Boolean);
}

/** Every prefix of every word: what an `array-contains` query matches `q` against. */
export function searchTerms(...texts: string[]): string[] {
  const terms = new Set<string>();
  for (const word of texts.flatMap(words)) {
    const capped = word.slice(0, MAX_PREFIX);
    for (let length = 1; length <= capped.length; length += 1) terms.add(capped.slice(0, length));
  }
  return [...terms];
}

/** The term a query looks up, or null when `q` is not a single word. */
export function queryTerm(q: string): string | null {
  const found = words(q);
  return found.length === 1 ? found[0].slice(0, MAX_PREFIX) : null;
}
