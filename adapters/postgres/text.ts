import type { SearchDocument } from '../../src/adapter/types';
import { analyzeText, parseTextQuery } from '../../src/adapter/text-analysis';

/**
 * Full text with the contract's own analysis (src/adapter/text-analysis.ts), not a Postgres text-search
 * configuration: the terms are computed here and handed to Postgres as `tsvector` and `tsquery` literals
 * (whose input functions apply no dictionary), so every adapter matches the same documents. Postgres
 * keeps the GIN index, the `@@` matching (prefix terms as `:*`) and `ts_rank`.
 */

/** Postgres refuses lexemes of 2 KB and more; such a token cannot be indexed (nor found). */
const MAX_LEXEME_BYTES = 2046;
/** Positions above this are stored as this one. */
const MAX_POSITION = 16_383;

function quote(lexeme: string): string {
  if (!NEEDS_ESCAPE.test(lexeme)) return `'${lexeme}'`;
  return `'${lexeme.replace(/'/g, "''").replace(/\\/g, '\\\\')}'`;
}
const NEEDS_ESCAPE = /['\\]/;

/**
 * The `tsvector` literal of a document: each term with its positions, weighted A in the name and the
 * URN key and B in the description, so `ts_rank` prefers matches in names.
 */
export function documentVector(text: SearchDocument['text']): string {
  const positions = new Map<string, string[]>();
  let position = 0;
  const add = (source: string | undefined, weight: 'A' | 'B'): void => {
    for (const term of analyzeText(source)) {
      position = Math.min(position + 1, MAX_POSITION);
      // A UTF-16 unit is at most 3 bytes of UTF-8: only long terms need counting.
      if (term.length * 3 > MAX_LEXEME_BYTES && Buffer.byteLength(term) > MAX_LEXEME_BYTES) continue;
      let list = positions.get(term);
      if (!list) positions.set(term, (list = []));
      if (list.length < 255) list.push(`${position}${weight}`);
    }
  };
  add(text.name, 'A');
  add(text.urnKey, 'A');
  add(text.description, 'B');
  return [...positions].map(([term, list]) => `${quote(term)}:${list.join(',')}`).join(' ');
}

/**
 * The `tsquery` literal of a full-text query: every term must match; a prefix term matches index terms
 * that start with it. Undefined means "match everything"; null means "matches nothing".
 */
export function textQuery(query: string | undefined): string | null | undefined {
  const terms = parseTextQuery(query);
  if (terms === undefined) return undefined;
  const usable = terms.filter((t) => Buffer.byteLength(t.term) <= MAX_LEXEME_BYTES);
  if (terms.length === 0 || usable.length < terms.length) return null;
  return usable.map((t) => `${quote(t.term)}${t.prefix ? ':*' : ''}`).join(' & ');
}
