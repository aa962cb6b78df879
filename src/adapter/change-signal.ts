/**
 * In-process wake-up for change-feed followers: `commit` calls `notify()` after events were committed;
 * `wait` resolves on the next notification, on its timeout or when its signal aborts, and always
 * removes its listener and clears its timer (a follower that stops leaves nothing behind).
 */
export class ChangeSignal {
  private readonly waiters = new Set<() => void>();

  notify(): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const wake of waiters) wake();
  }

  /** Waiting followers (for tests of resource release). */
  get size(): number {
    return this.waiters.size;
  }

  wait(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, timeoutMs));
      this.waiters.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}

/** Parses an event id cursor: a non-negative decimal integer. Undefined when malformed. */
export function parseChangeId(cursor: string): bigint | undefined {
  return /^(0|[1-9][0-9]{0,18})$/.test(cursor) ? BigInt(cursor) : undefined;
}
