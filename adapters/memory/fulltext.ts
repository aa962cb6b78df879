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
import { analyse, analyseTokens, LUNR_ANALYZER, type AnalysedField, type FullTextAnalyzer, type TokenTerms } from './fulltext-analysis';
import { createPostings, removeDocument, upsertDocument } from './fulltext-postings';
import { scorePostings } from './fulltext-query';

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
  const { tokens: tokensOf, indexTerm } = analyzer;
  const tokenTerms: TokenTerms = new Map();

  function upsert(id: string, values: Readonly<Record<string, string | undefined>>): void {
    const analysed: AnalysedField[] = [];
    let distinct = 0;
    for (let fieldIndex = 0; fieldIndex < fieldCount; fieldIndex++) {
      const value = values[names[fieldIndex]!];
      const field = tokensOf && indexTerm ? analyseTokens(tokenTerms, value, tokensOf, indexTerm) : analyse(analyzer, value);
      analysed.push(field);
      distinct += field.terms.length;
    }
    upsertDocument(postings, id, analysed, distinct);
  }

  function search(query: string, searchOptions: FullTextSearchOptions = {}): Map<string, number> | undefined {
    const terms = analyzer.queryTerms(query);
    if (terms === undefined) return undefined;
    return scorePostings(postings, boosts, terms, searchOptions.requireAllTerms === true);
  }

  return {
    upsert,
    remove: (id) => removeDocument(postings, id),
    search,
    get size() {
      return postings.slotById.size;
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
