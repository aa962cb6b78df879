import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { DocumentCache } from '../../src/http/routes/graphql';

describe('the GraphQL document cache', () => {
  it('keeps a document used often, lets the least recently used go past its budget, and never keeps one over 1/16 of it', () => {
    // Budget: 64 documents of 100 characters (2 bytes a character).
    const cache = new DocumentCache(64 * 200);
    const text = (i: number) => `{ q${String(i).padStart(4, '0')} ${' '.repeat(100 - 10)}}`;
    const often = text(0);
    const oftenDocument = parse(often);
    cache.set(often, oftenDocument);
    for (let i = 1; i <= 500; i++) {
      cache.set(text(i), parse(text(i)));
      expect(cache.get(often)).toBe(oftenDocument); // used between every insert
    }
    expect(cache.get(text(1))).toBeUndefined(); // long gone
    expect(cache.get(text(500))).toBeDefined(); // the newest stays
    // Within its budget: at most 64 documents of this size, the frequent one among them.
    let kept = 0;
    for (let i = 1; i <= 500; i++) if (cache.get(text(i))) kept++;
    expect(kept).toBeGreaterThan(0);
    expect(kept + 1).toBeLessThanOrEqual(64);
    // Over 1/16 of the budget: not kept.
    const large = `{ big ${' '.repeat((64 * 200) / 16)}}`;
    cache.set(large, parse(large));
    expect(cache.get(large)).toBeUndefined();
  });
});
