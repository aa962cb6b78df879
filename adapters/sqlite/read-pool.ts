/**
 * The adapter's side of its reader threads (read-worker.ts): searches and aggregations run there, each on
 * the thread with the fewest reads in flight, so that the host's event loop keeps turning (accepting
 * connections, refusing what it cannot take, answering cheap requests) while SQLite evaluates them. A
 * thread that ends unexpectedly fails the reads it held with UNAVAILABLE and is started again by the next
 * read; `close` waits for the reads in flight, then closes each thread's connection and parks the thread
 * for the next adapter of the process.
 */
import { Worker } from 'node:worker_threads';
import { PendingReplies } from '../../src/adapter/pending-replies';
import { CatalogError } from '../../src/errors';
import { deserializeError } from './commit-worker-protocol';
import type { FromReadWorker, ReadMethod, ReadMethods, ReadWorkerData, ToReadWorker } from './read-worker-protocol';
import { detachThread, findWorkerProgram, threadExecArgv, threadParking, type WorkerProgram } from './worker-program';

export interface ReadPool {
  /** Runs a read on a reader thread: its answer, or its error as the host's connection would have thrown it. */
  run<M extends ReadMethod>(method: M, request: ReadMethods[M]['request']): Promise<ReadMethods[M]['result']>;
  /** After an initial load: the threads' caches start over. */
  reset(): void;
  /** Waits for the reads in flight, then closes the threads' connections (the threads are parked). */
  close(): Promise<void>;
  /** For tests: the threads running now. */
  threads(): Worker[];
}

/** Reader threads of closed adapters, for the next adapter of the process. */
const parking = threadParking(4);

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

interface Reader {
  readonly worker: Worker;
  /** Reads sent and not yet answered (not a Map: pending-replies.ts). */
  readonly pending: PendingReplies<Pending>;
  /** Resolves once the thread has ended. */
  readonly exited: Promise<void>;
  /** Resolves when the thread has closed its connection (the answer to `close`). */
  onClosed?: () => void;
}

/**
 * A pool of up to `size` reader threads on `data.filename`, each started by the first read that needs it
 * (a process that never searches, as most commands of the command line, starts none: a thread costs about
 * 55 ms and 80 ms of CPU to start); undefined when the threads' program cannot be found (the adapter bundled
 * into another program). A read sent to a thread still opening its connection waits in its queue; a thread
 * that cannot open fails the reads it was given with UNAVAILABLE, and the next read starts another.
 */
export async function startReadPool(data: ReadWorkerData, size: number): Promise<ReadPool | undefined> {
  const program = await findWorkerProgram('read-worker.ts', 'sqlite-read-worker.js');
  if (!program) return undefined;
  const slots: Array<Reader | undefined> = new Array<Reader | undefined>(size).fill(undefined);
  let nextId = 1;
  let closing = false;
  const idle: Array<() => void> = [];

  function inFlight(): number {
    return slots.reduce((sum, reader) => sum + (reader?.pending.size ?? 0), 0);
  }

  function notifyIdle(): void {
    if (inFlight() === 0) for (const resolve of idle.splice(0)) resolve();
  }

  /** Fails the reads a thread held and frees its slot: the next read starts a new thread there. */
  function lost(reader: Reader, error: Error): void {
    const at = slots.indexOf(reader);
    if (at >= 0) slots[at] = undefined;
    detachThread(reader.worker);
    const reads = reader.pending.drain();
    for (const read of reads) read.reject(error);
    notifyIdle();
  }

  function spawn(at: number): Reader {
    const reused = parking.take();
    const options = { workerData: data, ...threadExecArgv() };
    let worker: Worker;
    if (reused) {
      reused.ref(); // until its connection is open
      reused.postMessage({ type: 'open', data } satisfies ToReadWorker);
      worker = reused;
    } else worker = newWorker(program!, options);
    const reader: Reader = {
      worker,
      pending: new PendingReplies<Pending>(),
      exited: new Promise((resolve) => worker.once('exit', () => resolve())),
    };
    worker.on('message', (message: FromReadWorker) => {
      switch (message.type) {
        case 'ready':
          // Holds the process open only while it has reads in flight (run): an idle adapter does not.
          if (reader.pending.size === 0) worker.unref();
          break;
        case 'failed': {
          const error = new CatalogError(
            'UNAVAILABLE',
            `a SQLite reader thread could not open ${data.filename}: ${deserializeError(message.error).message}`,
            { reason: 'io' },
          );
          lost(reader, error);
          break;
        }
        case 'answer': {
          const read = reader.pending.take(message.id);
          if (!read) break;
          if (reader.pending.size === 0) worker.unref();
          if (message.ok) read.resolve(message.value);
          else read.reject(deserializeError(message.error));
          notifyIdle();
          break;
        }
        case 'closed':
          reader.onClosed?.();
          break;
      }
    });
    const stopped = (error: Error | undefined) => {
      const failure = new CatalogError(
        'UNAVAILABLE',
        `a SQLite reader thread stopped while answering this read${error ? ` (${error.message})` : ''}: try again`,
        { reason: 'io', ...(error ? { cause: error } : {}) },
      );
      lost(reader, failure);
    };
    worker.once('error', (error) => stopped(error));
    worker.once('exit', (code) => stopped(code === 0 ? undefined : new Error(`exit code ${code}`)));
    slots[at] = reader;
    return reader;
  }

  /** The reader with the fewest reads in flight; an empty slot (a thread that ended) gets a new thread. */
  function pick(): Reader {
    let best: Reader | undefined;
    for (let at = 0; at < slots.length; at++) {
      const reader = slots[at] ?? spawn(at);
      if (!best || reader.pending.size < best.pending.size) best = reader;
    }
    return best!;
  }

  /** Closes each thread's connection and parks the thread for the next adapter (one that ended meanwhile is let go). */
  async function closeAll(): Promise<void> {
    const readers = slots.filter((reader): reader is Reader => reader !== undefined);
    slots.fill(undefined);
    await Promise.all(
      readers.map(async (reader) => {
        reader.worker.ref(); // until it has closed its connection
        const closed = new Promise<boolean>((resolve) => {
          reader.onClosed = () => resolve(true);
        });
        reader.worker.postMessage({ type: 'close', park: true } satisfies ToReadWorker);
        // Closed (then parked for the next adapter), or ended meanwhile.
        if (await Promise.race([closed, reader.exited.then(() => false)])) parking.park(reader.worker);
        else {
          detachThread(reader.worker);
          reader.worker.unref();
        }
      }),
    );
  }

  return {
    run<M extends ReadMethod>(method: M, request: ReadMethods[M]['request']): Promise<ReadMethods[M]['result']> {
      if (closing) return Promise.reject(new Error('the SQLite adapter is closed'));
      const reader = pick();
      const id = nextId++;
      return new Promise<ReadMethods[M]['result']>((resolve, reject) => {
        try {
          reader.worker.postMessage({ type: 'read', id, method, request } satisfies ToReadWorker);
        } catch (error) {
          // A request that cannot be cloned (a function in it): refused, nothing was sent.
          reject(new CatalogError('INVALID_INPUT', `a read could not be sent to a reader thread: ${(error as Error).message}`));
          return;
        }
        if (reader.pending.size === 0) reader.worker.ref(); // the process waits for the answer
        reader.pending.add(id, { resolve: resolve as (value: unknown) => void, reject });
      });
    },
    reset() {
      for (const reader of slots) reader?.worker.postMessage({ type: 'reset' } satisfies ToReadWorker);
    },
    async close() {
      closing = true;
      await new Promise<void>((resolve) => {
        idle.push(resolve);
        notifyIdle();
      });
      await closeAll();
    },
    threads: () => slots.filter((reader): reader is Reader => reader !== undefined).map((reader) => reader.worker),
  };
}

function newWorker(program: WorkerProgram, options: { workerData: ReadWorkerData; execArgv?: string[] }): Worker {
  return 'file' in program ? new Worker(program.file, options) : new Worker(program.code, { ...options, eval: true });
}
