import { closeSync, existsSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';
import { recoverInitialLoad } from './initial-load';
import { migrate } from './schema';
import { refreshStatistics } from './statistics';
import { registerSqlFunctions } from './sql-functions';

/** A new database file is created readable by its owner only: it holds token hashes and policies. */
const FILE_MODE = 0o600;

function createOwnerOnlyFile(filename: string): void {
  if (filename === ':memory:' || filename.startsWith('file:') || existsSync(filename)) return;
  try {
    closeSync(openSync(filename, 'wx', FILE_MODE));
  } catch (error) {
    // Another process made it first: fine. Anything else (no such directory...) is for SQLite to report.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return;
  }
}

/** Opens the file (created owner-only), sets the connection up and migrates it. */
export function openConnection(options: { filename: string; busyTimeoutMs?: number }, durability: 'full' | 'normal'): Database.Database {
  createOwnerOnlyFile(options.filename);
  const db = new Database(options.filename);
  try {
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    if ((db.pragma('user_version', { simple: true }) as number) === 0) db.pragma('auto_vacuum = INCREMENTAL');
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${durability === 'normal' ? 'NORMAL' : 'FULL'}`);
    db.pragma('foreign_keys = OFF');
    db.pragma('cache_size = -65536');
    // Every ANALYZE this connection runs samples (PRAGMA optimize, an initial load's statistics): on a file it
    // created too, where a full ANALYZE of a catalog that grew since would hold every commit behind it.
    db.pragma('analysis_limit = 1000');
    const created = migrate(db);
    // A load that did not complete is rolled back (its process is gone) or refused (initial-load.ts).
    recoverInitialLoad(db);
    registerSqlFunctions(db);
    // Planner statistics: cheap approximate ANALYZE where they are missing or stale, none about tiny tables (so
    // none on a new file, whose tables are empty).
    if (!created) refreshStatistics(db, 'open');
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}
