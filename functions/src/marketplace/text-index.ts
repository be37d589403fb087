import MiniSearch, { type Options } from "minisearch";

/**
 * MiniSearch, with what the marketplace needs beyond its public API, through the members it keeps
 * `protected` for subclasses: the indexed words near a misspelt one (spelling suggestions), and a
 * compact form that a cold instance loads without decoding every posting (§18's snapshot).
 *
 * Packed, a word's postings are bytes until a search first touches the word: loading 50,000
 * modules builds only the word tree (about 60,000 words, in one pass), not the two million
 * postings beneath it.
 */
export class TextIndex<T> extends MiniSearch<T> {
  /** Indexed words within `maxEdits` of `word` (itself included), nearest first, then those in the most documents. */
  spellings(word: string, maxEdits: number): Spelling[] {
    const found: Spelling[] = [];
    for (const [term, [data, distance]] of this._index.fuzzyGet(word, maxEdits)) {
      let documents = 0;
      for (const postings of data.values()) documents += postings.size;
      found.push({ term, distance, documents });
    }
    return found.sort((a, b) => a.distance - b.distance || b.documents - a.documents || (a.term < b.term ? -1 : 1));
  }

  /** The ids of the documents that hold every one of `terms` as it is (in any field), without scoring them. */
  documentsWithEvery(terms: readonly string[]): unknown[] {
    const holders = terms
      .map((term) => {
        const documents = new Set<number>();
        for (const postings of this._index.get(term)?.values() ?? []) for (const shortId of postings.keys()) documents.add(shortId);
        return documents;
      })
      .sort((a, b) => a.size - b.size);
    if (holders.length === 0) return [];
    return [...holders[0]].filter((shortId) => this._documentIds.has(shortId) && holders.every((documents) => documents.has(shortId))).map((shortId) => this._documentIds.get(shortId));
  }

  /**
   * The index with its documents numbered by their place in `ids`, which must name exactly the
   * documents it holds. Postings of documents discarded but not yet vacuumed are left out.
   */
  pack(ids: readonly string[]): PackedTextIndex {
    const place = new Map<number, number>();
    const fieldNames = Object.keys(this._fieldIds);
    const fieldLengths = new Uint32Array(ids.length * fieldNames.length);
    ids.forEach((id, at) => {
      const shortId = this._idToShortId.get(id);
      if (shortId === undefined) throw new Error(`The text index does not hold ${id}.`);
      place.set(shortId, at);
      const lengths = this._fieldLength.get(shortId) ?? [];
      fieldNames.forEach((_, fieldId) => (fieldLengths[at * fieldNames.length + fieldId] = lengths[fieldId] ?? 0));
    });
    if (place.size !== this._documentIds.size) throw new Error("The ids given are not every document of the text index.");
    const terms: string[] = [];
    const offsets: number[] = [];
    const bytes = new VarintWriter();
    // In code unit order, which `unpack` builds the word tree from in one pass.
    const words = [...this._index.keys()].sort((a, b) => (a < b ? -1 : 1));
    for (const term of words) {
      const data = this._index.get(term)!;
      const fields = [...data].map(([fieldId, postings]) => {
        const docs = [...postings].flatMap(([shortId, frequency]) => {
          const at = place.get(shortId);
          return at === undefined ? [] : [[at, frequency] as const];
        });
        return { fieldId, docs: docs.sort((a, b) => a[0] - b[0]) };
      });
      const kept = fields.filter((field) => field.docs.length > 0);
      if (kept.length === 0) continue;
      terms.push(term);
      offsets.push(bytes.length);
      bytes.write(kept.length);
      for (const { fieldId, docs } of kept) {
        bytes.write(fieldId);
        bytes.write(docs.length);
        let previous = 0;
        for (const [at, frequency] of docs) {
          bytes.write(at - previous);
          bytes.write(frequency);
          previous = at;
        }
      }
    }
    return { fields: fieldNames, averageFieldLength: [...this._avgFieldLength], fieldLengths, terms, offsets: Uint32Array.from(offsets), postings: bytes.bytes() };
  }

  /** A packed index loaded again, for documents `ids` (in the order it was packed with); null if it was packed with other fields. */
  static unpack<T>(packed: PackedTextIndex, ids: readonly string[], options: Options<T>): TextIndex<T> | null {
    const index = new TextIndex<T>(options);
    const fieldNames = Object.keys(index._fieldIds);
    if (fieldNames.join("\n") !== packed.fields.join("\n")) return null;
    const consistent =
      packed.fieldLengths.length === ids.length * fieldNames.length &&
      packed.terms.length === packed.offsets.length &&
      packed.offsets.every((offset) => offset < packed.postings.length) &&
      packed.terms.every((term, i) => i === 0 || packed.terms[i - 1] < term);
    if (!consistent) throw new Error("The packed text index is inconsistent.");
    index._documentCount = ids.length;
    index._nextId = ids.length;
    const fieldCount = fieldNames.length;
    for (let at = 0; at < ids.length; at += 1) {
      index._documentIds.set(at, ids[at]);
      const lengths = new Array<number>(fieldCount);
      for (let fieldId = 0; fieldId < fieldCount; fieldId += 1) lengths[fieldId] = packed.fieldLengths[at * fieldCount + fieldId];
      index._fieldLength.set(at, lengths);
    }
    // Only changes look documents up by id, so that map is filled on the first.
    index._idToShortId = new LazyMap((map) => ids.forEach((id, at) => map.set(id, at)));
    index._avgFieldLength = [...packed.averageFieldLength];
    const tree = radixTree(packed.terms, (i) => new LazyMap<number, DocumentFrequencies>((map) => decodePostings(packed.postings, packed.offsets[i], map)), 0, packed.terms.length, 0);
    index._index = new (index._index.constructor as new (tree: RadixTree) => typeof index._index)(tree);
    return index;
  }
}

export interface Spelling {
  term: string;
  /** Edits (Levenshtein) from the word asked about. */
  distance: number;
  /** Documents holding it, counted once per field. */
  documents: number;
}

/** A text index in compact form: what `TextIndex.pack` gives and `TextIndex.unpack` takes. */
export interface PackedTextIndex {
  /** The indexed fields in the order of their ids. */
  fields: string[];
  averageFieldLength: number[];
  /** Each document's unique words per field, `fields.length` numbers a document. */
  fieldLengths: Uint32Array;
  terms: string[];
  /** Where each term's postings start in `postings`. */
  offsets: Uint32Array;
  /** Per term, as unsigned LEB128 numbers: fields; per field its id, a count, then (document gap, frequency) pairs. */
  postings: Uint8Array;
}

type DocumentFrequencies = Map<number, number>;

/** A word's postings from their packed bytes: field id → document → frequency, as MiniSearch keeps them. */
function decodePostings(bytes: Uint8Array, at: number, into: Map<number, DocumentFrequencies>) {
  const reader = new VarintReader(bytes, at);
  for (let fields = reader.read(); fields > 0; fields -= 1) {
    const fieldId = reader.read();
    const documents: DocumentFrequencies = new Map();
    let document = 0;
    for (let count = reader.read(); count > 0; count -= 1) {
      document += reader.read();
      documents.set(document, reader.read());
    }
    into.set(fieldId, documents);
  }
}

/** SearchableMap's radix tree: a Map per node, children under the prefix they share, a word's value under "". */
type RadixTree = Map<string, unknown>;

/**
 * The radix tree of `words` (unique, in code unit order), built in one pass: the tree inserting
 * them one by one would build (siblings never share a first letter), without walking it from
 * the root for each word.
 */
function radixTree(words: readonly string[], valueOf: (i: number) => unknown, start: number, end: number, depth: number): RadixTree {
  const node: RadixTree = new Map();
  let i = start;
  if (i < end && words[i].length === depth) node.set("", valueOf(i++));
  while (i < end) {
    const first = words[i];
    let next = i + 1;
    while (next < end && words[next][depth] === first[depth]) next += 1;
    // Sorted, the words of a group share what its first and last share.
    const last = words[next - 1];
    let shared = depth + 1;
    while (shared < first.length && shared < last.length && first[shared] === last[shared]) shared += 1;
    node.set(first.slice(depth, shared), radixTree(words, valueOf, i, next, shared));
    i = next;
  }
  return node;
}

/**
 * A Map filled on first use: every method fills it first, so a reader (MiniSearch searching,
 * adding, discarding, vacuuming) sees an ordinary Map.
 */
class LazyMap<K, V> extends Map<K, V> {
  #fill: ((map: Map<K, V>) => void) | null;

  constructor(fill: (map: Map<K, V>) => void) {
    super();
    this.#fill = fill;
  }

  #filled() {
    const fill = this.#fill;
    if (fill) {
      this.#fill = null;
      fill(this);
    }
  }

  override get size() {
    this.#filled();
    return super.size;
  }
  override get(key: K) {
    this.#filled();
    return super.get(key);
  }
  override has(key: K) {
    this.#filled();
    return super.has(key);
  }
  override set(key: K, value: V) {
    this.#filled();
    return super.set(key, value);
  }
  override delete(key: K) {
    this.#filled();
    return super.delete(key);
  }
  override clear() {
    this.#fill = null;
    super.clear();
  }
  override forEach(callback: (value: V, key: K, map: Map<K, V>) => void, thisArg?: unknown) {
    this.#filled();
    super.forEach(callback, thisArg);
  }
  override keys() {
    this.#filled();
    return super.keys();
  }
  override values() {
    this.#filled();
    return super.values();
  }
  override entries() {
    this.#filled();
    return super.entries();
  }
  override [Symbol.iterator]() {
    return this.entries();
  }
}

/** Unsigned LEB128: 7 bits a byte, low bits first. */
class VarintWriter {
  private buffer = new Uint8Array(1 << 16);
  length = 0;

  write(value: number) {
    if (this.length + 5 > this.buffer.length) {
      const grown = new Uint8Array(this.buffer.length * 2);
      grown.set(this.buffer);
      this.buffer = grown;
    }
    let rest = value;
    while (rest >= 0x80) {
      this.buffer[this.length++] = (rest & 0x7f) | 0x80;
      rest >>>= 7;
    }
    this.buffer[this.length++] = rest;
  }

  bytes(): Uint8Array {
    return this.buffer.slice(0, this.length);
  }
}

class VarintReader {
  constructor(
    private readonly bytes: Uint8Array,
    private at: number,
  ) {}

  read(): number {
    let value = 0;
    let shift = 0;
    let byte: number;
    do {
      if (this.at >= this.bytes.length) throw new Error("The packed text index ends early.");
      byte = this.bytes[this.at++];
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return value;
  }
}
