import { describe, expect, it } from 'vitest';
import { ChangeSignal, parseChangeId } from '../../src/adapter/change-signal';

describe('ChangeSignal (the in-process wake-up of change-feed followers)', () => {
  it('wakes every waiter on notify and keeps none afterwards', async () => {
    const signal = new ChangeSignal();
    const waits = [signal.wait(60_000), signal.wait(60_000)];
    expect(signal.size).toBe(2);
    signal.notify();
    await Promise.all(waits);
    expect(signal.size).toBe(0);
  });

  it('a wait that times out or is aborted removes its listener (a stopped follower leaves nothing behind)', async () => {
    const signal = new ChangeSignal();
    await signal.wait(5);
    expect(signal.size).toBe(0);
    const controller = new AbortController();
    const waiting = signal.wait(60_000, controller.signal);
    expect(signal.size).toBe(1);
    controller.abort();
    await waiting;
    expect(signal.size).toBe(0);
    await signal.wait(60_000, controller.signal); // already aborted: resolves at once
    expect(signal.size).toBe(0);
  });

  it('parses cursors: non-negative decimal integers only', () => {
    expect(parseChangeId('0')).toBe(0n);
    expect(parseChangeId('42')).toBe(42n);
    for (const bad of ['', '-1', '01', '1.5', 'x', '1e3', '99999999999999999999']) expect(parseChangeId(bad)).toBeUndefined();
  });
});
