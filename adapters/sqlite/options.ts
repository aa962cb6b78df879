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
   * With durability `'full'` on a file: sync the WAL on libuv's thread pool after each commit group,
   * acknowledging its writers once the sync is done (the default, `true`), or let SQLite sync inside
   * COMMIT on the event loop's thread (`false`: what 0.3 did). Both survive a power loss alike (wal-sync.ts).
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
