import fc from "fast-check";
import type { Options, SearchOptions } from "minisearch";
import { TextIndex } from "./text-index";

interface Doc {
  id: string;
  title: string;
  body: string;
}

const OPTIONS: Options<Doc> = { fields: ["title", "body"], storeFields: [], searchOptions: { boost: { title: 2 } } };

// A small alphabet, so that documents share words, words share prefixes and typos find neighbours.
const word = fc.stringMatching(/^[abcde]{1,6}$/);
const text = fc.array(word, { maxLength: 8 }).map((words) => words.join(" "));
const docs = fc.uniqueArray(fc.record({ id: fc.stringMatching(/^[a-z]{1,8}$/), title: text, body: text }), { selector: (doc) => doc.id, maxLength: 30 });
const query = fc.record({ words: fc.array(word, { minLength: 1, maxLength: 3 }), prefix: fc.boolean(), fuzzy: fc.constantFrom(0, 1, 2), combineWith: fc.constantFrom("AND", "OR") });

const searched = (index: TextIndex<Doc>, asked: { words: string[]; prefix: boolean; fuzzy: number; combineWith: string }) =>
  index
    .search(asked.words.join(" "), { prefix: asked.prefix, fuzzy: asked.fuzzy, combineWith: asked.combineWith } as SearchOptions)
    .map((result) => ({ id: result.id as string, score: result.score, match: result.match }))
    .sort((a, b) => (a.id < b.id ? -1 : 1));

/**
 * The same results: ids and matches exactly, scores to a relative 1e-12. Words matched by prefix
 * or typo may be summed in another order, so the last bits differ; rounding both to 12 digits
 * failed on a sum that fell either side of a rounding boundary (2.0892836422550003 against
 * 2.089283642255).
 */
function expectSameResults(actual: ReturnType<typeof searched>, expected: ReturnType<typeof searched>) {
  expect(actual.map(({ id, match }) => ({ id, match }))).toEqual(expected.map(({ id, match }) => ({ id, match })));
  actual.forEach((result, index) => expect(Math.abs(result.score - expected[index].score)).toBeLessThanOrEqual(1e-12 * Math.abs(expected[index].score)));
}

const built = (documents: Doc[], discarded: string[] = []) => {
  const index = new TextIndex<Doc>(OPTIONS);
  index.addAll(documents);
  for (const id of discarded) index.discard(id);
  return index;
};
const idsOf = (index: TextIndex<Doc>, documents: Doc[]) => documents.map((doc) => doc.id).filter((id) => index.has(id));

describe("the text index's packed form (§18's snapshot)", () => {
  it("searches, spells and intersects exactly as the index it was packed from", () => {
    fc.assert(
      fc.property(docs, fc.array(query, { maxLength: 8 }), (documents, queries) => {
        const index = built(documents);
        const ids = idsOf(index, documents);
        const unpacked = TextIndex.unpack(index.pack(ids), ids, OPTIONS)!;
        for (const asked of queries) {
          expectSameResults(searched(unpacked, asked), searched(index, asked));
          expect(unpacked.spellings(asked.words[0], asked.fuzzy)).toEqual(index.spellings(asked.words[0], asked.fuzzy));
          expect(unpacked.documentsWithEvery(asked.words).sort()).toEqual(index.documentsWithEvery(asked.words).sort());
        }
      }),
    );
  });

  it("leaves out what was discarded, and takes changes afterwards as the original does", async () => {
    await fc.assert(
      fc.asyncProperty(docs, fc.array(query, { maxLength: 5 }), async (documents, queries) => {
        const discarded = documents.filter((_, i) => i % 3 === 0).map((doc) => doc.id);
        const index = built(documents, discarded);
        const ids = idsOf(index, documents);
        const unpacked = TextIndex.unpack(index.pack(ids), ids, OPTIONS)!;
        // Packed without the discarded documents: as an index that never held them.
        const fresh = built(documents.filter((doc) => !discarded.includes(doc.id)));
        const found = (index: TextIndex<Doc>, asked: (typeof queries)[number]) => searched(index, asked).map((result) => result.id);
        for (const asked of queries) expect(found(unpacked, asked)).toEqual(found(fresh, asked));
        // Then the same changes on both, while nothing was unpacked yet: one more discarded, one
        // replaced, one added; then everything vacuumed.
        for (const each of [fresh, unpacked]) {
          if (ids.length > 0) each.discard(ids[0]);
          if (ids.length > 1) each.replace({ id: ids[1], title: "abc", body: "dd" });
          each.add({ id: "added", title: "abc abd", body: "e" });
        }
        for (const asked of queries) expect(found(unpacked, asked)).toEqual(found(fresh, asked));
        expect(unpacked.documentCount).toBe(fresh.documentCount);
        await Promise.all([fresh.vacuum(), unpacked.vacuum()]);
        for (const asked of queries) expect(found(unpacked, asked)).toEqual(found(fresh, asked));
        expect(unpacked.termCount).toBe(fresh.termCount);
      }),
    );
  });

  it("is refused for other fields, and inconsistent when cut", () => {
    const index = built([{ id: "a", title: "abc", body: "de" }]);
    const packed = index.pack(["a"]);
    expect(TextIndex.unpack(packed, ["a"], { ...OPTIONS, fields: ["title"] })).toBeNull();
    expect(() => TextIndex.unpack({ ...packed, postings: packed.postings.subarray(0, 1) }, ["a"], OPTIONS)).toThrow("inconsistent");
    expect(() => index.pack(["a", "b"])).toThrow("does not hold b");
    expect(() => built([{ id: "a", title: "x", body: "" }, { id: "b", title: "y", body: "" }]).pack(["a"])).toThrow("not every document");
  });
});

describe("spellings", () => {
  it("lists indexed words within the edits, nearest first, then the most common", () => {
    const index = built([
      { id: "1", title: "charts", body: "chart" },
      { id: "2", title: "charts", body: "" },
      { id: "3", title: "chard", body: "chat" },
    ]);
    expect(index.spellings("chxrts", 2).map((spelling) => spelling.term)).toEqual(["charts", "chart"]);
    expect(index.spellings("chart", 0)).toEqual([{ term: "chart", distance: 0, documents: 1 }]);
  });
});
