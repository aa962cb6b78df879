/**
 * Incremental full-text index for the in-memory adapter.
 *
 * lunr builds an immutable index, and rebuilding it for every write costs about a minute at 100k
 * documents. This module reuses lunr's text pipeline but keeps its own postings, updated per
 * document, and scores at query time with the formula lunr bakes into its field vectors at build
 * time (lunr 2.3.9, `lunr.Builder#createFieldVectors` and `lunr.Index#query`). For a given set of
 * documents the scores equal those of `lunr()` over the same documents, whatever sequence of
 * upserts and removes produced that set.
 */
import { LUNR_ANALYZER, type FullTextAnalyzer } from './fulltext-analysis';
import {
  createPostings,
  removeDocument,
  settle,
  termIdOf,
  upsertDocument,
  type AnalysedDocument,
  type Postings,
} from './fulltext-postings';
import { scorePostings } from './fulltext-query';
import { GENERATION, RELEASES_HIGH, RELEASES_LOW, RESOLUTION_STRIDE, TERM_ID, UNRESOLVED, TokenTable } from './fulltext-tokens';

/** The term id of a token entry the analyzer drops (a stop word): it adds no term. */
const DROPPED = -2;

export type { FullTextAnalyzer } from './fulltext-analysis';

export interface FullTextFieldConfig {
  name: string;
  boost?: number;
}

interface FullTextSearchOptions {
  /**
   * Only documents that match every query term (a prefix term: any of its expansions) are returned.
   * Scores are unchanged. Default false: lunr's OR semantics.
   */
  requireAllTerms?: boolean;
}

export interface FullTextIndex {
  /** Adds or replaces the document with this id. Fields absent or empty contribute nothing. */
  upsert(id: string, fields: Readonly<Record<string, string | undefined>>): void;
  /** Removes the document; unknown ids are ignored. */
  remove(id: string): void;
  /**
   * `upsert` and `remove` for a caller that numbers its documents itself (the memory search's slot
   * table): the document `id` in `slot` (small, reused after removal), with no map from ids to slots
   * kept here. An index is used through one pair or the other, never both.
   */
  upsertAt(slot: number, id: string, fields: Readonly<Record<string, string | undefined>>): void;
  removeAt(slot: number): void;
  /** Number of documents. */
  readonly size: number;
  /**
   * Evaluates a user query. Returns matching ids with scores (higher is better).
   * Query syntax: whitespace-separated terms; a term matches a document that contains it in any field
   * (OR semantics across terms, like lunr's default); `term*` is a prefix match (trailing wildcard);
   * `*` alone or an empty/blank query means "match all" and returns `undefined` (the caller then does not filter by text).
   * Terms that are only stop words or punctuation contribute nothing; if no term survives the pipeline
   * the result is an empty Map (not undefined).
   *
   * As in lunr, hyphens separate terms like whitespace does, and query terms are lower-cased and
   * stemmed but not trimmed of punctuation. Prefix terms are neither stemmed nor trimmed. lunr's
   * operators (`field:`, `^boost`, `~distance`, `+`/`-` presence, inner or leading `*`) are not
   * supported: those characters are part of the term. A bare `*` next to other terms is ignored.
   */
  search(query: string, options?: FullTextSearchOptions): Map<string, number> | undefined;
}

export function createFullTextIndex(fields: readonly FullTextFieldConfig[], options: { analyzer?: FullTextAnalyzer } = {}): FullTextIndex {
  const analyzer = options.analyzer ?? LUNR_ANALYZER;
  const boosts = fields.map(validatedBoost);
  const names = fields.map((field) => field.name);
  if (new Set(names).size !== names.length) {
    throw new RangeError(`Full-text field names must be unique, got: ${names.join(', ')}`);
  }
  const fieldCount = names.length;
  const postings = createPostings(fieldCount);
  const analyse = documentAnalysis(postings, analyzer);

  // Slots by id for `upsert` and `remove` (a slot is reused after its document was removed).
  const slotById = new Map<string, number>();
  const freeSlots: number[] = [];

  function upsertAt(slot: number, id: string, values: Readonly<Record<string, string | undefined>>): void {
    const analysed = fieldCount === 3 ? analyse3(values) : analyse(names.map((name) => values[name]));
    upsertDocument(postings, slot, id, analysed);
  }

  /** The three fields of the memory search without an array of their values per document. */
  const three: Array<string | undefined> = [undefined, undefined, undefined];
  function analyse3(values: Readonly<Record<string, string | undefined>>) {
    three[0] = values[names[0]!];
    three[1] = values[names[1]!];
    three[2] = values[names[2]!];
    const analysed = analyse(three);
    three[0] = three[1] = three[2] = undefined;
    return analysed;
  }

  function upsert(id: string, values: Readonly<Record<string, string | undefined>>): void {
    let slot = slotById.get(id);
    if (slot === undefined) {
      slot = freeSlots.pop() ?? slotById.size;
      slotById.set(id, slot);
    }
    upsertAt(slot, id, values);
  }

  function remove(id: string): void {
    const slot = slotById.get(id);
    if (slot === undefined) return;
    slotById.delete(id);
    freeSlots.push(slot);
    removeDocument(postings, slot);
  }

  function search(query: string, searchOptions: FullTextSearchOptions = {}): Map<string, number> | undefined {
    const terms = analyzer.queryTerms(query);
    if (terms === undefined) return undefined;
    settle(postings);
    return scorePostings(postings, boosts, terms, searchOptions.requireAllTerms === true);
  }

  return {
    upsert,
    remove,
    upsertAt,
    removeAt: (slot) => removeDocument(postings, slot),
    search,
    // eslint-disable-next-line no-restricted-syntax -- one object per index made, not one per call
    get size() {
      return postings.documentCount;
    },
  };
}

function validatedBoost(field: FullTextFieldConfig): number {
  const boost = field.boost ?? 1;
  // lunr silently treats a boost of 0 as 1 (`boost || 1`); reject it rather than surprise the caller.
  if (!Number.isFinite(boost) || boost <= 0) {
    throw new RangeError(`Full-text field '${field.name}' needs a positive finite boost, got ${boost}`);
  }
  return boost;
}

// eslint-disable-next-line no-control-regex -- the whole ASCII range, control characters included
const ASCII = /^[\x00-\x7f]*$/;

/**
 * Analyses a document's field values into one `AnalysedDocument` reused from call to call: no array
 * or string per token. Terms are resolved to their ids in the vocabulary as they come (new ones are
 * added, with no postings until `upsertDocument` stores the document). With a tokenizing analyzer the
 * tokens are found through a TokenTable; otherwise the analyzer's terms are looked up one by one.
 */
function documentAnalysis(postings: Postings, analyzer: FullTextAnalyzer): (values: ReadonlyArray<string | undefined>) => AnalysedDocument {
  const { fieldCount, generations } = postings;
  const document: AnalysedDocument = {
    lengths: new Array<number>(fieldCount).fill(0),
    starts: new Int32Array(fieldCount + 1),
    terms: new Int32Array(64),
    frequencies: new Int32Array(64),
  };
  // [term id] → the field pass that last saw it, and where in `document.terms`: a frequency is
  // counted without a map per field. Grown with the vocabulary.
  let seenIn = new Int32Array(1024);
  let seenAt = new Int32Array(1024);
  let pass = 0;
  let count = 0;
  /** The vocabulary's count of released terms, its low and high 32 bits (as the token table keeps them). */
  let releasesLow = 0;
  let releasesHigh = 0;
  let length = 0;
  const { tokens: tokensOf, indexTerm } = analyzer;
  const table = tokensOf && indexTerm ? new TokenTable(indexTerm) : undefined;

  function addTerm(termId: number): void {
    length++;
    if (termId >= seenIn.length) {
      const size = Math.max(termId + 1, seenIn.length * 2);
      const grownIn = new Int32Array(size);
      grownIn.set(seenIn);
      seenIn = grownIn;
      const grownAt = new Int32Array(size);
      grownAt.set(seenAt);
      seenAt = grownAt;
    }
    if (seenIn[termId] === pass) {
      document.frequencies[seenAt[termId]!]! += 1;
      return;
    }
    if (count === document.terms.length) {
      const terms = new Int32Array(count * 2);
      terms.set(document.terms);
      document.terms = terms;
      const frequencies = new Int32Array(count * 2);
      frequencies.set(document.frequencies);
      document.frequencies = frequencies;
    }
    seenIn[termId] = pass;
    seenAt[termId] = count;
    document.terms[count] = termId;
    document.frequencies[count] = 1;
    count++;
  }

  /**
   * A token's term id through its table entry: remembered, and known good while the vocabulary
   * released no term since; else good unless the id left the vocabulary since (its generation moved).
   */
  function addEntry(entry: number): void {
    const resolutions = table!.resolutions;
    const at = entry * RESOLUTION_STRIDE;
    const termId = resolutions[at + TERM_ID]!;
    if (termId >= 0 && resolutions[at + RELEASES_LOW] === releasesLow && resolutions[at + RELEASES_HIGH] === releasesHigh) addTerm(termId);
    else if (termId !== DROPPED) {
      const resolved = resolve(entry, resolutions, at, termId);
      if (resolved !== DROPPED) addTerm(resolved);
    }
  }

  /** The entry's term id, looked up again where it may be stale (and remembered); DROPPED: no term. */
  function resolve(entry: number, resolutions: Int32Array, at: number, remembered: number): number {
    let termId = remembered;
    if (termId === UNRESOLVED || generations[termId] !== resolutions[at + GENERATION]) {
      // Never looked up, or the id left the vocabulary (and may name another term now).
      const term = table!.terms[entry]!;
      if (term === null) {
        resolutions[at + TERM_ID] = DROPPED;
        return DROPPED;
      }
      termId = termIdOf(postings, term);
      resolutions[at + TERM_ID] = termId;
      resolutions[at + GENERATION] = generations[termId]!;
    }
    resolutions[at + RELEASES_LOW] = releasesLow;
    resolutions[at + RELEASES_HIGH] = releasesHigh;
    return termId;
  }

  return (values) => {
    count = 0;
    // Nothing leaves the vocabulary while a document is analysed.
    releasesLow = postings.releases | 0;
    releasesHigh = Math.floor(postings.releases / 2 ** 32);
    for (let field = 0; field < fieldCount; field++) {
      // Pass numbers only grow: a term seen in an earlier field or document counts anew.
      pass = pass === 0x7fffffff ? 1 : pass + 1;
      if (pass === 1) seenIn.fill(0);
      document.starts[field] = count;
      length = 0;
      const value = values[field];
      // typeof, not `=== undefined`: a field named like an Object.prototype member must not index a function.
      if (typeof value === 'string' && value !== '') {
        if (table === undefined) {
          for (const term of analyzer.indexTerms(value)) addTerm(termIdOf(postings, term));
        } else if (ASCII.test(value)) {
          table.scanAscii(value, addEntry);
        } else {
          for (const token of tokensOf!(value)) addEntry(table.entryOf(token));
        }
      }
      document.lengths[field] = length;
    }
    document.starts[fieldCount] = count;
    return document;
  };
}
