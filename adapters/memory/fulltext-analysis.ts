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
   * one token (null when dropped). With them the index remembers each token's term and term id
   * (fulltext-tokens.ts). `tokens` must split ASCII text into its runs of ASCII letters and digits,
   * lower-cased (the contract's `tokenize`): the index scans such text itself, without cutting a string
   * out per token, and calls `tokens` for other text only.
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

export const LUNR_ANALYZER: FullTextAnalyzer = {
  indexTerms: lunrIndexTerms,
  queryTerms: parseQuery,
};

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
