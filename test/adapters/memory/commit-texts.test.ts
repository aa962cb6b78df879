import { describe, expect, it } from 'vitest';
import { CommitTexts } from '../../../adapters/memory/commit-texts';

describe('CommitTexts', () => {
  it('finds the text of each object in order, out of order, twice, and nothing for an object never stored', () => {
    const texts = new CommitTexts();
    const values = Array.from({ length: 6 }, (_, i) => ({ i }));
    values.forEach((value, i) => texts.add(value, `t${i}`));
    expect(texts.textOf(values[0]!)).toBe('t0');
    expect(texts.textOf(values[1]!)).toBe('t1');
    // Out of order: found through the map, and the cursor goes on after it.
    expect(texts.textOf(values[4]!)).toBe('t4');
    expect(texts.textOf(values[5]!)).toBe('t5');
    expect(texts.textOf(values[2]!)).toBe('t2');
    expect(texts.textOf(values[2]!)).toBe('t2');
    expect(texts.textOf({ i: 0 })).toBeUndefined();
    // Added after the map was built: still found.
    const late = { late: true };
    texts.add(late, 'late');
    expect(texts.textOf(late)).toBe('late');
    expect(texts.textOf(values[3]!)).toBe('t3');
  });
});
