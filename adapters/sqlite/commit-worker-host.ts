/**
 * The adapter's side of the commit thread (commit-worker.ts): a queue of batches, sent to the thread one
 * group at a time. Batches that arrive while the thread commits a group form the next one (group commit);
 * each writer is answered once its group is committed and synced on the thread, or with its batch's own
 * error. The host's event loop only clones the batches and settles promises.
 */
import { Worker } from 'node:worker_threads';
import type { WriteBatch } from '../../src/adapter/types';
import { PendingReplies } from '../../src/adapter/pending-replies';
import { CatalogError } from '../../src/errors';
import {
  deserializeError,
  entitiesOf,
  GROUP_MAX_ENTITIES,
  type CommitWorkerData,
  type FromCommitWorker,
  type ToCommitWorker,
} from './commit-worker-protocol';
import type { GroupCommitter } from './group-commit';
import { findWorkerProgram, threadExecArgv, threadParking } from './worker-program';

/** Commit threads of closed adapters, for the next adapter of the process. */
const parking = threadParking(2);

export interface CommitWorker extends GroupCommitter<WriteBatch> {
  /** After an initial load: the thread's caches start over. */
  reset(): void;
  /** For tests: the thread itself. */
  readonly thread: () => Worker | undefined;
}

interface Queued {
  batch: WriteBatch;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Starts the commit thread on `data.filename` and resolves once its connection is open; undefined when
 * the thread's program cannot be found. `committed` runs on the host for each committed batch before
 * its writer hears back (wake-ups of change-feed followers, the handle's commit count).
 *
 * The batches queued during one turn of the event loop are sent together, at once, whether or not the
 * thread is still busy with earlier ones: the thread joins whatever waits for it into its next
 * transaction, so it never waits for the host's loop to come around to its answer.
 */
export async function startCommitWorker(data: CommitWorkerData, committed: (batch: WriteBatch) => void): Promise<CommitWorker | undefined> {
  // Undefined when the program is not found (the adapter bundled into another program): commits stay on the host's thread.
  const program = await findWorkerProgram('commit-worker.ts', 'sqlite-commit-worker.js');
  if (!program) return undefined;
  let queue: Queued[] = [];
  /** Groups sent and not yet answered, by message id (not a Map: pending-replies.ts). */
  const inFlight = new PendingReplies<Queued[]>();
  let nextId = 1;
  let scheduled = false;
  /** Writers whose outcome is known and who have not heard yet, in order: told one per turn (acknowledge). */
  const unacknowledged: Array<() => void> = [];
  /** Whether the turn that tells the next writer is scheduled. */
  let acknowledging = false;
  let closing = false;
  /** Once set, every write is refused with it (the thread could not be started again). */
  let failure: Error | undefined;
  let thread: Worker | undefined;
  let starting: Promise<void> | undefined;
  let stopped: Promise<void> = Promise.resolve();
  const idle: Array<() => void> = [];

  /** Resolves when the thread has closed its connection (the answer to `close`). */
  let onClosed: (() => void) | undefined;

  function spawn(): Promise<void> {
    const options = { workerData: data, ...threadExecArgv() };
    const reused = parking.take();
    const worker =
      reused ?? ('file' in program! ? new Worker(program!.file, options) : new Worker(program!.code, { ...options, eval: true }));
    if (reused) {
      reused.ref();
      reused.postMessage({ type: 'open', data } satisfies ToCommitWorker);
    }
    thread = worker;
    stopped = new Promise((resolve) => worker.once('exit', () => resolve()));
    return new Promise<void>((resolve, reject) => {
      let ready = false;
      worker.on('message', (message: FromCommitWorker) => {
        switch (message.type) {
          case 'ready':
            ready = true;
            // Keeps the process alive only while it holds writes (send, notifyIdle): an idle adapter does not.
            if (inFlight.size === 0 && queue.length === 0) worker.unref();
            resolve();
            break;
          case 'failed':
            reject(deserializeError(message.error));
            break;
          case 'committed':
            answer(message.groups);
            break;
          case 'closed':
            onClosed?.();
            break;
        }
      });
      worker.once('error', (error) => {
        if (!ready) reject(error);
        else lost(worker, error);
      });
      worker.once('exit', (code) => {
        if (!ready) reject(new Error(`the SQLite commit thread exited with code ${code} before it opened ${data.filename}`));
        else lost(worker, undefined);
      });
    });
  }

  /** The thread ended without being asked to: the groups it held have an unknown outcome; the next write starts a new thread. */
  function lost(worker: Worker, error: Error | undefined): void {
    if (thread !== worker) return;
    thread = undefined;
    const unknown = new CatalogError(
      'UNAVAILABLE',
      `the SQLite commit thread stopped while committing this write${error ? ` (${error.message})` : ''}: ` +
        'it may or may not have been committed; read it back before writing it again',
      { reason: 'io', ...(error ? { cause: error } : {}) },
    );
    const groups = inFlight.drain();
    for (const items of groups) for (const item of items) item.reject(unknown);
    send();
  }

  function answer(groups: ReadonlyArray<{ id: number; outcomes: ReadonlyArray<{ ok: boolean; error?: unknown }> }>): void {
    for (const { id, outcomes } of groups) {
      const items = inFlight.take(id);
      if (!items) continue;
      items.forEach((item, i) => {
        const outcome = outcomes[i]!;
        if (!outcome.ok) {
          const error = deserializeError((outcome as { error: Parameters<typeof deserializeError>[0] }).error);
          unacknowledged.push(() => item.reject(error));
        } else {
          committed(item.batch);
          unacknowledged.push(item.resolve);
        }
      });
    }
    acknowledge();
  }

  /**
   * Each writer hears back on a turn of the event loop of its own, in the order the outcomes arrived: a
   * writer goes on (its next request's work) as soon as it is acknowledged, and sixteen of them at once
   * would hold the host's loop for all of their work together. One queue for every group: the answers of
   * several transactions (several messages handled in one turn, or a group answered while the previous
   * one's writers are still being told) never tell two writers in the same turn. The message's own turn
   * tells none: the timers and I/O due meanwhile run first.
   */
  function acknowledge(): void {
    if (acknowledging || unacknowledged.length === 0) return notifyIdle();
    acknowledging = true;
    setImmediate(() => {
      acknowledging = false;
      unacknowledged.shift()!();
      acknowledge();
    });
  }

  /** Sends everything queued, in groups of up to GROUP_MAX_ENTITIES entities (starting a thread first if need be). */
  function send(): void {
    if (queue.length === 0) return notifyIdle();
    if (failure) {
      const refused = queue;
      queue = [];
      for (const item of refused) item.reject(failure);
      return notifyIdle();
    }
    if (!thread) {
      starting ??= spawn().then(
        () => {
          starting = undefined;
          send();
        },
        (error: unknown) => {
          starting = undefined;
          thread = undefined;
          failure = new CatalogError('UNAVAILABLE', `the SQLite commit thread could not be started again: ${(error as Error).message}`, {
            reason: 'io',
            cause: error,
          });
          send();
        },
      );
      return;
    }
    if (starting) return;
    thread.ref();
    while (queue.length) {
      let entities = 0;
      let take = 0;
      while (take < queue.length) {
        const size = entitiesOf(queue[take]!.batch);
        if (take > 0 && entities + size > GROUP_MAX_ENTITIES) break;
        entities += size;
        take++;
      }
      const items = queue.slice(0, take);
      queue = queue.slice(take);
      const id = nextId++;
      try {
        thread.postMessage({ type: 'commit', id, batches: items.map((item) => item.batch) } satisfies ToCommitWorker);
        inFlight.add(id, items);
      } catch (error) {
        // A batch that cannot be cloned (a function, a symbol in it): its group is refused, nothing of it was sent.
        const refused = new CatalogError(
          'INVALID_INPUT',
          `a write batch could not be sent to the commit thread: ${(error as Error).message}`,
        );
        for (const item of items) item.reject(refused);
      }
    }
    notifyIdle();
  }

  function notifyIdle(): void {
    if (inFlight.size || queue.length || starting || acknowledging || unacknowledged.length) return;
    thread?.unref();
    for (const resolve of idle.splice(0)) resolve();
  }

  await spawn();
  return {
    submit(batch) {
      if (closing) return Promise.reject(new Error('the SQLite adapter is closed'));
      return new Promise<void>((resolve, reject) => {
        queue.push({ batch, resolve, reject });
        // The first batch waits one turn of the event loop, so that the writes of concurrent requests join it.
        if (scheduled) return;
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          send();
        });
      });
    },
    flush() {
      closing = true;
      send();
    },
    async settled() {
      await new Promise<void>((resolve) => {
        idle.push(resolve);
        notifyIdle();
      });
      const worker = thread;
      thread = undefined;
      if (worker) {
        worker.ref(); // until it has closed its connection
        const closed = new Promise<boolean>((resolve) => {
          onClosed = () => resolve(true);
        });
        worker.postMessage({ type: 'close', park: true } satisfies ToCommitWorker);
        // Closed (then parked for the next adapter), or ended meanwhile.
        if (await Promise.race([closed, stopped.then(() => false)])) parking.park(worker);
      }
    },
    reset() {
      thread?.postMessage({ type: 'reset' } satisfies ToCommitWorker);
    },
    thread: () => thread,
  };
}
