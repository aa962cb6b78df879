import { afterAll, describe, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPostgresAdapter, type PostgresAdapterSettings } from '../../adapters/postgres/index';
import type { StorageAdapter } from '../../src/adapter/types';
import { freshAdapters } from './adapters';

/**
 * Tests that need a PostgreSQL server find it through METACATALOG_TEST_POSTGRES_URL (see
 * test/support/pg-test-server.sh, which `.ci/run` uses), or on 127.0.0.1:5432. Each test works in a
 * schema of its own, dropped afterwards.
 */
export const POSTGRES_URL = process.env.METACATALOG_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const IN_CI = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';

export type ServerState = { reachable: true } | { reachable: false; reason: string };

/** Whether the server answers; never throws. */
export async function probeServer(): Promise<ServerState> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return { reachable: true };
  } catch (error) {
    return { reachable: false, reason: error instanceof Error ? error.message : String(error) };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * What a test file does about the server: run (`'run'`), skip loudly (no server and not in CI), or
 * fail (no server in CI: `CI` is set, so the suite must not pass without having run).
 */
export async function serverDecision(file: string): Promise<'run' | 'skip' | 'fail'> {
  const state = await probeServer();
  if (state.reachable) return 'run';
  if (IN_CI) return 'fail';
  const bar = '!'.repeat(100);
  console.warn(
    `\n${bar}\n!! ${file}: SKIPPED — no PostgreSQL server at ${POSTGRES_URL} (${state.reason}).\n` +
      `!! Start one with: eval "$(bash test/support/pg-test-server.sh start)"  (stop: bash test/support/pg-test-server.sh stop)\n` +
      `!! Under CI=true these tests fail instead of skipping.\n${bar}\n`,
  );
  return 'skip';
}

/**
 * Registers a PostgreSQL test file's tests: `register` when a server answers; otherwise one declared
 * skip (no server, outside CI) or one failing test (no server under CI), both titled `title`.
 */
export async function withPostgresServer(file: string, title: string, register: () => void): Promise<void> {
  const decision = await serverDecision(file);
  if (decision === 'run') register();
  else if (decision === 'skip') {
    describe.skip(`${title} (no PostgreSQL server)`, () => {
      it('needs a PostgreSQL server', () => undefined);
    });
  } else {
    describe(title, () => {
      it('needs a PostgreSQL server', () => {
        throw new Error(unreachableMessage());
      });
    });
  }
}

export function unreachableMessage(): string {
  return `CI is set but no PostgreSQL server answers at ${POSTGRES_URL}: .ci/run starts one (test/support/pg-test-server.sh)`;
}

/** Fresh schemas for tests, and an administrative pool to look into them and drop them. */
export class SchemaPool {
  private readonly admin = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
  private readonly created: string[] = [];
  private readonly schemaOf = new WeakMap<StorageAdapter, string>();

  /** A schema name no other test uses (the adapter creates it on open). */
  freshSchema(): string {
    const name = `mc_test_${randomBytes(6).toString('hex')}`;
    this.created.push(name);
    return name;
  }

  adapter(settings: PostgresAdapterSettings & { schema: string }): StorageAdapter {
    const adapter = createPostgresAdapter({ connectionString: POSTGRES_URL }, { maxConnections: 4, ...settings });
    this.schemaOf.set(adapter, settings.schema);
    return adapter;
  }

  schemaOfAdapter(adapter: StorageAdapter): string {
    const schema = this.schemaOf.get(adapter);
    if (!schema) throw new Error('this adapter was not created by the test harness');
    return schema;
  }

  /** Rows of a table in the adapter's schema, read with another connection: the store itself. */
  async countRows(adapter: StorageAdapter, table: string): Promise<number> {
    const result = await this.admin.query<{ n: string }>(`SELECT count(*) AS n FROM "${this.schemaOfAdapter(adapter)}"."${table}"`);
    return Number(result.rows[0]?.n ?? 0);
  }

  async query<R extends pg.QueryResultRow>(sql: string, values: unknown[] = []): Promise<R[]> {
    return (await this.admin.query<R>(sql, values)).rows;
  }

  /** Drops the schemas made so far. */
  async dropAll(): Promise<void> {
    const names = this.created.splice(0);
    for (const name of names) await this.admin.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
  }

  async end(): Promise<void> {
    await this.dropAll();
    await this.admin.end();
  }
}

/**
 * The fresh adapters of test/support/adapters.ts and, when the test server answers, PostgreSQL too (a
 * schema of its own per call). Without a server the file runs on memory and SQLite only.
 */
export async function adaptersWithPostgres(file: string): Promise<Record<string, () => StorageAdapter>> {
  if ((await serverDecision(file)) !== 'run') return freshAdapters();
  const pool = new SchemaPool();
  afterAll(() => pool.end());
  return { ...freshAdapters(), postgres: () => pool.adapter({ schema: pool.freshSchema() }) };
}
