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
import lunr from 'lunr';

export interface FullTextFieldConfig {
  name: string;
  boost?: number;
}

/** A parsed query term: an index term to match exactly, or a prefix of index terms. */
type QueryTerm = { readonly exact: string } | { readonly prefix: string };

/**
 * How field values and queries become terms. The default is lunr's own: `lunr.tokenizer`, then
 * trimmer, stop-word filter and stemmer for the index; the stemmer only for query terms.
 */
export interface FullTextAnalyzer {
  /** The index terms of one field value, in order (a repeated term counts again). */
  indexTerms(value: string): string[];
  /** The terms of a query, or undefined for "match all". */
  queryTerms(query: string): QueryTerm[] | undefined;
  /**
   * Optional, both or neither: `indexTerms(value)` split in two, the tokens of a value and the term of
   * one token (null when dropped). With them the index remembers each token's term and term id, one
   * map lookup per token instead of two. Tokens of digits only are not remembered (counters in names).
   */
  tokens?(value: string): string[];
  indexTerm?(token: string): string | null;
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

// BM25 parameters: the defaults of lunr.Builder (`_k1`, `_b`).
const K1 = 1.2;
const B = 0.75;

// The pipelines `lunr()` installs: indexing trims, drops stop words and stems; searching only stems.
// Stop words therefore never match, because they were never indexed.
const indexPipeline = new lunr.Pipeline();
indexPipeline.add(lunr.trimmer, lunr.stopWordFilter, lunr.stemmer);
const searchPipeline = new lunr.Pipeline();
searchPipeline.add(lunr.stemmer);

/**
 * The postings of one term: one number per (document, field) holding it, `key × FREQUENCY_SPACE +
 * frequency` where key is slot × number of fields + field, unordered. One array per term: at 100k
 * documents most terms (URN parts, names) belong to one or two documents, and an object per term and
 * field with two growable arrays each took more heap than the documents themselves; a pair of numbers
 * per posting took twice the room of one.
 * lunr's document frequency (`lunr.idf`) counts (document, field) pairs, not documents: it is the
 * number of postings here (a term present in two fields of one document counts twice).
 */
type TermPostings = number[];

/** Room for a frequency in a posting; a term repeated more often in one field counts this often less one. */
const FREQUENCY_SPACE = 2 ** 21;
/** Room for a position in a document's term list (postings of one term, at most fields × documents). */
const POSITION_SPACE = 2 ** 27;

/**
 * The distinct terms of one document, per field, each with where its posting sits in that term's
 * postings (so the document can be removed): `term id × POSITION_SPACE + position`, exact size.
 */
type DocumentTerms = number[];

/** One field value analysed: its length in terms, and its distinct terms with their frequencies. */
interface AnalysedField {
  length: number;
  terms: string[];
  frequencies: number[];
  /** With a tokenizing analyzer: the remembered token of each distinct term (its id may be stale). */
  known?: TokenTerm[];
}

/** What a token stands for: its term (null when dropped) and the term's id when last seen (-1: none). */
interface TokenTerm {
  readonly term: string | null;
  id: number;
}

/** Tokens remembered per index; cleared when full, so it stays bounded whatever the vocabulary. */
const TOKEN_CACHE_LIMIT = 20_000;

const LUNR_ANALYZER: FullTextAnalyzer = {
  indexTerms: lunrIndexTerms,
  queryTerms: parseQuery,
};

export function createFullTextIndex(fields: readonly FullTextFieldConfig[], options: { analyzer?: FullTextAnalyzer } = {}): FullTextIndex {
  const analyzer = options.analyzer ?? LUNR_ANALYZER;
  const boosts = fields.map(validatedBoost);
  const names = fields.map((field) => field.name);
  if (new Set(names).size !== names.length) {
    throw new RangeError(`Full-text field names must be unique, got: ${names.join(', ')}`);
  }

  // Terms by id: a document's list holds numbers, not strings beside positions.
  const termIds = new Map<string, number>();
  const postingsOf: (TermPostings | undefined)[] = [];
  const termOf: (string | undefined)[] = [];
  const freeTermIds: number[] = [];
  // Documents live in numbered slots (reused after removal) so that scoring, which touches every
  // posting of every query term, indexes arrays instead of hashing string ids.
  const slotById = new Map<string, number>();
  const idBySlot: (string | undefined)[] = [];
  const freeSlots: number[] = [];
  /** [field][slot]: number of terms left by the pipeline (lunr's field length). */
  const fieldLengths: number[][] = names.map(() => []);
  /** [slot]: the document's distinct terms per field and their positions, so its postings can be removed. */
  const termsBySlot: (DocumentTerms | undefined)[] = [];
  // Sums of field lengths, so average field lengths stay exact under removal (integers, no drift).
  const totalLengths = names.map(() => 0);

  const fieldCount = names.length;

  const { tokens: tokensOf, indexTerm } = analyzer;
  const tokenTerms = new Map<string, TokenTerm>();

  /** As `analyse`, through the remembered tokens. */
  function analyseTokens(value: string | undefined, split: (value: string) => string[], termOfToken: (token: string) => string | null) {
    if (typeof value !== 'string' || value === '') return { length: 0, terms: [], frequencies: [] };
    const terms: string[] = [];
    const frequencies: number[] = [];
    const known: TokenTerm[] = [];
    let positions: Map<string, number> | undefined;
    let length = 0;
    for (const token of split(value)) {
      let tokenTerm = tokenTerms.get(token);
      if (tokenTerm === undefined) {
        tokenTerm = { term: termOfToken(token), id: -1 };
        if (!isDigits(token)) {
          if (tokenTerms.size >= TOKEN_CACHE_LIMIT) tokenTerms.clear();
          tokenTerms.set(token, tokenTerm);
        }
      }
      const { term } = tokenTerm;
      if (term === null) continue;
      length++;
      // Catalog text is short: a linear search beats allocating a Map per field.
      let i: number | undefined;
      if (positions === undefined) {
        i = terms.indexOf(term);
        if (terms.length >= 64) positions = new Map(terms.map((t, at) => [t, at]));
      } else {
        i = positions.get(term) ?? -1;
      }
      if (i < 0) {
        positions?.set(term, terms.length);
        terms.push(term);
        frequencies.push(1);
        known.push(tokenTerm);
      } else {
        frequencies[i]! += 1;
      }
    }
    return { length, terms, frequencies, known };
  }

  function upsert(id: string, values: Readonly<Record<string, string | undefined>>): void {
    const analysed: AnalysedField[] = [];
    let distinct = 0;
    for (let fieldIndex = 0; fieldIndex < fieldCount; fieldIndex++) {
      const value = values[names[fieldIndex]!];
      const field = tokensOf && indexTerm ? analyseTokens(value, tokensOf, indexTerm) : analyse(analyzer, value);
      analysed.push(field);
      distinct += field.terms.length;
    }
    const existing = slotById.get(id);
    // A document whose terms did not change (a write of other aspects) stays as it is.
    if (existing !== undefined && holds(existing, analysed, distinct)) return;
    remove(id);
    // Like lunr, a document with only empty fields still counts in N and in the average lengths.
    const slot = freeSlots.pop() ?? idBySlot.length;
    slotById.set(id, slot);
    idBySlot[slot] = id;
    for (let fieldIndex = 0; fieldIndex < fieldCount; fieldIndex++) {
      const { length } = analysed[fieldIndex]!;
      fieldLengths[fieldIndex]![slot] = length;
      totalLengths[fieldIndex]! += length;
    }
    // Filled with a fraction first: the entries are not small integers, and an array made for
    // doubles from the start is not converted while it fills.
    const document: DocumentTerms = new Array<number>(distinct).fill(0.5);
    let next = 0;
    for (let fieldIndex = 0; fieldIndex < fieldCount; fieldIndex++) {
      const { terms, frequencies, known } = analysed[fieldIndex]!;
      const key = slot * fieldCount + fieldIndex;
      for (let i = 0; i < terms.length; i++) {
        const term = terms[i]!;
        const posting = key * FREQUENCY_SPACE + Math.min(frequencies[i]!, FREQUENCY_SPACE - 1);
        // A remembered id still names this term unless the term left the vocabulary meanwhile.
        const tokenTerm = known?.[i];
        let id = tokenTerm !== undefined && tokenTerm.id >= 0 && termOf[tokenTerm.id] === term ? tokenTerm.id : termIds.get(term);
        let position = 0;
        if (id === undefined) {
          id = freeTermIds.pop() ?? postingsOf.length;
          termIds.set(term, id);
          termOf[id] = term;
          postingsOf[id] = [posting];
        } else {
          const termPostings = postingsOf[id]!;
          position = termPostings.length;
          termPostings.push(posting);
        }
        if (tokenTerm !== undefined) tokenTerm.id = id;
        document[next++] = id * POSITION_SPACE + position;
      }
    }
    termsBySlot[slot] = document;
  }

  /** Whether the slot holds exactly these terms, frequencies and field lengths. */
  function holds(slot: number, analysed: readonly AnalysedField[], distinct: number): boolean {
    const document = termsBySlot[slot] ?? [];
    if (document.length !== distinct) return false;
    let next = 0;
    for (let fieldIndex = 0; fieldIndex < fieldCount; fieldIndex++) {
      const { length, terms, frequencies } = analysed[fieldIndex]!;
      if (fieldLengths[fieldIndex]![slot] !== length) return false;
      const key = slot * fieldCount + fieldIndex;
      for (let i = 0; i < terms.length; i++, next++) {
        const entry = document[next]!;
        const id = Math.floor(entry / POSITION_SPACE);
        if (termIds.get(terms[i]!) !== id) return false;
        const posting = key * FREQUENCY_SPACE + Math.min(frequencies[i]!, FREQUENCY_SPACE - 1);
        if (postingsOf[id]![entry - id * POSITION_SPACE] !== posting) return false;
      }
    }
    return true;
  }

  function remove(id: string): void {
    const slot = slotById.get(id);
    if (slot === undefined) return;
    slotById.delete(id);
    idBySlot[slot] = undefined;
    freeSlots.push(slot);
    for (let fieldIndex = 0; fieldIndex < fieldCount; fieldIndex++) totalLengths[fieldIndex]! -= fieldLengths[fieldIndex]![slot]!;
    const document = termsBySlot[slot];
    if (document === undefined) return;
    for (let i = 0; i < document.length; i++) {
      const termId = Math.floor(document[i]! / POSITION_SPACE);
      const position = document[i]! - termId * POSITION_SPACE;
      const termPostings = postingsOf[termId]!;
      // Swap-remove: the last posting takes this one's place, and its document learns where it went.
      const last = termPostings.length - 1;
      if (position !== last) {
        const moved = termPostings[last]!;
        termPostings[position] = moved;
        const movedKey = Math.floor(moved / FREQUENCY_SPACE);
        const other = termsBySlot[Math.floor(movedKey / fieldCount)]!;
        const was = termId * POSITION_SPACE + last;
        const at = other.indexOf(was);
        if (at >= 0) other[at] = termId * POSITION_SPACE + position;
      }
      termPostings.length = last;
      // A term no document holds any more must leave the vocabulary: lunr's query vector (and so
      // the score normalisation) only counts terms that exist in the index.
      if (last === 0) {
        termIds.delete(termOf[termId]!);
        termOf[termId] = undefined;
        postingsOf[termId] = undefined;
        freeTermIds.push(termId);
      }
    }
    // Only now: a posting moved within the same document (a term in two of its fields) updates it above.
    termsBySlot[slot] = undefined;
  }

  function postingsFor(term: string): TermPostings | undefined {
    const id = termIds.get(term);
    return id === undefined ? undefined : postingsOf[id];
  }

  function search(query: string, searchOptions: FullTextSearchOptions = {}): Map<string, number> | undefined {
    const terms = analyzer.queryTerms(query);
    if (terms === undefined) return undefined;

    // Each query term with the index terms it stands for: itself, or every term with the prefix.
    const expansions: string[][] = [];
    for (const term of terms) {
      const expansion: string[] = [];
      if ('exact' in term) {
        if (termIds.has(term.exact)) expansion.push(term.exact);
      } else {
        // A linear scan of the vocabulary: a few milliseconds for the ~105k terms of 100k catalog
        // documents, and writes need no sorted structure kept up to date (see bench/fulltext-bench.ts).
        for (const indexed of termIds.keys()) {
          if (indexed.startsWith(term.prefix)) expansion.push(indexed);
        }
      }
      expansions.push(expansion);
    }
    const requireAll = searchOptions.requireAllTerms === true;
    if (requireAll && expansions.some((expansion) => expansion.length === 0)) return new Map();

    // lunr's query vector: one unit per query term for every index term it expands to, summed
    // when several query terms land on the same index term.
    const queryWeights = new Map<string, number>();
    for (const expansion of expansions) for (const term of expansion) queryWeights.set(term, (queryWeights.get(term) ?? 0) + 1);

    // Scores accumulate per slot; `matched` also keeps documents whose (rounded) score is 0, which
    // lunr returns too. For requireAllTerms, `termHits` counts the distinct query terms a slot matched.
    const accumulated = new Float64Array(idBySlot.length);
    const matched = new Uint8Array(idBySlot.length);
    const matchedSlots: number[] = [];
    let squaredMagnitude = 0;
    const documentCount = slotById.size;
    for (const [term, queryWeight] of queryWeights) {
      squaredMagnitude += queryWeight * queryWeight;
      const termPostings = postingsFor(term);
      if (termPostings === undefined) continue;
      const idf = inverseDocumentFrequency(termPostings.length, documentCount);
      for (let i = 0; i < termPostings.length; i++) {
        const posting = termPostings[i]!;
        const key = Math.floor(posting / FREQUENCY_SPACE);
        const frequency = posting - key * FREQUENCY_SPACE;
        const fieldIndex = key % fieldCount;
        const slot = (key - fieldIndex) / fieldCount;
        const averageLength = totalLengths[fieldIndex]! / documentCount;
        const weight = termWeight(idf, frequency, fieldLengths[fieldIndex]![slot]!, averageLength, boosts[fieldIndex]!);
        accumulated[slot]! += queryWeight * weight;
        if (matched[slot] === 0) {
          matched[slot] = 1;
          matchedSlots.push(slot);
        }
      }
    }

    let kept = matchedSlots;
    if (requireAll) {
      // A repeated query term counts twice in the query vector (as in lunr) but once as a requirement.
      const distinct = new Map<string, string[]>();
      terms.forEach((term: QueryTerm, index: number) =>
        distinct.set('exact' in term ? `=${term.exact}` : `*${term.prefix}`, expansions[index]!),
      );
      const termHits = new Uint16Array(idBySlot.length);
      const lastTerm = new Int32Array(idBySlot.length);
      let termNumber = 0;
      for (const expansion of distinct.values()) {
        termNumber += 1;
        for (const term of expansion) {
          const termPostings = postingsFor(term) ?? [];
          for (let i = 0; i < termPostings.length; i++) {
            const slot = Math.floor(Math.floor(termPostings[i]! / FREQUENCY_SPACE) / fieldCount);
            if (lastTerm[slot] === termNumber) continue;
            lastTerm[slot] = termNumber;
            termHits[slot]! += 1;
          }
        }
      }
      kept = matchedSlots.filter((slot) => termHits[slot] === termNumber);
    }

    // lunr divides the dot product by the query vector's magnitude (`lunr.Vector#similarity`).
    const magnitude = Math.sqrt(squaredMagnitude);
    const scores = new Map<string, number>();
    for (const slot of kept) scores.set(idBySlot[slot]!, accumulated[slot]! / magnitude);
    return scores;
  }

  return {
    upsert,
    remove,
    search,
    get size() {
      return slotById.size;
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

/** Runs the analyzer over one field value: the field length (terms kept) and each term's frequency. */
function analyse(analyzer: FullTextAnalyzer, value: string | undefined): AnalysedField {
  // typeof, not `=== undefined`: a field named like an Object.prototype member must not index a function.
  if (typeof value !== 'string' || value === '') return { length: 0, terms: [], frequencies: [] };
  const all = analyzer.indexTerms(value);
  const terms: string[] = [];
  const frequencies: number[] = [];
  if (all.length <= 64) {
    // Catalog text is short: a linear search beats allocating a Map per field.
    for (const term of all) {
      const i = terms.indexOf(term);
      if (i < 0) {
        terms.push(term);
        frequencies.push(1);
      } else {
        frequencies[i]! += 1;
      }
    }
  } else {
    const index = new Map<string, number>();
    for (const term of all) {
      const i = index.get(term);
      if (i === undefined) {
        index.set(term, terms.length);
        terms.push(term);
        frequencies.push(1);
      } else {
        frequencies[i]! += 1;
      }
    }
  }
  return { length: all.length, terms, frequencies };
}

function isDigits(token: string): boolean {
  for (let i = 0; i < token.length; i++) {
    const code = token.charCodeAt(i);
    if (code < 48 || code > 57) return false;
  }
  return token.length > 0;
}

/** lunr's indexing tokenizer and pipeline. */
function lunrIndexTerms(value: string): string[] {
  const terms: string[] = [];
  for (const token of lunr.tokenizer(value)) {
    const term = indexTerm(token);
    if (term !== null) terms.push(term);
  }
  return terms;
}

// Each pipeline step looks at one token only, and catalog text repeats words a lot, so the index
// pipeline's output is memoised per raw token (a third of the indexing time at 100k documents).
// Cleared when full, which bounds memory whatever the vocabulary.
const PIPELINE_CACHE_LIMIT = 50_000;
const pipelineCache = new Map<string, string | null>();

/** The term lunr would index for this token, or null if the pipeline drops it (a stop word). */
function indexTerm(token: lunr.Token): string | null {
  const raw = token.toString();
  let term = pipelineCache.get(raw);
  if (term === undefined) {
    const [result] = indexPipeline.run([token]);
    // A punctuation-only token trims to '' and lunr still indexes and counts it; so do we.
    term = result === undefined ? null : result.toString();
    if (pipelineCache.size >= PIPELINE_CACHE_LIMIT) pipelineCache.clear();
    pipelineCache.set(raw, term);
  }
  return term;
}

/**
 * Splits a query into terms, or returns undefined for "match all". lunr's query lexer splits on
 * `lunr.tokenizer.separator` (whitespace and hyphens) and lower-cases, which `lunr.tokenizer` does too.
 */
function parseQuery(query: string): QueryTerm[] | undefined {
  const terms: QueryTerm[] = [];
  let sawBareWildcard = false;
  for (const token of lunr.tokenizer(query)) {
    const text = token.toString();
    if (text.endsWith('*')) {
      const prefix = text.replace(/\*+$/, '');
      if (prefix === '') sawBareWildcard = true;
      // Like lunr, wildcard terms skip the search pipeline (`clause.usePipeline = false`).
      else terms.push({ prefix });
    } else {
      for (const exact of searchPipeline.runString(text)) terms.push({ exact });
    }
  }
  if (terms.length === 0 && (sawBareWildcard || query.trim() === '')) return undefined;
  return terms;
}

/** `lunr.idf`, where `fieldPairs` counts (document, field) pairs holding the term. */
function inverseDocumentFrequency(fieldPairs: number, documentCount: number): number {
  return Math.log(1 + Math.abs((documentCount - fieldPairs + 0.5) / (fieldPairs + 0.5)));
}

/** One term's BM25 weight in one field, written exactly as lunr.Builder#createFieldVectors computes it. */
function termWeight(idf: number, frequency: number, length: number, averageLength: number, boost: number): number {
  let score = (idf * ((K1 + 1) * frequency)) / (K1 * (1 - B + B * (length / averageLength)) + frequency);
  score *= boost;
  // lunr stores weights rounded to 3 decimals; doing the same keeps scores and ties identical to lunr's.
  return Math.round(score * 1000) / 1000;
}
