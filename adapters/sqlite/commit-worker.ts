/**
 * The SQLite adapter's commit thread (a `worker_threads` Worker started by commit-worker-host.ts): its own
 * connection to the file, on which it commits each group of batches it is sent in one transaction, makes
 * it durable and answers one outcome per batch. The host's event loop never runs the commit's SQL, its
 * packing, the wait for another process's write lock, the WAL's fsync or a checkpoint.
 */
import { closeSync, existsSync, fsyncSync, openSync } from 'node:fs';
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { WriteBatch } from '../../src/adapter/types';
import {
  entitiesOf,
  GROUP_MAX_ENTITIES,
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
import { registerSqlFunctions } from './sql-functions';

if (!parentPort) throw new Error('commit-worker.ts runs as a worker thread of the SQLite adapter');
const port: MessagePort = parentPort;
/** The database this thread commits to now (a parked thread is given another one: `open`). */
let options = workerData as CommitWorkerData;
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
    // Statement journals in memory: each batch of a group commits in a savepoint, and past 64 KiB SQLite
    // spilled its journal to a new temporary file, created, written and deleted per transaction (a third of
    // this thread's CPU per write). Bounded by one group (GROUP_MAX_ENTITIES); this connection runs no query
    // that sorts large results or builds temporary tables.
    db.pragma('temp_store = MEMORY');
    // The statistics refresh after many writes (StatisticsKeeper) samples, as on the first connection: a full
    // ANALYZE of a large catalog would hold every commit behind it.
    db.pragma('analysis_limit = 1000');
    registerSqlFunctions(db);
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
let { db, walFd } = writer;
let handle = createHandle(db);
let statistics = new StatisticsKeeper();
/** Once an fsync failed, what reached the disk is unknown: every later commit fails (wal-sync.ts). */
let syncFailure: unknown;

/** Messages received and not yet handled, in order. */
const pending: ToCommitWorker[] = [];
let closed = false;

/** Takes every message already sent (synchronously): the groups that arrived while a transaction ran join the next one. */
function drain(): void {
  for (let received = receiveMessageOnPort(port); received; received = receiveMessageOnPort(port)) {
    pending.push(received.message as ToCommitWorker);
  }
}

/** Commits consecutive groups in one transaction (up to GROUP_MAX_ENTITIES), syncs, answers each group. */
function commitGroups(groups: ReadonlyArray<Extract<ToCommitWorker, { type: 'commit' }>>): void {
  const batches = groups.flatMap((group) => group.batches);
  let outcomes: SerializedOutcome[];
  try {
    if (syncFailure !== undefined) throw syncFailure;
    const committed = commitWithLock(handle, batches);
    if (walFd !== undefined && committed.some((o) => o.ok)) {
      try {
        fsyncSync(walFd);
      } catch (error) {
        syncFailure = error;
        throw error;
      }
    }
    outcomes = committed.map((o) => (o.ok ? { ok: true } : { ok: false, error: serializeError(o.error) }));
    batches.forEach((batch, i) => {
      if (committed[i]!.ok) statistics.written(db, batch.entities?.length ?? 0);
    });
  } catch (error) {
    // The transaction as a whole failed (nothing of it was written), or its sync did.
    const failed = serializeError(error);
    outcomes = batches.map(() => ({ ok: false, error: failed }));
  }
  let at = 0;
  post({
    type: 'committed',
    groups: groups.map((group) => ({ id: group.id, outcomes: outcomes.slice(at, (at += group.batches.length)) })),
  });
}

function control(message: Exclude<ToCommitWorker, { type: 'commit' }>): void {
  switch (message.type) {
    case 'reset':
      // The per-connection caches (dictionary, key ids, statements) are kept per handle: a new one starts them over.
      handle = createHandle(db);
      break;
    case 'close':
      closed = true;
      db.close();
      if (walFd !== undefined) closeSync(walFd);
      post({ type: 'closed' });
      // Parked: the thread waits for the next adapter of this process to `open` a database (no thread to start).
      if (!message.park) port.close();
      break;
    case 'open':
      try {
        options = message.data;
        ({ db, walFd } = openWriter());
      } catch (error) {
        post({ type: 'failed', error: serializeError(error) });
        port.close();
        return;
      }
      handle = createHandle(db);
      statistics = new StatisticsKeeper();
      syncFailure = undefined;
      closed = false;
      post({ type: 'ready' });
      break;
  }
}

/** Handles everything that has arrived, in order, then returns to the event loop (to wait for more). */
function run(): void {
  drain();
  while (pending.length && (!closed || pending[0]!.type === 'open')) {
    const head = pending[0]!;
    if (head.type !== 'commit') {
      pending.shift();
      control(head);
    } else {
      const groups: Array<Extract<ToCommitWorker, { type: 'commit' }>> = [];
      let entities = 0;
      for (let next = pending[0]; next?.type === 'commit'; next = pending[0]) {
        const size = next.batches.reduce((sum, batch) => sum + entitiesOf(batch), 0);
        if (groups.length && entities + size > GROUP_MAX_ENTITIES) break;
        groups.push(next);
        entities += size;
        pending.shift();
      }
      commitGroups(groups);
    }
    drain();
  }
}

port.on('message', (message: ToCommitWorker) => {
  pending.push(message);
  run();
});

post({ type: 'ready' });
