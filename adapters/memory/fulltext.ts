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
  search(query: string): Map<string, number> | undefined;
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

interface TermPostings {
  /** Indexed by field position: document slot → term frequency in that field. Created on first use. */
  readonly byField: (Map<number, number> | undefined)[];
  /**
   * lunr's document frequency (`lunr.idf`) counts (document, field) pairs, not documents:
   * a term present in two fields of one document counts twice.
   */
  fieldPairs: number;
}

interface AnalysedField {
  length: number;
  frequencies: Map<string, number>;
}

/** A query term after parsing: a stemmed exact term or an unstemmed prefix. */
type QueryTerm = { readonly exact: string } | { readonly prefix: string };

export function createFullTextIndex(fields: readonly FullTextFieldConfig[]): FullTextIndex {
  const boosts = fields.map(validatedBoost);
  const names = fields.map((field) => field.name);
  if (new Set(names).size !== names.length) {
    throw new RangeError(`Full-text field names must be unique, got: ${names.join(', ')}`);
  }

  const postings = new Map<string, TermPostings>();
  // Documents live in numbered slots (reused after removal) so that scoring, which touches every
  // posting of every query term, indexes arrays instead of hashing string ids.
  const slotById = new Map<string, number>();
  const idBySlot: (string | undefined)[] = [];
  const freeSlots: number[] = [];
  /** [field][slot]: number of terms left by the pipeline (lunr's field length). */
  const fieldLengths: number[][] = names.map(() => []);
  /** [slot][field]: the document's distinct terms, so its postings can be removed. */
  const termsBySlot: (string[][] | undefined)[] = [];
  // Sums of field lengths, so average field lengths stay exact under removal (integers, no drift).
  const totalLengths = names.map(() => 0);

  function upsert(id: string, values: Readonly<Record<string, string | undefined>>): void {
    remove(id);
    // Like lunr, a document with only empty fields still counts in N and in the average lengths.
    const slot = freeSlots.pop() ?? idBySlot.length;
    slotById.set(id, slot);
    idBySlot[slot] = id;
    const documentTerms: string[][] = [];
    termsBySlot[slot] = documentTerms;
    names.forEach((name, fieldIndex) => {
      const { length, frequencies } = analyse(values[name]);
      documentTerms.push([...frequencies.keys()]);
      fieldLengths[fieldIndex][slot] = length;
      totalLengths[fieldIndex] += length;
      for (const [term, frequency] of frequencies) {
        let termPostings = postings.get(term);
        if (termPostings === undefined) {
          termPostings = { byField: names.map(() => undefined), fieldPairs: 0 };
          postings.set(term, termPostings);
        }
        let fieldPostings = termPostings.byField[fieldIndex];
        if (fieldPostings === undefined) {
          fieldPostings = new Map();
          termPostings.byField[fieldIndex] = fieldPostings;
        }
        fieldPostings.set(slot, frequency);
        termPostings.fieldPairs += 1;
      }
    });
  }

  function remove(id: string): void {
    const slot = slotById.get(id);
    if (slot === undefined) return;
    slotById.delete(id);
    idBySlot[slot] = undefined;
    freeSlots.push(slot);
    termsBySlot[slot]?.forEach((terms, fieldIndex) => {
      totalLengths[fieldIndex] -= fieldLengths[fieldIndex][slot];
      for (const term of terms) {
        const termPostings = postings.get(term);
        if (termPostings === undefined) continue;
        termPostings.byField[fieldIndex]?.delete(slot);
        termPostings.fieldPairs -= 1;
        // A term no document holds any more must leave the vocabulary: lunr's query vector (and so
        // the score normalisation) only counts terms that exist in the index.
        if (termPostings.fieldPairs === 0) postings.delete(term);
      }
    });
    termsBySlot[slot] = undefined;
  }

  function search(query: string): Map<string, number> | undefined {
    const terms = parseQuery(query);
    if (terms === undefined) return undefined;

    // lunr's query vector: one unit per query term for every index term it expands to, summed
    // when several query terms land on the same index term.
    const queryWeights = new Map<string, number>();
    const addWeight = (term: string): void => {
      queryWeights.set(term, (queryWeights.get(term) ?? 0) + 1);
    };
    for (const term of terms) {
      if ('exact' in term) {
        if (postings.has(term.exact)) addWeight(term.exact);
      } else {
        // A linear scan of the vocabulary: a few milliseconds for the ~105k terms of 100k catalog
        // documents, and writes need no sorted structure kept up to date (see bench/fulltext-bench.ts).
        for (const indexed of postings.keys()) {
          if (indexed.startsWith(term.prefix)) addWeight(indexed);
        }
      }
    }

    // Scores accumulate per slot; `matched` also keeps documents whose (rounded) score is 0, which
    // lunr returns too.
    const accumulated = new Float64Array(idBySlot.length);
    const matched = new Uint8Array(idBySlot.length);
    const matchedSlots: number[] = [];
    let squaredMagnitude = 0;
    const documentCount = slotById.size;
    for (const [term, queryWeight] of queryWeights) {
      squaredMagnitude += queryWeight * queryWeight;
      const termPostings = postings.get(term);
      if (termPostings === undefined) continue;
      const idf = inverseDocumentFrequency(termPostings.fieldPairs, documentCount);
      termPostings.byField.forEach((fieldPostings, fieldIndex) => {
        if (fieldPostings === undefined) return;
        const averageLength = totalLengths[fieldIndex] / documentCount;
        const lengths = fieldLengths[fieldIndex];
        const boost = boosts[fieldIndex];
        for (const [slot, frequency] of fieldPostings) {
          const weight = termWeight(idf, frequency, lengths[slot], averageLength, boost);
          accumulated[slot] += queryWeight * weight;
          if (matched[slot] === 0) {
            matched[slot] = 1;
            matchedSlots.push(slot);
          }
        }
      });
    }

    // lunr divides the dot product by the query vector's magnitude (`lunr.Vector#similarity`).
    const magnitude = Math.sqrt(squaredMagnitude);
    const scores = new Map<string, number>();
    for (const slot of matchedSlots) scores.set(idBySlot[slot]!, accumulated[slot] / magnitude);
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

/** Runs lunr's indexing tokenizer and pipeline over one field value. */
function analyse(value: string | undefined): AnalysedField {
  const frequencies = new Map<string, number>();
  let length = 0;
  // typeof, not `=== undefined`: a field named like an Object.prototype member must not index a function.
  if (typeof value !== 'string' || value === '') return { length, frequencies };
  for (const token of lunr.tokenizer(value)) {
    const term = indexTerm(token);
    if (term === null) continue;
    length += 1;
    frequencies.set(term, (frequencies.get(term) ?? 0) + 1);
  }
  return { length, frequencies };
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
