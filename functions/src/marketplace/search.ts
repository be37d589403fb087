/** How the marketplace splits text into words (contract §4, §18): lower case, on anything not a letter or digit. */

const WORD_SEPARATOR = /[^\p{L}\p{N}]+/u;

export function words(text: string): string[] {
  return text.toLowerCase().split(WORD_SEPARATOR).filter(Boolean);
}
