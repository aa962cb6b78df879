import { describe, expect, it } from 'vitest';
import { RESOLUTION_STRIDE, TokenTable, UNRESOLVED } from '../../../adapters/memory/fulltext-tokens';
import { createMemoryFullText } from '../../../adapters/memory/search-text';
import { tokenize } from '../../../src/adapter/text-analysis';
import { seededRandom } from '../../../src/testing/random';

/** The tokens a scan reports, read back from the table's entries. */
function scanned(table: TokenTable, tokensOf: string[], text: string): string[] {
  const out: string[] = [];
  table.scanAscii(text, (entry) => out.push(tokensOf[entry]!));
  return out;
}

describe('TokenTable', () => {
  it('finds the tokens tokenize() finds in ASCII text, each cut out once', () => {
    const cut: string[] = [];
    const table = new TokenTable((token) => {
      cut.push(token);
      return token === 'the' ? null : token;
    });
    const random = seededRandom(7);
    const alphabet = 'abcXYZ019 _-.,:()/\t';
    for (let n = 0; n < 300; n++) {
      let text = '';
      const length = Math.floor(random() * 40);
      for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)];
      expect(scanned(table, cut, text)).toEqual(tokenize(text));
    }
    expect(new Set(cut).size).toBe(cut.length);
    expect(table.size).toBe(cut.length);
  });

  it('gives a token written as a string (the non-ASCII path) the entry its ASCII occurrence has', () => {
    const table = new TokenTable((token) => token);
    const entries: number[] = [];
    table.scanAscii('Orders ORDERS orders', (entry) => entries.push(entry));
    expect(new Set(entries).size).toBe(1);
    expect(table.entryOf('orders')).toBe(entries[0]);
    expect(table.terms[entries[0]!]).toBe('orders');
    expect(table.resolutions[entries[0]! * RESOLUTION_STRIDE]).toBe(UNRESOLVED);
  });

  it('stays bounded: a table that fills up is cleared and goes on', () => {
    const table = new TokenTable((token) => token);
    const tokens: string[] = [];
    for (let i = 0; i < 70_000; i++) table.scanAscii(`w${i}`, () => tokens.push(`w${i}`));
    expect(table.size).toBeLessThanOrEqual(1 << 16);
    const seen: number[] = [];
    table.scanAscii('w69999', (entry) => seen.push(entry));
    expect(table.terms[seen[0]!]).toBe('w69999');
  });
});

describe('the memory full-text index through the token table', () => {
  it('re-resolves a remembered token whose term left the vocabulary and whose id went to another term', () => {
    const index = createMemoryFullText();
    index.upsert('a', { name: 'zebra', urnKey: 'a' });
    expect([...index.search('zebra')!.keys()]).toEqual(['a']);
    // "zebra" leaves the vocabulary; its id is taken by "yak".
    index.remove('a');
    index.upsert('b', { name: 'yak', urnKey: 'b' });
    expect(index.search('zebra')!.size).toBe(0);
    // The table remembers "zebra" with the old id: it must not land on "yak".
    index.upsert('c', { name: 'zebra', urnKey: 'c' });
    expect([...index.search('zebra')!.keys()]).toEqual(['c']);
    expect([...index.search('yak')!.keys()]).toEqual(['b']);
  });

  it('scores ASCII and non-ASCII text of the same words alike', () => {
    const index = createMemoryFullText();
    index.upsert('ascii', { name: 'Cafe orders', description: 'daily cafe orders', urnKey: 'k1' });
    index.upsert('accents', { name: 'Café orders', description: 'daily café orders', urnKey: 'k2' });
    const scores = index.search('cafe')!;
    expect(scores.size).toBe(2);
    expect(scores.get('ascii')).toBeCloseTo(scores.get('accents')!, 12);
  });

  it('replaces a document whose terms change, keeping a term it shares with its old version', () => {
    const index = createMemoryFullText();
    index.upsert('a', { name: 'alpha beta', urnKey: 'a' });
    index.upsert('a', { name: 'beta gamma', urnKey: 'a' });
    expect(index.search('alpha')!.size).toBe(0);
    expect([...index.search('beta gamma')!.keys()]).toEqual(['a']);
  });
});
