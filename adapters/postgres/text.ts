/**
 * Full-text queries as `tsquery` text: every term must match (AND); `term*` matches index terms that
 * start with `term`. Returns undefined for "match everything" (no query, blank, or only `*`) and null
 * for a query that matches nothing (no term left).
 */
export function textQuery(text: string | undefined): string | null | undefined {
  if (text === undefined) return undefined;
  const terms: string[] = [];
  let words = 0;
  for (const word of text.split(/\s+/)) {
    const prefix = word.endsWith('*');
    const body = prefix ? word.replace(/\*+$/, '') : word;
    if (body === '') continue;
    words++;
    const tokens = body.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((t) => t !== '');
    tokens.forEach((token, i) => terms.push(`${quote(token)}${prefix && i === tokens.length - 1 ? ':*' : ''}`));
  }
  if (words === 0) return undefined;
  return terms.length === 0 ? null : [...new Set(terms)].join(' & ');
}

/** A lexeme in tsquery syntax: single-quoted, quotes and backslashes doubled. */
function quote(lexeme: string): string {
  return `'${lexeme.replace(/['\\]/g, (c) => c + c)}'`;
}
