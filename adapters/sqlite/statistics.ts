import type { Database } from 'better-sqlite3';

/**
 * Planner statistics (sqlite_stat1). SQLite plans with them, and statistics taken while a table was
 * nearly empty are a trap: a file created by a short command says "one row" for every table, and a
 * long-running process that opens it later would plan a scan where an index seek is due. The hot
 * statements name their indexes (INDEXED BY) so they cannot go wrong; everything else relies on the
 * rules here:
 *
 * - at open, `PRAGMA optimize` with the flags SQLite recommends for a new connection (0x10002: check
 *   every table, re-analyse those whose size changed a lot since their statistics were taken);
 * - while a process runs, the same after a number of writes and once an hour (statistics follow a
 *   growing catalog: SQLite's advice for long-lived connections);
 * - whenever statistics were refreshed (at close too), the rows about tables under `TINY_TABLE_ROWS`
 *   rows are deleted: without statistics SQLite assumes a large table and prefers indexes, which is
 *   right for a catalog that is about to grow.
 */

/** Statistics about tables smaller than this are dropped (the planner's defaults suit them better). */
const TINY_TABLE_ROWS = 1_000;

/** How often a long-running connection refreshes its statistics. */
const OPTIMIZE_INTERVAL_MS = 60 * 60 * 1000;

/** The PRAGMA optimize mask SQLite recommends right after opening a connection. */
const AT_OPEN = 0x10002;

/** Refreshes stale statistics and forgets those about tiny tables. Never throws: statistics are an optimisation. */
export function refreshStatistics(db: Database, when: 'open' | 'running'): void {
  try {
    db.pragma(when === 'open' ? `optimize = ${AT_OPEN}` : 'optimize');
    forgetTinyStatistics(db);
  } catch {
    // A busy or read-only file keeps the statistics it has: the hot statements do not depend on them.
  }
}

/** Deletes the sqlite_stat1 rows that describe a table (or an index of one) with fewer than TINY_TABLE_ROWS rows. */
function forgetTinyStatistics(db: Database): number {
  const hasStats = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'sqlite_stat1'").get() !== undefined;
  if (!hasStats) return 0;
  // The first number of `stat` is the row count of the table (or index).
  const tiny = db.prepare('SELECT DISTINCT tbl FROM sqlite_stat1 WHERE CAST(stat AS INTEGER) < ?').pluck().all(TINY_TABLE_ROWS) as string[];
  if (tiny.length === 0) return 0;
  const removed = db.prepare('DELETE FROM sqlite_stat1 WHERE tbl IN (SELECT value FROM json_each(?))').run(JSON.stringify(tiny)).changes;
  // Makes this connection's planner reload what is left (other connections do at their next schema load).
  db.exec('ANALYZE sqlite_schema');
  return removed;
}

/** Entity writes before the first `PRAGMA optimize` run; the gap doubles after each run, up to the maximum. */
const OPTIMIZE_FIRST = 10_000;
const OPTIMIZE_MAX_GAP = 1_000_000;

/**
 * Keeps one connection's statistics current as the catalog grows: `PRAGMA optimize` re-analyses the tables
 * whose size changed a lot (approximately, analysis_limit) after 10,000 entity writes, then 20,000 more,
 * 40,000 more...: statistics follow a growing catalog, and a bulk load of a million pays a dozen runs. An
 * hourly run covers a long-running process that writes little.
 */
export class StatisticsKeeper {
  private writesSinceOptimize = 0;
  private optimizeGap = OPTIMIZE_FIRST;
  private timer: NodeJS.Timeout | undefined;

  /** Starts the hourly refresh of the connection `db()` returns (undefined once closed). */
  start(db: () => Database | undefined): void {
    this.timer = setInterval(() => {
      const current = db();
      if (current) refreshStatistics(current, 'running');
    }, OPTIMIZE_INTERVAL_MS).unref();
  }

  /** Counts committed entity writes; refreshes when the gap is reached. */
  written(db: Database, entities: number): void {
    this.writesSinceOptimize += entities;
    if (this.writesSinceOptimize < this.optimizeGap) return;
    this.writesSinceOptimize = 0;
    this.optimizeGap = Math.min(this.optimizeGap * 2, OPTIMIZE_MAX_GAP);
    refreshStatistics(db, 'running');
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
