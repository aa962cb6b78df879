import type { FaultInjectionOptions } from '../../src/adapter/types';
import { CatalogError } from '../../src/errors';

export interface SqliteAdapterOptions extends FaultInjectionOptions {
  /** Path of the database file, or `':memory:'`. */
  filename: string;
  /** How long a writer waits for another process's lock (default 5000 ms). */
  busyTimeoutMs?: number;
  /**
   * `'full'` (the default): an acknowledged write survives a power loss (`synchronous = FULL`: WAL synced
   * at every commit). `'normal'`: faster; an acknowledged write survives a crash of the process but the
   * last ones may be lost on power loss (`synchronous = NORMAL`). Measured costs: docs/adapters-sqlite.md.
   */
  durability?: SqliteDurability;
  /**
   * On a file (the default, `true`): commit groups are committed and synced on a thread of the adapter's
   * own, with its own connection, and their writers are acknowledged once synced; the host's event loop
   * runs none of the commit's work. With a `faultInjector` (a function cannot cross threads), or when the
   * thread's program cannot be found or started (the adapter bundled into another file), commits run on the event
   * loop's thread and, with durability `'full'`, the WAL is synced on libuv's thread pool. `false`: commit
   * on the event loop's thread, SQLite syncing inside COMMIT (what 0.3 did). All survive a power loss alike
   * (docs/operations.md). A database in memory always commits on the event loop's thread.
   */
  syncOffEventLoop?: boolean;
  /**
   * On a file: how many reader threads answer searches and aggregations (each its own read-only connection
   * to the file, a statement's read transaction at a time), so that the host's event loop does not run them.
   * Default: one per core but one, at least one and at most four (one on two cores: the event loop keeps a
   * core of its own); `0` runs them on the host's connection. A database in memory has none.
   * docs/adapters-sqlite.md.
   */
  readerThreads?: number;
}

/** The largest `readerThreads` accepted: each thread holds a connection and its page cache (up to 64 MB). */
export const MAX_READER_THREADS = 16;

/**
 * The default's ceiling: searches are also bounded by the HTTP layer's admission control (a few per core),
 * and each thread holds a connection with its page cache.
 */
const DEFAULT_MAX_READER_THREADS = 4;

/** The number of reader threads the options ask for (the default when they say nothing); refuses anything else than 0..16. */
export function checkedReaderThreads(options: SqliteAdapterOptions, cores: number): number {
  const asked = options.readerThreads;
  if (asked === undefined) return Math.min(DEFAULT_MAX_READER_THREADS, Math.max(1, cores - 1));
  if (typeof asked !== 'number' || !Number.isInteger(asked) || asked < 0 || asked > MAX_READER_THREADS) {
    throw new CatalogError(
      'INVALID_INPUT',
      `createSqliteAdapter: readerThreads must be an integer from 0 to ${MAX_READER_THREADS}, got ${JSON.stringify(asked)}`,
      { details: [{ path: 'readerThreads', message: `must be an integer from 0 to ${MAX_READER_THREADS}` }] },
    );
  }
  return asked;
}

export type SqliteDurability = 'full' | 'normal';

/** Refuses options without a file name or with an unknown durability; the durability to use. */
export function checkedDurability(options: SqliteAdapterOptions): SqliteDurability {
  if (!options || typeof options.filename !== 'string' || options.filename === '') {
    throw new CatalogError('INVALID_INPUT', 'createSqliteAdapter: filename is required (a path or ":memory:")', {
      details: [{ path: 'filename', message: 'is required' }],
    });
  }
  const durability = options.durability ?? 'full';
  if (durability !== 'full' && durability !== 'normal') {
    throw new CatalogError(
      'INVALID_INPUT',
      `createSqliteAdapter: durability must be "full" or "normal", got ${JSON.stringify(durability)}`,
      {
        details: [{ path: 'durability', message: 'must be "full" or "normal"' }],
      },
    );
  }
  return durability;
}
