import { describe, expect, it } from 'vitest';
import { PendingReplies } from '../../src/adapter/pending-replies';

describe('PendingReplies', () => {
  it('hands each request back once, in order or not, and counts those waiting', () => {
    const pending = new PendingReplies<string>();
    for (let id = 1; id <= 5; id++) pending.add(id, `r${id}`);
    expect(pending.size).toBe(5);
    expect(pending.take(1)).toBe('r1');
    expect(pending.take(4)).toBe('r4'); // out of order
    expect(pending.take(4)).toBeUndefined(); // answered already
    expect(pending.take(9)).toBeUndefined(); // never sent
    expect(pending.size).toBe(3);
    expect(pending.take(2)).toBe('r2');
    expect(pending.take(3)).toBe('r3');
    expect(pending.take(5)).toBe('r5');
    expect(pending.size).toBe(0);
  });

  it('refuses an id that does not increase', () => {
    const pending = new PendingReplies<number>();
    pending.add(3, 3);
    expect(() => pending.add(3, 3)).toThrow(/must increase/);
    expect(() => pending.add(2, 2)).toThrow(/must increase/);
    expect(pending.size).toBe(1);
  });

  it('drains what still waits, oldest first, and starts over empty', () => {
    const pending = new PendingReplies<string>();
    for (let id = 10; id < 15; id++) pending.add(id, `r${id}`);
    pending.take(11);
    expect(pending.drain()).toEqual(['r10', 'r12', 'r13', 'r14']);
    expect(pending.size).toBe(0);
    expect(pending.take(12)).toBeUndefined();
    pending.add(1, 'again'); // a fresh start takes any id
    expect(pending.take(1)).toBe('again');
  });

  it('stays correct through long runs with a few always waiting (its front is compacted)', () => {
    const pending = new PendingReplies<number>();
    const waiting = new Set<number>();
    let next = 1;
    // Sixteen in flight at all times; every seventh answer comes out of order.
    for (let i = 0; i < 16; i++) {
      pending.add(next, next);
      waiting.add(next++);
    }
    for (let round = 0; round < 5_000; round++) {
      const ordered = [...waiting].sort((a, b) => a - b);
      const id = round % 7 === 0 ? ordered[ordered.length >> 1]! : ordered[0]!;
      expect(pending.take(id)).toBe(id);
      waiting.delete(id);
      pending.add(next, next);
      waiting.add(next++);
      expect(pending.size).toBe(waiting.size);
    }
    expect(pending.drain()).toEqual([...waiting].sort((a, b) => a - b));
  });
});
