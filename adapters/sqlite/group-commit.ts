/** What became of one batch of a group: committed, or failed alone with its own error. */
export type BatchOutcome = { ok: true } | { ok: false; error: unknown };

/**
 * Commits a group of batches: each its own atomic unit, all in one transaction (one sync). Returns
 * one outcome per batch; throws when the group as a whole failed (then nothing of it was written).
 */
export type CommitGroup<B> = (batches: readonly B[]) => BatchOutcome[];

export interface GroupCommitter<B> {
  /** Queues the batch; settles once the transaction that holds it has committed (and synced) or it failed. */
  submit(batch: B): Promise<void>;
  /** Commits whatever is queued now (before the connection closes). */
  flush(): void;
}

/**
 * Group commit. Concurrent writers each call `submit`; the first to find the queue empty schedules
 * a flush on the next turn of the event loop (`setImmediate`, after pending I/O), so every batch that
 * arrives meanwhile shares the one transaction and the one sync of its group. A batch is acknowledged
 * (its promise resolves) only after that transaction committed: with `synchronous = FULL` the WAL is
 * synced by then. Groups are capped at `maxEntities` entities (a single larger batch goes alone).
 */
export function createGroupCommitter<B>(commitGroup: CommitGroup<B>, sizeOf: (batch: B) => number, maxEntities: number): GroupCommitter<B> {
  let queue: Array<{ batch: B; resolve: () => void; reject: (error: unknown) => void }> = [];
  let scheduled = false;

  function schedule(): void {
    if (scheduled || queue.length === 0) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      flushOnce();
      schedule();
    });
  }

  /** Commits the next group from the head of the queue. */
  function flushOnce(): void {
    if (queue.length === 0) return;
    let entities = 0;
    let take = 0;
    while (take < queue.length && (take === 0 || entities + sizeOf(queue[take]!.batch) <= maxEntities)) {
      entities += sizeOf(queue[take]!.batch);
      take++;
    }
    const group = queue.slice(0, take);
    queue = queue.slice(take);
    let outcomes: BatchOutcome[];
    try {
      outcomes = commitGroup(group.map((item) => item.batch));
    } catch (error) {
      for (const item of group) item.reject(error);
      return;
    }
    group.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve();
      else item.reject(outcome.error);
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
      while (queue.length) flushOnce();
    },
  };
}
