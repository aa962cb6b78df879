import { createHash } from 'node:crypto';
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import { CatalogError } from '../../src/errors';

/** Something that runs queries: the pool (one statement, autocommit) or a client inside a transaction. */
export interface Queryable {
  query<R extends QueryResultRow>(sql: string, values?: readonly unknown[]): Promise<R[]>;
  /** Rows changed by a statement without RETURNING. */
  execute(sql: string, values?: readonly unknown[]): Promise<number>;
  /**
   * Runs a statement through the unnamed prepared statement, which the server plans with the actual
   * parameter values every time (never a generic plan): for generated search queries, whose best plan
   * depends on how common the values are.
   */
  queryPlannedEachTime<R extends QueryResultRow>(sql: string, values?: readonly unknown[]): Promise<R[]>;
  /** Runs several statements without parameters and without preparing them (migrations, DDL). */
  script(sql: string): Promise<void>;
}

/**
 * The pool, the schema every table lives in, and the two ways to talk to the server: a single
 * statement on any pooled connection, or a transaction on one connection checked out for it alone.
 */
export interface PgHandle extends Queryable {
  readonly pool: Pool;
  /** The quoted schema name, to prefix table names: `${h.s}.entities`. */
  readonly s: string;
  /** The schema name as stored in the catalogs (unquoted), for `regclass` and information_schema look-ups. */
  readonly schemaName: string;
  /**
   * Runs `work` in one transaction on one connection that nobody else uses meanwhile: `BEGIN`, the work,
   * `COMMIT`; `ROLLBACK` when it throws. Serialization failures and deadlocks become `CONFLICT`.
   */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
}

/** SQLSTATEs of a transaction the server aborted because of another one: the caller may retry. */
const RETRYABLE = new Set(['40001', '40P01']);

function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Deadlocks and serialization failures are conflicts between writers: the domain retries them. */
export function translateError(error: unknown): unknown {
  const state = sqlState(error);
  if (state && RETRYABLE.has(state)) {
    return new CatalogError('CONFLICT', `concurrent write: ${(error as Error).message}`, { cause: error });
  }
  return error;
}

/**
 * Statements are prepared once per connection, under a name derived from their text (which includes
 * the schema), so the server parses each of them once per connection.
 */
function statementName(sql: string): string {
  return `metacatalog_${createHash('sha1').update(sql).digest('base64url').slice(0, 20)}`;
}

function runner(target: Pool | PoolClient): Queryable {
  return {
    async query<R extends QueryResultRow>(sql: string, values: readonly unknown[] = []): Promise<R[]> {
      try {
        const result = await target.query<R>({ name: statementName(sql), text: sql, values: [...values] });
        return result.rows;
      } catch (error) {
        throw translateError(error);
      }
    },
    async execute(sql: string, values: readonly unknown[] = []): Promise<number> {
      try {
        const result = await target.query({ name: statementName(sql), text: sql, values: [...values] });
        return result.rowCount ?? 0;
      } catch (error) {
        throw translateError(error);
      }
    },
    async queryPlannedEachTime<R extends QueryResultRow>(sql: string, values: readonly unknown[] = []): Promise<R[]> {
      try {
        const result = await target.query<R>({ text: sql, values: [...values] });
        return result.rows;
      } catch (error) {
        throw translateError(error);
      }
    },
    async script(sql: string): Promise<void> {
      try {
        await target.query(sql);
      } catch (error) {
        throw translateError(error);
      }
    },
  };
}

/** Quotes an identifier that was checked to be `[A-Za-z_][A-Za-z0-9_]*` (at most 63 bytes). */
export function ident(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) throw new Error(`internal: unsafe SQL identifier ${JSON.stringify(name)}`);
  return `"${name}"`;
}

export function createHandle(pool: Pool, schemaName: string): PgHandle {
  const direct = runner(pool);
  return {
    pool,
    s: ident(schemaName),
    schemaName,
    query: direct.query,
    execute: direct.execute,
    queryPlannedEachTime: direct.queryPlannedEachTime,
    script: direct.script,
    async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      let broken: Error | undefined;
      // While checked out, the pool no longer listens to the connection: a server that goes away between
      // two statements would otherwise be an unhandled 'error' event, which ends the process.
      const onError = (error: Error): void => {
        broken ??= error;
      };
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const result = await work(runner(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        try {
          await client.query('ROLLBACK');
        } catch (rollbackError) {
          // The connection is unusable: destroy it rather than hand it back to the pool.
          broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
        }
        throw translateError(error);
      } finally {
        client.off('error', onError);
        client.release(broken);
      }
    },
  };
}
