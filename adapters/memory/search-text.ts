import lunr from 'lunr';
import type { SearchDocument } from '../../src/adapter/types';
import { createTextAnalysis, tokenize } from '../../src/adapter/text-analysis';
import { createFullTextIndex, type FullTextAnalyzer } from './fulltext';

/** Field boosts; the SQLite adapter gives its bm25() the same weights. */
const TEXT_FIELDS = [{ name: 'name', boost: 10 }, { name: 'description' }, { name: 'urnKey' }];

const STEM_CACHE_LIMIT = 50_000;
const stems = new Map<string, string>();

/** lunr's own stemmer (`lunr.stemmer`), memoised: catalog text repeats words a lot. */
function lunrStem(token: string): string {
  let stem = stems.get(token);
  if (stem === undefined) {
    const input = new lunr.Token(token, {});
    stem = String(lunr.stemmer(input));
    if (stems.size >= STEM_CACHE_LIMIT) stems.clear();
    stems.set(token, stem);
  }
  return stem;
}

function lunrStopWord(token: string): boolean {
  const input = new lunr.Token(token, {});
  return lunr.stopWordFilter(input) === undefined;
}

/**
 * The contract's text analysis (src/adapter/text-analysis.ts: tokens of letters and digits, folded)
 * with lunr's own stop-word filter and stemmer, feeding the incremental BM25 index of fulltext.ts.
 */
const analysis = createTextAnalysis({ stem: lunrStem, isStopWord: lunrStopWord });
const analyzer: FullTextAnalyzer = {
  indexTerms: (value) => analysis.analyzeText(value),
  tokens: tokenize,
  indexTerm: analysis.indexTerm,
  queryTerms: (query) => analysis.parseTextQuery(query)?.map((t) => (t.prefix ? { prefix: t.term } : { exact: t.term })),
};

export interface MemoryFullText {
  upsert(urn: string, text: SearchDocument['text']): void;
  remove(urn: string): void;
  /**
   * The same for the document of `urn` in `slot`, the slot table's (search-documents.ts): no map by
   * URN is kept here. An index is used through one pair or the other.
   */
  upsertAt(slot: number, urn: string, text: SearchDocument['text']): void;
  removeAt(slot: number): void;
  /** URN → score of the documents that contain every query term; undefined when the query matches all. */
  search(text: string | undefined): Map<string, number> | undefined;
}

export function createMemoryFullText(): MemoryFullText {
  const index = createFullTextIndex(TEXT_FIELDS, { analyzer });
  return {
    upsert(urn, text) {
      index.upsert(urn, text);
    },
    remove(urn) {
      index.remove(urn);
    },
    upsertAt(slot, urn, text) {
      index.upsertAt(slot, urn, text);
    },
    removeAt(slot) {
      index.removeAt(slot);
    },
    search(text) {
      if (text === undefined) return undefined;
      return index.search(text, { requireAllTerms: true });
    },
  };
}
