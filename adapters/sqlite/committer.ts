/**
 * The SQLite adapter's commits: groups of queued batches, committed on a thread of their own with its own
 * connection (commit-worker-host.ts) or, where that cannot apply, on the host's thread (group-commit.ts),
 * the WAL then synced off the event loop (wal-sync.ts).
 */
import type { FaultInjectionOptions, WriteBatch } from '../../src/adapter/types';
import { startCommitWorker, type CommitWorker } from './commit-worker-host';
import { createGroupCommitter, type GroupCommitter } from './group-commit';
import type { SqliteHandle } from './statements';
import type { StatisticsKeeper } from './statistics';
import { mainFileOf, openWalSync, type WalSync } from './wal-sync';
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

/** Where commits run: on the commit thread, or on the host's thread (and how its sync is made). */
export type CommitPlace = 'thread' | 'host, WAL synced off the event loop' | 'host';

export interface SqliteCommitter extends GroupCommitter<WriteBatch> {
  /**
   * Chooses where commits run, once the connection is open. Off the event loop (`offEventLoop`, the
   * default) on a file: on the commit thread, unless a fault injector is given (a function cannot cross
   * threads) or the thread's program is not found; else on the host's thread with, for durability
   * `full`, the WAL synced on libuv's thread pool. Without it: on the host's thread, synced inside COMMIT.
   */
  attach(db: SqliteHandle, options: { durability: 'full' | 'normal'; offEventLoop: boolean }): Promise<void>;
  /** Where commits run now (for tests and diagnostics). */
  place(): CommitPlace;
  /** After a write outside the committer (jobs, timeseries, pruning): on disk before it is acknowledged. */
  durable<T>(result: T): Promise<T>;
  detach(): void;
  /** The connection's steady settings again, after a step that changed them (an initial load). */
  steady(db: SqliteHandle): void;
  /** For tests: the commit thread, while there is one. */
  thread(): ReturnType<CommitWorker['thread']>;
}

/** What follows a commit on the host: wake-ups (change-feed followers) and the statistics' write count. */
export interface CommitHooks {
  committed(batch: WriteBatch): void;
  statistics: StatisticsKeeper;
}

export function createSqliteCommitter(
  h: () => SqliteHandle,
  options: FaultInjectionOptions & { busyTimeoutMs: number },
  hooks: CommitHooks,
): SqliteCommitter {
  let walSync: WalSync | undefined;
  let worker: CommitWorker | undefined;
  const inThread = createGroupCommitter(
    (batches: readonly WriteBatch[], wait: boolean) => {
      const db = h();
      const outcomes = commitGroup(db, batches, options.faultInjector, { wait, busyTimeoutMs: options.busyTimeoutMs });
      if (outcomes === 'busy') return outcomes;
      batches.forEach((batch, i) => {
        if (!outcomes[i]!.ok) return;
        hooks.committed(batch);
        hooks.statistics.written(db.db, batch.entities?.length ?? 0);
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
  const active = (): GroupCommitter<WriteBatch> => worker ?? inThread;
  return {
    submit: (batch) => active().submit(batch),
    flush: () => active().flush(),
    settled: async () => {
      await inThread.settled();
      await worker?.settled();
    },
    async attach(db, { durability, offEventLoop }) {
      if (!offEventLoop) return;
      // The host's own writes outside the committer (jobs, timeseries, pruning) are synced off the event loop too.
      if (durability === 'full') {
        walSync = openWalSync(db.db);
        // Commits write the WAL without syncing it; walSync syncs it on the thread pool before writers hear back.
        if (walSync) db.db.pragma('synchronous = NORMAL');
      }
      const file = mainFileOf(db.db);
      if (options.faultInjector || file === undefined) return;
      try {
        worker = await startCommitWorker({ filename: file, busyTimeoutMs: options.busyTimeoutMs, durability }, (batch) => {
          // Readers on the host's connection see the commit (a new read transaction does); what they cached
          // under the database's version is dropped with the commit count (search-store.ts snapshots).
          db.commits++;
          hooks.committed(batch);
        });
      } catch {
        // No thread could be started here (worker_threads refused, its program not loadable): commits stay
        // on the host's thread, as durable; only the event loop does the work.
        worker = undefined;
      }
    },
    place: () => (worker ? 'thread' : walSync ? 'host, WAL synced off the event loop' : 'host'),
    async durable<T>(result: T): Promise<T> {
      if (walSync) await walSync.sync();
      return result;
    },
    steady(db: SqliteHandle) {
      if (walSync) db.db.pragma('synchronous = NORMAL');
      worker?.reset();
    },
    detach() {
      walSync?.close();
      walSync = undefined;
      worker = undefined;
    },
    thread: () => worker?.thread(),
  };
}
