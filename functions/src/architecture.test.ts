import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

/**
 * The import structure of functions/src (README "Architecture"), read with TypeScript's own
 * import scanner: no cycle between files, folders that form a DAG in the layers below, and stores
 * that depend on nothing above them.
 */
const SRC = __dirname;
/** The web pages (packages/web): their files too may not import what imports them. */
const WEB_SRC = path.join(__dirname, "..", "..", "packages", "web", "src");

function sourceFiles(root: string, dir = root): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(root, full);
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path.relative(root, full)] : [];
  });
}

/** Each source file with the source files it imports (type-only and dynamic imports included: they tie too). */
function importGraph(root = SRC): Map<string, string[]> {
  const files = sourceFiles(root);
  const known = new Set(files);
  return new Map(
    files.map((file) => {
      const { importedFiles } = ts.preProcessFile(readFileSync(path.join(root, file), "utf8"), true, true);
      const targets = importedFiles
        .map(({ fileName }) => fileName)
        .filter((name) => name.startsWith("."))
        .map((name) => path.normalize(path.join(path.dirname(file), name)))
        .flatMap((base) => [`${base}.ts`, `${base}.tsx`, path.join(base, "index.ts")].filter((candidate) => known.has(candidate)).slice(0, 1));
      return [file, targets];
    }),
  );
}

/** The cycles of a directed graph (each as the nodes of one strongly connected component). */
function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const indexes = new Map<string, number>();
  const lowlinks = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    indexes.set(node, index);
    lowlinks.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indexes.has(next)) {
        visit(next);
        lowlinks.set(node, Math.min(lowlinks.get(node)!, lowlinks.get(next)!));
      } else if (onStack.has(next)) {
        lowlinks.set(node, Math.min(lowlinks.get(node)!, indexes.get(next)!));
      }
    }
    if (lowlinks.get(node) === indexes.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!indexes.has(node)) visit(node);
  return found;
}

/** A file's folder under src (a file at the top is a room of its own). */
const folderOf = (file: string) => (file.includes(path.sep) ? file.split(path.sep)[0] : file);

function folderGraph(files: Map<string, string[]>): Map<string, string[]> {
  const folders = new Map<string, Set<string>>();
  for (const [file, targets] of files) {
    const from = folderOf(file);
    const edges = folders.get(from) ?? new Set<string>();
    for (const target of targets) if (folderOf(target) !== from) edges.add(folderOf(target));
    folders.set(from, edges);
  }
  return new Map([...folders].map(([folder, edges]) => [folder, [...edges]]));
}

describe("architecture of functions/src", () => {
  const files = importGraph();
  const folders = folderGraph(files);

  it("reads the imports it checks", () => {
    expect(files.get(path.join("marketplace", "routes.ts"))).toEqual(expect.arrayContaining([path.join("accounts", "caller-data.ts"), path.join("marketplace", "service.ts")]));
  });

  it("has no import cycle between files", () => {
    expect(cycles(files)).toEqual([]);
  });

  it("has folders that form a DAG", () => {
    expect(cycles(folders)).toEqual([]);
  });

  it("keeps the bottom layers below everything: core, then the pure access rules, then a caller's data", () => {
    const allowed: Record<string, string[]> = { core: ["core"], access: ["core", "access"], accounts: ["core", "access", "accounts"] };
    for (const [folder, may] of Object.entries(allowed)) {
      expect({ folder, imports: folders.get(folder)!.filter((target) => !may.includes(target)) }).toEqual({ folder, imports: [] });
    }
  });

  it("has stores that import no schemas or routes (the data layer does not depend on the API layer)", () => {
    const offending = [...files]
      .filter(([file]) => file.endsWith("-store.ts"))
      .flatMap(([file, targets]) => targets.filter((target) => /(^|\/)(schemas|routes)\.ts$/.test(target)).map((target) => `${file} -> ${target}`));
    expect(offending).toEqual([]);
  });

});

describe("architecture of packages/web/src", () => {
  const files = importGraph(WEB_SRC);

  it("reads the imports it checks, lazy pages included", () => {
    expect(files.get("app.tsx")).toEqual(expect.arrayContaining([path.join("marketplace", "MarketplacePage.tsx"), path.join("account", "AccountPage.tsx"), path.join("ui", "use-title.ts")]));
  });

  it("has no file that imports, directly or through others, a file that imports it: the app imports pages, pages what is below them", () => {
    expect(cycles(files)).toEqual([]);
  });

  it("has folders that form a DAG", () => {
    expect(cycles(folderGraph(files))).toEqual([]);
  });
});

describe("the cycle finder", () => {
  it("detects a cycle when there is one (the checks above can fail)", () => {
    expect(cycles(new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["a"]]]))).toEqual([["a", "b", "c"]]);
  });
});
