import { describe, expect, it } from 'vitest';
import { RangePool } from '../../../adapters/memory/range-pool';
import { seededRandom } from '../../../src/testing/random';

describe('RangePool', () => {
  it('keeps every list as plain arrays would through pushes, moves, cuts, releases and packing', () => {
    const random = seededRandom(7);
    const pool = new RangePool();
    const model = new Map<number, number[]>();
    let packedOrGrown = 0;
    let lastValues = pool.values;
    for (let step = 0; step < 20_000; step++) {
      const owner = Math.floor(random() * 300);
      const list = model.get(owner) ?? [];
      const r = random();
      if (r < 0.7) {
        const value = step + 0.25;
        pool.push(owner, value);
        list.push(value);
      } else if (r < 0.8 && list.length > 0) {
        const index = Math.floor(random() * list.length);
        pool.set(owner, index, -step);
        list[index] = -step;
      } else if (r < 0.9) {
        const length = Math.floor(random() * (list.length + 1));
        pool.truncate(owner, length);
        list.length = length;
      } else {
        pool.release(owner);
        list.length = 0;
      }
      model.set(owner, list);
      if (pool.values !== lastValues) {
        packedOrGrown++;
        lastValues = pool.values;
      }
      if (step % 997 === 0) for (const [o, l] of model) expect([...pool.view(o)]).toEqual(l);
    }
    for (const [o, l] of model) {
      expect([...pool.view(o)]).toEqual(l);
      expect(pool.lengthOf(o)).toBe(l.length);
      l.forEach((v, i) => expect(pool.at(o, i)).toBe(v));
    }
    // The array was replaced (grown or packed) along the way, and stays within a few times what the lists hold.
    expect(packedOrGrown).toBeGreaterThan(2);
    const held = [...model.values()].reduce((n, l) => n + l.length, 0);
    expect(pool.values.length).toBeLessThan(Math.max(1024, held * 16));
    expect(pool.view(10_000).length).toBe(0);
  });

  it('reserves room without changing a list, and a released owner starts empty', () => {
    const pool = new RangePool();
    pool.push(3, 1);
    pool.push(3, 2);
    pool.reserve(3, 100);
    expect([...pool.view(3)]).toEqual([1, 2]);
    pool.release(3);
    expect(pool.lengthOf(3)).toBe(0);
    pool.push(3, 5);
    expect([...pool.view(3)]).toEqual([5]);
  });
});
