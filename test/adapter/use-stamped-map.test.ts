import { describe, expect, it } from 'vitest';
import { UseStampedMap } from '../../src/adapter/use-stamped-map';

describe('UseStampedMap', () => {
  it('orders keys by their last use, a get counting as a use', () => {
    const map = new UseStampedMap<string, number>();
    map.set('a', 1);
    map.set('b', 2);
    map.set('c', 3);
    expect(map.get('a')).toBe(1);
    expect(map.leastUsedFirst()).toEqual(['b', 'c', 'a']);
  });

  it('setWithin keeps the bound: a new key on a full map drops the least used quarter first; a known key drops nothing', () => {
    const map = new UseStampedMap<number, number>();
    for (let i = 0; i < 8; i++) map.setWithin(i, i, 8);
    map.get(0);
    map.get(1);
    map.setWithin(3, 30, 8);
    expect(map.size).toBe(8);
    map.setWithin(100, 100, 8);
    // Keys 2 and 4 were the least recently used (3 was set again): they went.
    expect(map.size).toBe(7);
    expect(map.has(2)).toBe(false);
    expect(map.has(4)).toBe(false);
    expect(map.get(3)).toBe(30);
    expect(map.has(0) && map.has(1) && map.has(100)).toBe(true);
  });
});
