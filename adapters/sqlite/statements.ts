import type { Database, Statement } from 'better-sqlite3';
import { UseStampedMap } from '../../src/adapter/use-stamped-map';

/** The database and a cache of prepared statements keyed by their SQL text. */
export interface SqliteHandle {
  readonly db: Database;
  stmt(sql: string): Statement;
  /**
   * Entity commits through this connection (failed ones too: one too many only costs a re-read).
   * With `PRAGMA data_version`, which moves when another connection commits, it tells whether
   * anything a reader cached can have changed.
   */
  commits: number;
}

/**
 * Prepared statements kept per connection. The code writes a fixed set of texts, but a search is
 * one text per shape (its operators and number of conditions; values are bound): a client sending
 * ever new shapes must not grow the cache for ever. Past the limit, the least recently used quarter
 * goes at once (a use only stamps its entry: src/adapter/use-stamped-map.ts).
 */
const STATEMENT_CACHE_LIMIT = 1_000;

export function createHandle(db: Database): SqliteHandle {
  const cache = new UseStampedMap<string, Statement>();
  return {
    db,
    commits: 0,
    stmt(sql) {
      const cached = cache.get(sql);
      if (cached) return cached;
      const statement = db.prepare(sql);
      cache.setWithin(sql, statement, STATEMENT_CACHE_LIMIT);
      return statement;
    },
  };
}

/** Quotes an identifier that was already checked to be `[a-z0-9_]+`. */
export function ident(name: string): string {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`internal: unsafe SQL identifier ${JSON.stringify(name)}`);
  return `"${name}"`;
}

/**
 * better-sqlite3 binds `?` by position and `@name` by name, but not `?NNN`. Statements that use a value
 * twice name their parameters `@p1`, `@p2`, ...; this builds the matching object.
 */
export function params(...values: unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  values.forEach((v, i) => {
    out[`p${i + 1}`] = v;
  });
  return out;
}
