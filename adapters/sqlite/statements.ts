import type { Database, Statement } from 'better-sqlite3';

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
 * goes at once. A use only stamps its entry: moving it to the end of the map on every call rewrote
 * the map's table (new entries, rehashes) on each of a write's dozens of statements.
 */
const STATEMENT_CACHE_LIMIT = 1_000;

interface CachedStatement {
  readonly statement: Statement;
  used: number;
}

export function createHandle(db: Database): SqliteHandle {
  const cache = new Map<string, CachedStatement>();
  let uses = 0;
  return {
    db,
    commits: 0,
    stmt(sql) {
      const cached = cache.get(sql);
      if (cached) {
        cached.used = ++uses;
        return cached.statement;
      }
      const statement = db.prepare(sql);
      if (cache.size >= STATEMENT_CACHE_LIMIT) {
        const byUse = [...cache].sort((a, b) => a[1].used - b[1].used);
        for (const [text] of byUse.slice(0, STATEMENT_CACHE_LIMIT / 4)) cache.delete(text);
      }
      cache.set(sql, { statement, used: ++uses });
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
