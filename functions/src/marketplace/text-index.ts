import MiniSearch, { type Options } from "minisearch";

/**
 * MiniSearch, with what the marketplace needs beyond its public API, through the members it keeps
 * `protected` for subclasses: the indexed words near a misspelt one (spelling suggestions), and a
 * compact form that a cold instance loads without decoding every posting (§18's snapshot).
 *
 * Packed, the index stays bytes until a search touches it: loading 50,000 modules builds
 * neither the word tree (about 60,000 words) nor the two million postings beneath it, only the
 * branches and words a search reaches.
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

  /**
   * A packed index loaded again, for documents `ids` (in the order it was packed with); null if it
   * was packed with other fields. Nothing is unpacked ahead: a word's branch of the word tree and
   * its postings when a search first reaches them, a document's field lengths when it is scored.
   */
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
    const isDocument = (shortId: number) => Number.isInteger(shortId) && shortId >= 0 && shortId < ids.length;
    const fieldLengths = (shortId: number) => packed.fieldLengths.subarray(shortId * fieldCount, (shortId + 1) * fieldCount) as unknown as number[];
    index._documentIds = new PackedMap(
      () => ids.map((id, shortId) => [shortId, id]),
      (shortId) => (isDocument(shortId) ? ids[shortId] : undefined),
    );
    index._fieldLength = new PackedMap(
      () => ids.map((_, shortId) => [shortId, fieldLengths(shortId)]),
      (shortId) => (isDocument(shortId) ? fieldLengths(shortId) : undefined),
    );
    // Only changes look documents up by id.
    index._idToShortId = new PackedMap(() => ids.map((id, shortId) => [id, shortId]));
    index._avgFieldLength = [...packed.averageFieldLength];
    const tree = radixTree(packed.terms, (i) => new PackedMap(() => decodePostings(packed.postings, packed.offsets[i])), 0, packed.terms.length, 0);
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
function decodePostings(bytes: Uint8Array, at: number): [number, DocumentFrequencies][] {
  const reader = new VarintReader(bytes, at);
  const fields: [number, DocumentFrequencies][] = [];
  for (let count = reader.read(); count > 0; count -= 1) {
    const fieldId = reader.read();
    const documents: DocumentFrequencies = new Map();
    let document = 0;
    for (let postings = reader.read(); postings > 0; postings -= 1) {
      document += reader.read();
      documents.set(document, reader.read());
    }
    fields.push([fieldId, documents]);
  }
  return fields;
}

/** SearchableMap's radix tree: a Map per node, children under the prefix they share, a word's value under "". */
type RadixTree = Map<string, unknown>;

/**
 * The radix tree of `words` (unique, in code unit order) that inserting them one by one would
 * build (siblings never share a first letter), each node built when first read: sorted, the
 * words under a node are a range, and a group's shared prefix is what its first and last share.
 */
function radixTree(words: readonly string[], valueOf: (i: number) => unknown, start: number, end: number, depth: number): RadixTree {
  return new PackedMap(() => {
    const children: [string, unknown][] = [];
    let i = start;
    if (i < end && words[i].length === depth) children.push(["", valueOf(i++)]);
    while (i < end) {
      const first = words[i];
      let next = i + 1;
      while (next < end && words[next][depth] === first[depth]) next += 1;
      const last = words[next - 1];
      let shared = depth + 1;
      while (shared < first.length && shared < last.length && first[shared] === last[shared]) shared += 1;
      children.push([first.slice(depth, shared), radixTree(words, valueOf, i, next, shared)]);
      i = next;
    }
    return children;
  });
}

/**
 * A Map whose entries stay packed until it is used as a whole (its size, an iteration): `entries`
 * then lists them. Given `read`, which reads one packed key's value (undefined when there is
 * none), keys are read, set and deleted without unpacking the rest; without it, any use unpacks.
 * Either way a reader (MiniSearch searching, adding, discarding, vacuuming) sees an ordinary Map.
 */
class PackedMap<K, V> extends Map<K, V> {
  #entries: (() => Iterable<readonly [K, V]>) | null;
  readonly #read: ((key: K) => V | undefined) | null;
  /** Keys set or deleted while packed, whose packed values no longer count. */
  readonly #changed = new Set<K>();

  constructor(entries: () => Iterable<readonly [K, V]>, read?: (key: K) => V | undefined) {
    super();
    this.#entries = entries;
    this.#read = read ?? null;
  }

  #unpacked() {
    const entries = this.#entries;
    if (!entries) return;
    this.#entries = null;
    const own = [...super.entries()];
    super.clear();
    for (const [key, value] of entries()) if (!this.#changed.has(key)) super.set(key, value);
    for (const [key, value] of own) super.set(key, value);
    this.#changed.clear();
  }

  /** Whether keys are still read from the packed entries (unpacking first when they cannot be read one by one). */
  #reading(): boolean {
    if (this.#entries && !this.#read) this.#unpacked();
    return this.#entries !== null;
  }

  override get size() {
    this.#unpacked();
    return super.size;
  }
  override get(key: K) {
    if (!this.#reading() || super.has(key) || this.#changed.has(key)) return super.get(key);
    return this.#read!(key);
  }
  override has(key: K) {
    if (!this.#reading() || super.has(key) || this.#changed.has(key)) return super.has(key);
    return this.#read!(key) !== undefined;
  }
  override set(key: K, value: V) {
    if (this.#reading()) this.#changed.add(key);
    return super.set(key, value);
  }
  override delete(key: K) {
    const had = this.has(key);
    if (this.#reading()) this.#changed.add(key);
    super.delete(key);
    return had;
  }
  override clear() {
    this.#entries = null;
    this.#changed.clear();
    super.clear();
  }
  override forEach(callback: (value: V, key: K, map: Map<K, V>) => void, thisArg?: unknown) {
    this.#unpacked();
    super.forEach(callback, thisArg);
  }
  override keys() {
    this.#unpacked();
    return super.keys();
  }
  override values() {
    this.#unpacked();
    return super.values();
  }
  override entries() {
    this.#unpacked();
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
