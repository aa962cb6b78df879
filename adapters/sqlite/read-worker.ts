/**
 * A reader thread of the SQLite adapter (a `worker_threads` Worker started by read-pool.ts): its own
 * connection to the file, on which it answers searches and aggregations, each in one read transaction
 * that ends before the answer is posted (a reader never holds a snapshot between messages: that would
 * keep WAL checkpoints from completing and the WAL growing). The host's event loop runs none of the
 * statements; it sends the request and settles the promise.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { serializeError } from './commit-worker-protocol';
import type { FromReadWorker, ReadMethod, ReadMethods, ReadWorkerData, ToReadWorker } from './read-worker-protocol';
import { aggregateRead, searchRead } from './search';
import { createHandle, type SqliteHandle } from './statements';
import { registerSqlFunctions } from './sql-functions';

if (!parentPort) throw new Error('read-worker.ts runs as a worker thread of the SQLite adapter');
const port: MessagePort = parentPort;
const post = (message: FromReadWorker) => port.postMessage(message);

/**
 * The connection, set up as the adapter's own for reading (connection.ts) and refusing to write
 * (`query_only`): a search never writes, and a bug that tried would fail here rather than write outside
 * the commit path. Full text still pending is moved into FTS5 by the host before it sends a full-text
 * request (search-text-queue.ts). `temp_store` stays SQLite's default: a search may sort large results.
 */
function openReader(data: ReadWorkerData): Database.Database {
  const db = new Database(data.filename, { fileMustExist: true });
  try {
    db.pragma(`busy_timeout = ${data.busyTimeoutMs}`);
    db.pragma('cache_size = -65536');
    db.pragma('query_only = ON');
    registerSqlFunctions(db);
    db.prepare('SELECT 1 FROM entities LIMIT 1').get();
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

const READS: { [M in ReadMethod]: (h: SqliteHandle, request: ReadMethods[M]['request']) => ReadMethods[M]['result'] } = {
  search: searchRead,
  aggregate: aggregateRead,
};

let db: Database.Database | undefined;
let handle: SqliteHandle | undefined;

function open(data: ReadWorkerData): boolean {
  try {
    db = openReader(data);
  } catch (error) {
    post({ type: 'failed', error: serializeError(error) });
    port.close();
    return false;
  }
  handle = createHandle(db);
  return true;
}

port.on('message', (message: ToReadWorker) => {
  switch (message.type) {
    case 'read': {
      if (!handle) {
        post({ type: 'answer', id: message.id, ok: false, error: serializeError(new Error('the SQLite reader thread is closed')) });
        return;
      }
      try {
        const read = READS[message.method] as (h: SqliteHandle, request: unknown) => unknown;
        post({ type: 'answer', id: message.id, ok: true, value: read(handle, message.request) });
      } catch (error) {
        post({ type: 'answer', id: message.id, ok: false, error: serializeError(error) });
      }
      return;
    }
    case 'reset':
      // Key ids, dictionary ids and statements are cached per handle: a new one starts them over.
      if (db) handle = createHandle(db);
      return;
    case 'close':
      db?.close();
      db = undefined;
      handle = undefined;
      post({ type: 'closed' });
      // Parked: the thread waits for the next adapter of this process to `open` a database.
      if (!message.park) port.close();
      return;
    case 'open':
      if (open(message.data)) post({ type: 'ready' });
      return;
  }
});

if (open(workerData as ReadWorkerData)) post({ type: 'ready' });
