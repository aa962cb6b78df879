import type { SqliteHandle } from './statements';

/**
 * Takes the write lock for a commit: `BEGIN IMMEDIATE`. Several processes (`serve --workers N`, or a
 * CLI command beside a server) share one file and one write lock. SQLite's busy handler waits for it by
 * sleeping the calling thread, in growing steps (up to 100 ms each): a worker's event loop stops while
 * the other holds the lock, and often sleeps on after it was released. So the first tries are made
 * with the busy timeout at 0 and return false at once when the lock is taken; the group committer
 * (group-commit.ts) tries again on a short timer, serving requests meanwhile. With `wait` (the lock has
 * been busy for the whole busy timeout, or the adapter is closing) the connection's busy timeout applies.
 */
export function beginWrite(h: SqliteHandle, wait: boolean, busyTimeoutMs: number): boolean {
  if (wait) {
    h.db.exec('BEGIN IMMEDIATE');
    return true;
  }
  h.stmt('PRAGMA busy_timeout = 0').get();
  try {
    h.db.exec('BEGIN IMMEDIATE');
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_BUSY') return false;
    throw error;
  } finally {
    h.stmt(`PRAGMA busy_timeout = ${busyTimeoutMs}`).get();
  }
}
