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
