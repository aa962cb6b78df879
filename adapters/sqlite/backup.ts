import { chmodSync, existsSync, renameSync, rmSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { CatalogError } from '../../src/errors';

export interface SqliteBackupResult {
  /** The copy's size in bytes. */
  bytes: number;
  /** Pages copied (the database's page count when it was taken). */
  pages: number;
}

/**
 * A consistent copy of a SQLite catalog file while servers write to it, through SQLite's online backup
 * API: the copy is the database as one committed state, never a half-written transaction. The first
 * step copies a few pages; every later step copies all that is left at once, so that a write made
 * meanwhile (which makes SQLite start the backup over) restarts it at most once. The copy is made
 * under `<destination>.partial`, checked with `PRAGMA quick_check`, and only then given its name; an
 * existing destination is refused unless `overwrite`.
 */
export async function backupSqliteDatabase(
  source: string,
  destination: string,
  options: { overwrite?: boolean } = {},
): Promise<SqliteBackupResult> {
  if (!existsSync(source)) throw new CatalogError('NOT_FOUND', `there is no database at ${source}`);
  if (existsSync(destination) && !options.overwrite) {
    throw new CatalogError('CONFLICT', `${destination} exists; refusing to overwrite it (pass --force to replace it)`);
  }
  const partial = `${destination}.partial`;
  rmSync(partial, { force: true });
  const db = new Database(source, { fileMustExist: true });
  let pages: number;
  try {
    db.pragma('busy_timeout = 5000');
    const outcome = await db.backup(partial, {
      progress: ({ totalPages }) => Math.max(totalPages, 1),
    });
    pages = outcome.totalPages;
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  } finally {
    db.close();
  }
  const copy = new Database(partial, { fileMustExist: true });
  try {
    const check = copy.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new CatalogError('INTERNAL', `the copy of ${source} failed its integrity check: ${String(check)}`);
    // A copy that stands alone: no -wal beside it to lose.
    copy.pragma('journal_mode = DELETE');
  } catch (error) {
    copy.close();
    rmSync(partial, { force: true });
    throw error;
  }
  copy.close();
  renameSync(partial, destination);
  chmodSync(destination, 0o600);
  return { bytes: statSync(destination).size, pages };
}
