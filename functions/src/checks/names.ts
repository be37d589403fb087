import damerauLevenshtein from "damerau-levenshtein";
import unhomoglyph from "unhomoglyph";

/**
 * Look-alike module names (contract §14), as pure rules: a name is folded (case, separators,
 * Unicode confusables by their skeleton, and the contract's own 0→o, 1→l, rn→m, vv→w), and two
 * folded names are alike when equal or one edit apart (Damerau–Levenshtein: insertion, deletion,
 * substitution or a swap of neighbours).
 */

const SEPARATORS = /[-_\s]/gu;

export function foldName(name: string): string {
  const lower = name.normalize("NFKC").toLowerCase();
  return unhomoglyph(lower)
    .toLowerCase()
    .replace(SEPARATORS, "")
    .replace(/0/g, "o")
    .replace(/1/g, "l")
    .replace(/rn/g, "m")
    .replace(/vv/g, "w");
}

/** The folded names a module is known by: the name part of its id (after `publisherId.`) and its `name`. */
export function foldedNamesOf(moduleId: string, name: string): string[] {
  const idName = moduleId.slice(moduleId.indexOf(".") + 1);
  return [...new Set([foldName(idName), foldName(name)].filter((folded) => folded.length > 0))];
}

export function areAlike(a: string, b: string): boolean {
  if (a === b) return true;
  const [left, right] = inOneUnitPerCharacter(a, b);
  if (Math.abs(left.length - right.length) > 1) return false;
  return damerauLevenshtein(left, right).steps <= 1;
}

/**
 * The distance library counts UTF-16 units, so a character outside the BMP would count twice:
 * both strings are rewritten with one unit per character (a private-use unit per distinct one).
 */
function inOneUnitPerCharacter(a: string, b: string): [string, string] {
  const astral = /[\u{10000}-\u{10FFFF}]/u;
  if (!astral.test(a) && !astral.test(b)) return [a, b];
  const units = new Map<string, string>();
  const rewrite = (text: string) =>
    Array.from(text, (character) => {
      if (!units.has(character)) units.set(character, String.fromCharCode(0xe000 + units.size));
      return units.get(character)!;
    }).join("");
  return [rewrite(a), rewrite(b)];
}

/**
 * Index keys of a folded name: itself and every string one deletion away. Two names within one
 * edit of each other always share a key (a substitution or swap: both lose the same character;
 * an insertion: the longer one loses it), so a lookup by keys finds every alike name; it may also
 * find a few that are not (two edits apart), which `areAlike` then leaves out.
 */
export function indexKeysOf(folded: string): string[] {
  const characters = Array.from(folded);
  const keys = new Set([folded]);
  for (let index = 0; index < characters.length; index += 1) {
    keys.add([...characters.slice(0, index), ...characters.slice(index + 1)].join(""));
  }
  return [...keys];
}
