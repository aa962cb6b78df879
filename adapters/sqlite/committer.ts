/** The SQLite adapter's commits: groups of queued batches (group-commit.ts), synced off the event loop. */
import type { FaultInjectionOptions, WriteBatch } from '../../src/adapter/types';
import { createGroupCommitter, type GroupCommitter } from './group-commit';
import type { SqliteHandle } from './statements';
import { openWalSync, type WalSync } from './wal-sync';
import { commitGroup } from './write-batch';

/**
 * A group takes queued batches up to this many entities: enough for every concurrent single write,
 * while bulk batches of 1,000 still commit one by one.
 */
const GROUP_MAX_ENTITIES = 1_000;

/**
 * With the sync off the event loop (wal-sync.ts), groups of at most this many batches: each group's CPU
 * holds the host's event loop (about 0.2 ms per single write on a quiet core), and syncs are shared anyway.
 */
const GROUP_MAX_BATCHES_SYNC_OFF_LOOP = 4;

export interface SqliteCommitter extends GroupCommitter<WriteBatch> {
  /** With durability `full` on a file (unless turned off): the WAL is synced on libuv's thread pool. */
  attach(db: SqliteHandle, syncOffEventLoop: boolean): void;
  /** After a write outside the committer (jobs, timeseries, pruning): on disk before it is acknowledged. */
  durable<T>(result: T): Promise<T>;
  detach(): void;
  /** The connection's steady `synchronous` setting again, after a step that changed it (an initial load). */
  steady(db: SqliteHandle): void;
}

export function createSqliteCommitter(
  h: () => SqliteHandle,
  options: FaultInjectionOptions & { busyTimeoutMs: number },
  afterCommit: (db: SqliteHandle, batch: WriteBatch) => void,
): SqliteCommitter {
  let walSync: WalSync | undefined;
  const committer = createGroupCommitter(
    (batches: readonly WriteBatch[], wait: boolean) => {
      const db = h();
      const outcomes = commitGroup(db, batches, options.faultInjector, { wait, busyTimeoutMs: options.busyTimeoutMs });
      if (outcomes === 'busy') return outcomes;
      batches.forEach((batch, i) => {
        if (outcomes[i]!.ok) afterCommit(db, batch);
      });
      return outcomes;
    },
    (batch) => Math.max(1, batch.entities?.length ?? 0),
    GROUP_MAX_ENTITIES,
    {
      lockWaitMs: options.busyTimeoutMs,
      durable: () => (walSync ? walSync.sync() : Promise.resolve()),
      maxBatches: () => (walSync ? GROUP_MAX_BATCHES_SYNC_OFF_LOOP : Infinity),
    },
  );
  return Object.assign(committer, {
    attach(db: SqliteHandle, syncOffEventLoop: boolean) {
      if (!syncOffEventLoop) return;
      walSync = openWalSync(db.db);
      // Commits write the WAL without syncing it; walSync syncs it on the thread pool before writers hear back.
      if (walSync) db.db.pragma('synchronous = NORMAL');
    },
    async durable<T>(result: T): Promise<T> {
      if (walSync) await walSync.sync();
      return result;
    },
    steady(db: SqliteHandle) {
      if (walSync) db.db.pragma('synchronous = NORMAL');
    },
    detach() {
      walSync?.close();
      walSync = undefined;
    },
  });
}
