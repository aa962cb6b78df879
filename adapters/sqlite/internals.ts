/** What the adapter's own tests look at inside a SQLite adapter: where its commits run, and what its connection wrote. */
import type { Worker } from 'node:worker_threads';
import type { CommitPlace } from './committer';

export interface SqliteAdapterInternals {
  /** Where commits run now (committer.ts). */
  commitPlace(): CommitPlace;
  /** The commit thread, while there is one. */
  commitThread(): Worker | undefined;
  /** Rows inserted, updated or deleted through the adapter's own connection since it opened (SQLite's `total_changes()`). */
  hostConnectionChanges(): number;
  /** The reader threads that answer searches now (read-pool.ts); empty when searches run on the host's connection. */
  readerThreads(): Worker[];
}

const registry = new WeakMap<object, SqliteAdapterInternals>();

export function registerInternals<A extends object>(adapter: A, internals: SqliteAdapterInternals): A {
  registry.set(adapter, internals);
  return adapter;
}

/** Not part of the package's exports: imported by the adapter's tests from the sources. */
export function sqliteAdapterInternals(adapter: object): SqliteAdapterInternals {
  const found = registry.get(adapter);
  if (!found) throw new Error('not a SQLite adapter');
  return found;
}
