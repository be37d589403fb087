import { z } from "zod";
import { invalidRequest, type FieldError } from "./errors";

export type RequestPart = "body" | "query" | "path";

/**
 * Validates one part of a request; failures are a 400 listing every offending field. No string of
 * any part takes a control character (§1, "Text fields"), except a JSON body's newlines and tabs,
 * which its one-line fields then refuse (schemas.ts's oneLine).
 */
export function parseRequestPart<S extends z.ZodType>(schema: S, value: unknown, part: RequestPart): z.output<S> {
  refuseControlCharacters(value, part);
  refusePrototypeKeys(value, part);
  return parseInput(schema, value, `The request ${part} is invalid.`);
}

/** A 400 naming the first string of a request part that holds a control character it may not. */
export function refuseControlCharacters(value: unknown, part: RequestPart): void {
  const pattern = part === "body" ? BODY_CONTROL : ANY_CONTROL;
  const control = pathOfString(value, (text) => pattern.test(text));
  if (control !== null) {
    throw invalidRequest(`The request ${part} is invalid.`, [{ path: control, message: "Control characters are not allowed." }]);
  }
}

// eslint-disable-next-line no-control-regex -- finding them is the point
export const ANY_CONTROL = /[\u0000-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex -- finding them is the point
const BODY_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/;

/**
 * The path (`a.0.b`) of the first string (`matchesString`) or key (`matchesKey`) of a parsed JSON
 * value (or query) that matches; null when there is none. Walked with an explicit stack, not
 * recursion: a body may nest as deep as its size allows.
 */
function pathOf(root: unknown, matchesString: (text: string) => boolean, matchesKey: (key: string) => boolean): string | null {
  const pending: { value: unknown; path: string }[] = [{ value: root, path: "" }];
  const child = (path: string, key: string | number) => (path ? `${path}.${key}` : String(key));
  while (pending.length > 0) {
    const { value, path } = pending.pop()!;
    if (typeof value === "string") {
      if (matchesString(value)) return path;
    } else if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index -= 1) pending.push({ value: value[index], path: child(path, index) });
    } else if (value !== null && typeof value === "object") {
      const entries = Object.entries(value);
      for (let index = entries.length - 1; index >= 0; index -= 1) {
        const [key, item] = entries[index];
        if (matchesKey(key)) return child(path, key);
        pending.push({ value: item, path: child(path, key) });
      }
    }
  }
  return null;
}

/** The path of the first string or key that `matches`, null when there is none. */
export const pathOfString = (root: unknown, matches: (text: string) => boolean) => pathOf(root, matches, matches);

/** The path of the first key (at any depth) that `matches`, null when there is none. */
export const pathOfKey = (root: unknown, matches: (key: string) => boolean) => pathOf(root, () => false, matches);

/**
 * Names that, used as a key or a path segment when writing into an object, reach the prototype
 * every object shares: a caller's key that names one of them never gets near a merge, a patch or
 * a bracket write. Compared in any case, because SCIM's attribute names are case-insensitive.
 */
const PROTOTYPE_NAMES = new Set(["__proto__", "constructor", "prototype"]);
export const namesPrototype = (name: string) => PROTOTYPE_NAMES.has(name.toLowerCase());

/** Whether an attribute path (`a.b`, `emails[type eq "work"].value`, a schema URN prefix) names a prototype key; quoted values do not count. */
export const pathNamesPrototype = (path: string) =>
  path
    .replace(/"(?:[^"\\]|\\.)*"/g, "")
    .split(/[^A-Za-z0-9_$]+/)
    .some(namesPrototype);

/** A 400 naming the first key of a request part that names a prototype key. */
export function refusePrototypeKeys(value: unknown, part: RequestPart): void {
  const unsafe = pathOfKey(value, pathNamesPrototype);
  if (unsafe !== null) {
    throw invalidRequest(`The request ${part} is invalid.`, [{ path: unsafe, message: "This key is reserved (__proto__, constructor and prototype are never accepted)." }]);
  }
}

/** Validates an operation's input (a request part, or an operator command's options) against its schema. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, detail = "The input is invalid."): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw invalidRequest(detail, result.error.issues.flatMap(toFieldErrors));
}

function toFieldErrors(issue: z.core.$ZodIssue): FieldError[] {
  const base = issue.path.map(String).join(".");
  if (issue.code === "invalid_union" && issue.errors.length > 0) {
    // Report the alternative that came closest: the one with the fewest problems.
    const closest = issue.errors.reduce((best, option) => (option.length < best.length ? option : best));
    return closest.flatMap((nested) => toFieldErrors({ ...nested, path: [...issue.path, ...nested.path] }));
  }
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) => ({ path: base ? `${base}.${key}` : key, message: "Unknown field." }));
  }
  return [{ path: base, message: issue.message }];
}
