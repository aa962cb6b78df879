import type Database from 'better-sqlite3';

/**
 * The SQL functions the adapter's statements call, registered on every connection to a catalog file (the
 * adapter's own, the commit thread's, the reader threads'): `mc_lower` lower-cases as JavaScript does for
 * IEQUAL filters (SQLite's lower() only knows ASCII).
 */
export function registerSqlFunctions(db: Database.Database): void {
  db.function('mc_lower', { deterministic: true }, (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : value));
}
