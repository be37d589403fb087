/** How the marketplace splits text into words (contract §4, §18): lower case, on anything not a letter or digit. */

const WORD_SEPARATOR = /[^\p{L}\p{N}]+/u;

export function words(text: string): string[] {
  return text.toLowerCase().split(WORD_SEPARATOR).filter(Boolean);
}

/** A word with one pair of adjacent letters swapped, every way but itself: what "one edit" also covers (§24). */
export function adjacentSwaps(word: string): string[] {
  const letters = [...word];
  const swaps = new Set<string>();
  for (let at = 0; at + 1 < letters.length; at += 1) {
    if (letters[at] === letters[at + 1]) continue;
    const swapped = [...letters];
    [swapped[at], swapped[at + 1]] = [swapped[at + 1], swapped[at]];
    swaps.add(swapped.join(""));
  }
  return [...swaps];
}
