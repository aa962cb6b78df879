/**
 * Text analysis for the full-text index (fulltext.ts): how field values and queries become terms.
 * The default is lunr's own pipeline, memoised per raw token.
 */
import lunr from 'lunr';

/** A parsed query term: an index term to match exactly, or a prefix of index terms. */
export type QueryTerm = { readonly exact: string } | { readonly prefix: string };

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

// The pipelines `lunr()` installs: indexing trims, drops stop words and stems; searching only stems.
// Stop words therefore never match, because they were never indexed.
const indexPipeline = new lunr.Pipeline();
indexPipeline.add(lunr.trimmer, lunr.stopWordFilter, lunr.stemmer);
const searchPipeline = new lunr.Pipeline();
searchPipeline.add(lunr.stemmer);

/** One field value analysed: its length in terms, and its distinct terms with their frequencies. */
export interface AnalysedField {
  length: number;
  terms: string[];
  frequencies: number[];
  /** With a tokenizing analyzer: the remembered token of each distinct term (its id may be stale). */
  known?: TokenTerm[];
}

/** What a token stands for: its term (null when dropped) and the term's id when last seen (-1: none). */
export interface TokenTerm {
  readonly term: string | null;
  id: number;
}

/** Tokens remembered per index; cleared when full, so it stays bounded whatever the vocabulary. */
const TOKEN_CACHE_LIMIT = 20_000;

export const LUNR_ANALYZER: FullTextAnalyzer = {
  indexTerms: lunrIndexTerms,
  queryTerms: parseQuery,
};

/** The tokens an index remembers (bounded by TOKEN_CACHE_LIMIT). */
export type TokenTerms = Map<string, TokenTerm>;

/** As `analyse`, through the remembered tokens. */
export function analyseTokens(
  tokenTerms: TokenTerms,
  value: string | undefined,
  split: (value: string) => string[],
  termOfToken: (token: string) => string | null,
): AnalysedField {
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

/** Runs the analyzer over one field value: the field length (terms kept) and each term's frequency. */
export function analyse(analyzer: FullTextAnalyzer, value: string | undefined): AnalysedField {
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
