/** What became of one batch of a group: committed, or failed alone with its own error. */
export type BatchOutcome = { ok: true } | { ok: false; error: unknown };

/**
 * Commits a group of batches: each its own atomic unit, all in one transaction (one sync). Returns
 * one outcome per batch; throws when the group as a whole failed (then nothing of it was written).
 * Returns `'busy'` when another process holds the write lock and `wait` is false: nothing was done,
 * the committer tries again a little later without blocking the event loop. With `wait` it waits for
 * the lock as SQLite's busy timeout says (and fails with SQLITE_BUSY past it).
 */
export type CommitGroup<B> = (batches: readonly B[], wait: boolean) => BatchOutcome[] | 'busy';

export interface GroupCommitterOptions {
  /** How long batches may wait for another process's write lock, retried asynchronously, before a last blocking try. */
  lockWaitMs?: number;
  /**
   * Made durable after the commit (the WAL synced off the event loop, wal-sync.ts): a batch is
   * acknowledged only once this resolves. Without it, the commit itself was durable.
   */
  durable?: () => Promise<void>;
  /**
   * At most this many batches per group (default: no limit but `maxEntities`). When the sync is off the
   * event loop, a group no longer saves syncs (those are coalesced anyway), only CPU per commit, and a
   * long group holds the event loop for its whole CPU time: small groups, with the loop served between them.
   */
  maxBatches?: () => number;
}

export interface GroupCommitter<B> {
  /** Queues the batch; settles once the transaction that holds it has committed (and synced) or it failed. */
  submit(batch: B): Promise<void>;
  /** Commits whatever is queued now (before the connection closes), waiting for the lock if need be. */
  flush(): void;
  /** Resolves once every acknowledged-to-be batch is durable (before the connection closes). */
  settled(): Promise<void>;
}

/** Delays between tries for another process's write lock: short (a commit holds it for a millisecond or two), then capped. */
export const LOCK_RETRY_MS: readonly number[] = [0, 1, 1, 2, 2, 4];

/**
 * Group commit. Concurrent writers each call `submit`; the first to find the queue empty schedules
 * a flush on the next turn of the event loop (`setImmediate`, after pending I/O), so every batch that
 * arrives meanwhile shares the one transaction and the one sync of its group. A batch is acknowledged
 * (its promise resolves) only after that transaction committed and is durable. Groups are capped at
 * `maxEntities` entities (a single larger batch goes alone). While another process holds the write
 * lock, the queue waits on timers (the event loop keeps serving, and the queue grows into a larger
 * group) instead of in SQLite's busy handler, which sleeps the whole thread.
 */
export function createGroupCommitter<B>(
  commitGroup: CommitGroup<B>,
  sizeOf: (batch: B) => number,
  maxEntities: number,
  options: GroupCommitterOptions = {},
): GroupCommitter<B> {
  let queue: Array<{ batch: B; resolve: () => void; reject: (error: unknown) => void }> = [];
  let scheduled = false;
  /** When the lock was first found busy (undefined while it is not). */
  let busySince: number | undefined;
  let busyTries = 0;
  /**
   * Groups committed and not yet durable, and who waits for none to be left. A count, not a Set of their
   * promises: a long-lived Set that gains and loses one per group keeps every group it held alive
   * through young-generation collections (pending-replies.ts).
   */
  let syncing = 0;
  let whenSettled: Array<() => void> = [];
  const lockWaitMs = options.lockWaitMs ?? 5_000;

  function schedule(): void {
    if (scheduled || queue.length === 0) return;
    scheduled = true;
    const run = () => {
      scheduled = false;
      flushOnce(false);
      schedule();
    };
    if (busySince === undefined) setImmediate(run);
    else setTimeout(run, LOCK_RETRY_MS[Math.min(busyTries, LOCK_RETRY_MS.length - 1)]);
  }

  /** Commits the next group from the head of the queue. */
  function flushOnce(forceWait: boolean): void {
    if (queue.length === 0) return;
    let entities = 0;
    let take = 0;
    const maxBatches = options.maxBatches?.() ?? Infinity;
    while (take < queue.length && take < maxBatches && (take === 0 || entities + sizeOf(queue[take]!.batch) <= maxEntities)) {
      entities += sizeOf(queue[take]!.batch);
      take++;
    }
    const group = queue.slice(0, take);
    const wait = forceWait || (busySince !== undefined && Date.now() - busySince >= lockWaitMs);
    let outcomes: BatchOutcome[] | 'busy';
    try {
      outcomes = commitGroup(
        group.map((item) => item.batch),
        wait,
      );
    } catch (error) {
      queue = queue.slice(take);
      busySince = undefined;
      busyTries = 0;
      for (const item of group) item.reject(error);
      return;
    }
    if (outcomes === 'busy') {
      // Nothing was taken: the group stays at the head of the queue (and may grow before the next try).
      busySince ??= Date.now();
      busyTries++;
      return;
    }
    busySince = undefined;
    busyTries = 0;
    queue = queue.slice(take);
    const committed: typeof group = [];
    group.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (!outcome.ok) item.reject(outcome.error);
      else if (options.durable) committed.push(item);
      else item.resolve();
    });
    if (committed.length === 0) return;
    syncing++;
    void options.durable!()
      .then(
        () => committed.forEach((item) => item.resolve()),
        (error: unknown) => committed.forEach((item) => item.reject(error)),
      )
      .finally(() => {
        if (--syncing > 0) return;
        const waiting = whenSettled;
        whenSettled = [];
        for (const resolve of waiting) resolve();
      });
  }

  return {
    submit(batch) {
      return new Promise<void>((resolve, reject) => {
        queue.push({ batch, resolve, reject });
        schedule();
      });
    },
    flush() {
      while (queue.length) flushOnce(true);
    },
    async settled() {
      if (syncing === 0) return;
      await new Promise<void>((resolve) => whenSettled.push(resolve));
    },
  };
}
