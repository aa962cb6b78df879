import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import lunr from 'lunr';
import { describe, expect, it } from 'vitest';
import { analyzeText, parseTextQuery, STOP_WORDS, stemTerm, tokenize } from '../../src/adapter/text-analysis';

const require = createRequire(import.meta.url);

/** A large, fixed English corpus: the words of TypeScript's DOM declarations (comments included). */
function corpusWords(): string[] {
  const text = readFileSync(require.resolve('typescript/lib/lib.dom.d.ts'), 'utf8');
  return [...new Set(text.toLowerCase().match(/[a-z]{2,}/g) ?? [])];
}

describe('text analysis shared by the adapters', () => {
  it('stems exactly like lunr.stemmer, so the SQLite adapter (no lunr) and the memory adapter (lunr) agree', () => {
    const words = corpusWords();
    expect(words.length).toBeGreaterThan(5000);
    const different = words.filter((w) => stemTerm(w) !== lunr.stemmer(new lunr.Token(w, {})).toString());
    expect(different).toEqual([]);
    // Words the Porter stemmer is known for, and lunr's "y" quirks.
    for (const w of ['sky', 'skies', 'yelling', 'generalization', 'customers', 'relational', 'agreed', 'happy']) {
      expect(stemTerm(w)).toBe(lunr.stemmer(new lunr.Token(w, {})).toString());
    }
  });

  it('takes a number as its own term, as both stemmers do (numbers skip the stemmer and its cache)', () => {
    const numbers = [
      '0',
      '7',
      '00',
      '42',
      '2024',
      '000123',
      '18446744073709551616',
      ...Array.from({ length: 2000 }, (_, i) => String(i * 7919)),
    ];
    for (const n of numbers) {
      expect(stemTerm(n)).toBe(n);
      expect(lunr.stemmer(new lunr.Token(n, {})).toString()).toBe(n);
    }
    expect(analyzeText('orders_2024 of 000123 x2')).toEqual(['order', '2024', '000123', 'x2']);
  });

  it('drops exactly lunr.stopWordFilter stop words', () => {
    const words = [...corpusWords(), ...STOP_WORDS, 'constructor', 'hasownproperty'];
    const lunrStops = words.filter((w) => lunr.stopWordFilter(new lunr.Token(w, {})) === undefined);
    expect(lunrStops.sort()).toEqual(words.filter((w) => STOP_WORDS.has(w)).sort());
  });

  it('tokenizes on anything but letters and digits, lower-cased and accent-folded, ASCII or not', () => {
    expect(tokenize('(urn:li:dataPlatform:hive,DB.Customer_Orders,PROD)')).toEqual([
      'urn',
      'li',
      'dataplatform',
      'hive',
      'db',
      'customer',
      'orders',
      'prod',
    ]);
    expect(tokenize('  Café  Été—naïve x2 ')).toEqual(['cafe', 'ete', 'naive', 'x2']);
    expect(tokenize('数据 仓库 Ünïcode')).toEqual(['数据', '仓库', 'unicode']);
    expect(tokenize('')).toEqual([]);
    expect(analyzeText('The customers of the orders')).toEqual(['custom', 'order']);
  });

  it('parses queries: all terms, trailing * for prefixes, stop words out, * or blank for everything', () => {
    expect(parseTextQuery('*')).toBe(undefined);
    expect(parseTextQuery('   ')).toBe(undefined);
    expect(parseTextQuery(undefined)).toBe(undefined);
    expect(parseTextQuery('the of')).toEqual([]);
    expect(parseTextQuery('Customers cust* db.orders the*')).toEqual([
      { term: 'custom', prefix: false },
      { term: 'cust', prefix: true },
      { term: 'db', prefix: false },
      { term: 'order', prefix: false },
      { term: 'the', prefix: true },
    ]);
    expect(parseTextQuery('orders orders * ORDERS')).toEqual([{ term: 'order', prefix: false }]);
  });
});
