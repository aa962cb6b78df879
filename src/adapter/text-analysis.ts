/**
 * The text analysis every adapter applies to full-text fields and queries, so that every adapter
 * matches the same documents for the same query (part of the adapter contract, see `SearchScope.text`).
 *
 * - Tokens: runs of letters and digits (`\p{L}`, `\p{N}`); everything else separates. Lower-cased,
 *   compatibility-decomposed (NFKD) and stripped of combining marks, so `Café` and `cafe` are one token.
 * - Index terms: tokens minus English stop words, stemmed with the Porter stemmer.
 * - Query terms: every term must match (AND). A term written with a trailing `*` is a prefix of an
 *   index term (not stemmed, stop words kept); other terms are analysed like the text.
 *
 * The stemmer and the stop-word list are lunr 2.3.9's (`lunr.stemmer`, `lunr.stopWordFilter`), so the
 * memory adapter can run lunr's own pipeline and still agree with every other adapter.
 * lunr: Copyright (C) 2013–2020 Oliver Nightingale, MIT licence; its stemmer includes code from
 * http://tartarus.org/~martin/PorterStemmer/js.txt.
 */

/** lunr's English stop words (`lunr.stopWordFilter`). */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a able about across after all almost also am among an and any are as at be because been but by can cannot could dear ' +
    'did do does either else ever every for from get got had has have he her hers him his how however i if in into is it ' +
    'its just least let like likely may me might most must my neither no nor not of off often on only or other our own ' +
    'rather said say says she should since so some than that the their them then there these they this tis to too twas ' +
    'us wants was we were what when where which while who whom why will with would yet you your'
  ).split(' '),
);

/** One term of a parsed full-text query. */
export interface TextQueryTerm {
  /** The index term (stemmed) or, for a prefix term, the prefix as typed (folded, not stemmed). */
  term: string;
  prefix: boolean;
}

const SEPARATOR = /[^\p{L}\p{N}]+/u;
const TERM_CACHE_LIMIT = 100_000;
const COMBINING_MARKS = /\p{M}+/gu;

// eslint-disable-next-line no-control-regex -- the whole ASCII range, control characters included
const ASCII = /^[\x00-\x7f]*$/;
const ASCII_SEPARATOR = /[^a-z0-9]+/;

/** Splits text into tokens: lower-cased, diacritics removed, letters and digits only. */
export function tokenize(text: string): string[] {
  if (text === '') return [];
  // Plain ASCII (most catalog text) needs no Unicode normalisation; the result is the same.
  const folded = ASCII.test(text) ? text.toLowerCase() : text.toLowerCase().normalize('NFKD').replace(COMBINING_MARKS, '');
  const tokens = folded.split(ASCII.test(folded) ? ASCII_SEPARATOR : SEPARATOR);
  return tokens[0] === '' || tokens[tokens.length - 1] === '' ? tokens.filter((token) => token !== '') : tokens;
}

/** The two halves of the analysis, built over one stemmer and one stop-word list. */
export interface TextAnalysis {
  /** The index terms of a text: its tokens without stop words, stemmed (repeats kept, in order). */
  analyzeText(text: string | undefined): string[];
  /**
   * The index term of one token of `tokenize` (null for a stop word): `analyzeText` is `tokenize`,
   * then this for each token, nulls left out. For an index that remembers what it did per token.
   */
  indexTerm(token: string): string | null;
  /**
   * Parses a full-text query. Returns undefined for "match everything" (blank, or only `*`), else the
   * terms a document must all contain; an empty list (only stop words or punctuation) matches nothing.
   * Words are separated by white space; punctuation inside a word splits it further (`db.orders` is
   * `db` and `orders`); a trailing `*` makes the last part a prefix (`cust*`).
   */
  parseTextQuery(query: string | undefined): TextQueryTerm[] | undefined;
}

/**
 * Builds the analysis over another implementation of the same stemmer and stop words (the memory
 * adapter passes lunr's own pipeline functions). Both must behave exactly as `stemTerm` and `STOP_WORDS`.
 */
export function createTextAnalysis(parts: { stem: (token: string) => string; isStopWord: (token: string) => boolean }): TextAnalysis {
  const { stem, isStopWord } = parts;
  // Token → index term, or null for a stop word; catalog text repeats words a lot. Bounded.
  const terms = new Map<string, string | null>();
  const indexTerm = (token: string): string | null => {
    // A number is its own term (the stemmer leaves digits alone, no stop word has one) and is kept
    // out of the cache: catalog names end in counters, and one new number per document would
    // otherwise fill the cache and push out every word.
    if (isDigits(token)) return token;
    let term = terms.get(token);
    if (term === undefined) {
      term = isStopWord(token) ? null : stem(token);
      if (terms.size >= TERM_CACHE_LIMIT) terms.clear();
      terms.set(token, term);
    }
    return term;
  };
  return {
    indexTerm,
    analyzeText(text) {
      if (typeof text !== 'string') return [];
      const out: string[] = [];
      for (const token of tokenize(text)) {
        const term = indexTerm(token);
        if (term !== null) out.push(term);
      }
      return out;
    },
    parseTextQuery(query) {
      if (query === undefined) return undefined;
      const terms: TextQueryTerm[] = [];
      const seen = new Set<string>();
      let words = 0;
      const add = (term: string, prefix: boolean): void => {
        const key = `${prefix ? '*' : '='}${term}`;
        if (seen.has(key)) return;
        seen.add(key);
        terms.push({ term, prefix });
      };
      for (const word of query.split(/\s+/)) {
        if (word === '') continue;
        const prefix = word.endsWith('*');
        const body = prefix ? word.replace(/\*+$/, '') : word;
        if (body === '') continue; // a bare `*`
        words += 1;
        const tokens = tokenize(body);
        tokens.forEach((token, index) => {
          if (prefix && index === tokens.length - 1) add(token, true);
          else if (!isStopWord(token)) add(stem(token), false);
        });
      }
      return words === 0 ? undefined : terms;
    },
  };
}

function isDigits(token: string): boolean {
  for (let i = 0; i < token.length; i++) {
    const code = token.charCodeAt(i);
    if (code < 48 || code > 57) return false;
  }
  return token.length > 0;
}

const defaultAnalysis = createTextAnalysis({ stem: (token) => stemTerm(token), isStopWord: (token) => STOP_WORDS.has(token) });

/** The index terms of a text: its tokens without stop words, stemmed (repeats kept, in order). */
export const analyzeText: TextAnalysis['analyzeText'] = defaultAnalysis.analyzeText;

/** Parses a full-text query; see `TextAnalysis.parseTextQuery`. */
export const parseTextQuery: TextAnalysis['parseTextQuery'] = defaultAnalysis.parseTextQuery;

// --- the Porter stemmer, as lunr 2.3.9 implements it ----------------------------------------------

const STEP2: Readonly<Record<string, string>> = {
  ational: 'ate',
  tional: 'tion',
  enci: 'ence',
  anci: 'ance',
  izer: 'ize',
  bli: 'ble',
  alli: 'al',
  entli: 'ent',
  eli: 'e',
  ousli: 'ous',
  ization: 'ize',
  ation: 'ate',
  ator: 'ate',
  alism: 'al',
  iveness: 'ive',
  fulness: 'ful',
  ousness: 'ous',
  aliti: 'al',
  iviti: 'ive',
  biliti: 'ble',
  logi: 'log',
};
const STEP3: Readonly<Record<string, string>> = { icate: 'ic', ative: '', alize: 'al', iciti: 'ic', ical: 'ic', ful: '', ness: '' };

const c = '[^aeiou]';
const v = '[aeiouy]';
const C = `${c}[^aeiouy]*`;
const V = `${v}[aeiou]*`;
const reMgr0 = new RegExp(`^(${C})?${V}${C}`);
const reMeq1 = new RegExp(`^(${C})?${V}${C}(${V})?$`);
const reMgr1 = new RegExp(`^(${C})?${V}${C}${V}${C}`);
const reSv = new RegExp(`^(${C})?${v}`);
const re1a = /^(.+?)(ss|i)es$/;
const re21a = /^(.+?)([^s])s$/;
const re1b = /^(.+?)eed$/;
const re21b = /^(.+?)(ed|ing)$/;
const reLast = /.$/;
const re21b2 = /(at|bl|iz)$/;
const re31b2 = /([^aeiouylsz])\1$/;
const re41b2 = new RegExp(`^${C}${v}[^aeiouwxy]$`);
const re1c = /^(.+?[^aeiou])y$/;
const re2 =
  /^(.+?)(ational|tional|enci|anci|izer|bli|alli|entli|eli|ousli|ization|ation|ator|alism|iveness|fulness|ousness|aliti|iviti|biliti|logi)$/;
const re3 = /^(.+?)(icate|ative|alize|iciti|ical|ful|ness)$/;
const re4 = /^(.+?)(al|ance|ence|er|ic|able|ible|ant|ement|ment|ent|ou|ism|ate|iti|ous|ive|ize)$/;
const re24 = /^(.+?)(s|t)(ion)$/;
const re5 = /^(.+?)e$/;
const re51 = /ll$/;
const re35 = new RegExp(`^${C}${v}[^aeiouwxy]$`);

function porterStem(word: string): string {
  if (word.length < 3) return word;
  let w = word;
  const firstY = w[0] === 'y';
  if (firstY) w = `Y${w.slice(1)}`;

  // Step 1a
  if (re1a.test(w)) w = w.replace(re1a, '$1$2');
  else if (re21a.test(w)) w = w.replace(re21a, '$1$2');

  // Step 1b
  let m = re1b.exec(w);
  if (m) {
    if (reMgr0.test(m[1]!)) w = w.replace(reLast, '');
  } else if ((m = re21b.exec(w))) {
    const stem = m[1]!;
    if (reSv.test(stem)) {
      w = stem;
      if (re21b2.test(w)) w += 'e';
      else if (re31b2.test(w)) w = w.replace(reLast, '');
      else if (re41b2.test(w)) w += 'e';
    }
  }

  // Step 1c
  if ((m = re1c.exec(w))) w = `${m[1]!}i`;

  // Step 2
  if ((m = re2.exec(w)) && reMgr0.test(m[1]!)) w = m[1]! + STEP2[m[2]!]!;

  // Step 3
  if ((m = re3.exec(w)) && reMgr0.test(m[1]!)) w = m[1]! + STEP3[m[2]!]!;

  // Step 4
  if ((m = re4.exec(w))) {
    if (reMgr1.test(m[1]!)) w = m[1]!;
  } else if ((m = re24.exec(w))) {
    const stem = m[1]! + m[2]!;
    if (reMgr1.test(stem)) w = stem;
  }

  // Step 5
  if ((m = re5.exec(w))) {
    const stem = m[1]!;
    if (reMgr1.test(stem) || (reMeq1.test(stem) && !re35.test(stem))) w = stem;
  }
  if (re51.test(w) && reMgr1.test(w)) w = w.replace(reLast, '');

  if (firstY) w = `y${w.slice(1)}`;
  return w;
}

// Catalog text repeats words a lot: memoise, cleared when full so memory stays bounded.
const STEM_CACHE_LIMIT = 50_000;
const stemCache = new Map<string, string>();

/** The Porter stem of one lower-cased token (lunr's `lunr.stemmer`). */
export function stemTerm(token: string): string {
  let stem = stemCache.get(token);
  if (stem === undefined) {
    stem = porterStem(token);
    if (stemCache.size >= STEM_CACHE_LIMIT) stemCache.clear();
    stemCache.set(token, stem);
  }
  return stem;
}
