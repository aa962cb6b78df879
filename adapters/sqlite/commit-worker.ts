/**
 * The SQLite adapter's commit thread (a `worker_threads` Worker started by commit-worker-host.ts): its own
 * connection to the file, on which it commits each group of batches it is sent in one transaction, makes
 * it durable and answers one outcome per batch. The host's event loop never runs the commit's SQL, its
 * packing, the wait for another process's write lock, the WAL's fsync or a checkpoint.
 */
import { closeSync, existsSync, fsyncSync, openSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { WriteBatch } from '../../src/adapter/types';
import {
  serializeError,
  type CommitWorkerData,
  type FromCommitWorker,
  type SerializedOutcome,
  type ToCommitWorker,
} from './commit-worker-protocol';
import { LOCK_RETRY_MS, type BatchOutcome } from './group-commit';
import { createHandle, type SqliteHandle } from './statements';
import { StatisticsKeeper } from './statistics';
import { commitGroup } from './write-batch';

const port = parentPort;
if (!port) throw new Error('commit-worker.ts runs as a worker thread of the SQLite adapter');
const options = workerData as CommitWorkerData;
const post = (message: FromCommitWorker) => port.postMessage(message);

/** Sleeps this thread (never an event loop: this thread has nothing else to do meanwhile). */
const sleeper = new Int32Array(new SharedArrayBuffer(4));
const sleep = (ms: number) => Atomics.wait(sleeper, 0, 0, ms);

/**
 * The connection, set up as the adapter's own (connection.ts), without what only the first connection
 * does (migrations, recovery, statistics at open). Durability `full`: COMMIT writes the WAL without
 * syncing it (`synchronous = NORMAL`) and this thread fsyncs the WAL file right after, before answering:
 * the write lock is released before the flush, so another process's commit is not held up by it.
 */
function openWriter(): { db: Database.Database; walFd: number | undefined } {
  const db = new Database(options.filename, { fileMustExist: true });
  try {
    db.pragma(`busy_timeout = ${options.busyTimeoutMs}`);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = OFF');
    db.pragma('cache_size = -65536');
    db.function('mc_lower', { deterministic: true }, (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : value));
    db.prepare('SELECT 1 FROM entities LIMIT 1').get(); // the WAL file exists from the first read on
    const wal = `${options.filename}-wal`;
    // Read-only: this descriptor only ever syncs (SQLite's locks are on the database and -shm files).
    const walFd = options.durability === 'full' && existsSync(wal) ? openSync(wal, 'r') : undefined;
    if (options.durability === 'full' && walFd === undefined) db.pragma('synchronous = FULL');
    return { db, walFd };
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Commits a group, waiting for another process's write lock on this thread: tries with a busy timeout
 * of 0 on short sleeps (SQLite's own busy handler sleeps in steps of up to 100 ms, often long after the
 * lock was released), then past `busyTimeoutMs` a last try with the busy timeout (write-lock.ts).
 */
function commitWithLock(h: SqliteHandle, batches: readonly WriteBatch[]): BatchOutcome[] {
  const started = Date.now();
  for (let tries = 0; ; tries++) {
    const wait = Date.now() - started >= options.busyTimeoutMs;
    const outcomes = commitGroup(h, batches, undefined, { wait, busyTimeoutMs: options.busyTimeoutMs });
    if (outcomes !== 'busy') return outcomes;
    sleep(LOCK_RETRY_MS[Math.min(tries, LOCK_RETRY_MS.length - 1)]!);
  }
}

let writer: ReturnType<typeof openWriter>;
try {
  writer = openWriter();
} catch (error) {
  post({ type: 'failed', error: serializeError(error) });
  port.close();
  throw error;
}
const { db, walFd } = writer;
let handle = createHandle(db);
const statistics = new StatisticsKeeper();
/** Once an fsync failed, what reached the disk is unknown: every later commit fails (wal-sync.ts). */
let syncFailure: unknown;

port.on('message', (message: ToCommitWorker) => {
  switch (message.type) {
    case 'commit': {
      let outcomes: SerializedOutcome[];
      try {
        if (syncFailure !== undefined) throw syncFailure;
        const committed = commitWithLock(handle, message.batches);
        const written = committed.some((o) => o.ok);
        if (written && walFd !== undefined) {
          try {
            fsyncSync(walFd);
          } catch (error) {
            syncFailure = error;
            throw error;
          }
        }
        outcomes = committed.map((o) => (o.ok ? { ok: true } : { ok: false, error: serializeError(o.error) }));
        message.batches.forEach((batch, i) => {
          if (committed[i]!.ok) statistics.written(db, batch.entities?.length ?? 0);
        });
      } catch (error) {
        // The group as a whole failed (nothing of it was written), or its sync did.
        const failed = serializeError(error);
        outcomes = message.batches.map(() => ({ ok: false, error: failed }));
      }
      post({ type: 'committed', id: message.id, outcomes });
      break;
    }
    case 'reset':
      // The per-connection caches (dictionary, key ids, statements) are kept per handle: a new one starts them over.
      handle = createHandle(db);
      break;
    case 'close':
      db.close();
      if (walFd !== undefined) closeSync(walFd);
      post({ type: 'closed' });
      port.close();
      break;
  }
});

post({ type: 'ready' });
