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

/** A relation of a schema: its name and kind (pg_class.relkind). */
interface Relation {
  name: string;
  kind: string;
}

/**
 * Fresh schemas for tests, and an administrative pool to look into them and drop them.
 *
 * With `recycle`, a schema a test used is not dropped but made fresh again for a later test (the
 * conformance suite opens some 130 adapters, and migrating a new schema costs the server far more than
 * emptying one): the connections still open on it are ended, it is renamed (an adapter left open on it
 * finds its schema gone, as after a drop), every relation the migrations did not create is dropped,
 * its tables are emptied with their sequences restarted, and the rows a new schema starts with are
 * copied from a template schema the adapter migrated once. What the next test finds is what the adapter
 * itself makes of a new schema.
 */
export class SchemaPool {
  private readonly admin: pg.Pool;
  private readonly created: string[] = [];
  private readonly schemaOf = new WeakMap<StorageAdapter, string>();
  /** Recycled schemas, fresh again, not yet handed out. */
  private readonly ready: string[] = [];
  private template: Promise<{ schema: string; relations: Relation[]; seeded: string[] }> | undefined;

  /**
   * `url`: the server (default: the shared test server); `replicas`: standbys the adapters send searches to
   * (test/adapters/postgres/replicas.test.ts, on a cluster of its own).
   */
  constructor(private readonly options: { recycle?: boolean; url?: string; replicas?: string[] } = {}) {
    this.admin = new pg.Pool({ connectionString: options.url ?? POSTGRES_URL, max: 2 });
  }

  /** A schema name no other test uses (the adapter creates it on open, unless it is a recycled one). */
  freshSchema(): string {
    const name = this.ready.pop() ?? `mc_test_${randomBytes(6).toString('hex')}`;
    this.created.push(name);
    return name;
  }

  adapter(settings: PostgresAdapterSettings & { schema: string }): StorageAdapter {
    // Its connections carry the schema's name, so that a recycling can end the ones still open.
    const url = new URL(this.options.url ?? POSTGRES_URL);
    url.searchParams.set('application_name', settings.schema);
    const replicas = this.options.replicas;
    const adapter = createPostgresAdapter(
      { connectionString: url.href, ...(replicas ? { replicas } : {}) },
      { maxConnections: 4, ...settings },
    );
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

  /** Drops the schemas made so far (with `recycle`: makes them fresh for the next tests). */
  async dropAll(): Promise<void> {
    const names = this.created.splice(0);
    for (const name of names) {
      if (this.options.recycle && this.ready.length < 8 && (await this.recycle(name))) continue;
      await this.dropSchema(name);
    }
  }

  async end(): Promise<void> {
    await this.dropAll();
    for (const name of this.ready.splice(0)) await this.dropSchema(name);
    const template = await this.template?.catch(() => undefined);
    if (template) await this.dropSchema(template.schema);
    await this.admin.end();
  }

  private async dropSchema(name: string): Promise<void> {
    await this.admin.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
  }

  private async relationsOf(schema: string): Promise<Relation[]> {
    return (
      await this.admin.query<Relation>(
        `SELECT c.relname AS name, c.relkind AS kind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f') ORDER BY c.relname`,
        [schema],
      )
    ).rows;
  }

  /** A schema the adapter migrated and closed: its relations, and the tables that start with rows. */
  private templateSchema(): Promise<{ schema: string; relations: Relation[]; seeded: string[] }> {
    this.template ??= (async () => {
      const schema = `mc_test_${randomBytes(6).toString('hex')}`;
      const adapter = this.adapter({ schema });
      await adapter.open();
      await adapter.close();
      const relations = await this.relationsOf(schema);
      const seeded: string[] = [];
      for (const r of relations.filter((r) => r.kind === 'r' || r.kind === 'p')) {
        const rows = await this.admin.query(`SELECT 1 FROM "${schema}"."${r.name}" LIMIT 1`);
        if (rows.rowCount) seeded.push(r.name);
      }
      return { schema, relations, seeded };
    })();
    return this.template;
  }

  /** Makes a used schema fresh under a new name, into `ready`; false when it cannot (then it is dropped). */
  private async recycle(used: string): Promise<boolean> {
    const template = await this.templateSchema();
    const relations = await this.relationsOf(used);
    // Never opened (no tables): nothing to recycle.
    if (!template.relations.every((t) => relations.some((r) => r.name === t.name && r.kind === t.kind))) return false;
    const fresh = `mc_test_${randomBytes(6).toString('hex')}`;
    await this.admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()',
      [used],
    );
    const client = await this.admin.connect();
    try {
      await client.query('BEGIN');
      await client.query(`ALTER SCHEMA "${used}" RENAME TO "${fresh}"`);
      const extra = relations.filter((r) => !template.relations.some((t) => t.name === r.name && t.kind === r.kind));
      for (const r of extra) {
        const kind = { r: 'TABLE', p: 'TABLE', v: 'VIEW', m: 'MATERIALIZED VIEW', S: 'SEQUENCE', f: 'FOREIGN TABLE' }[r.kind];
        await client.query(`DROP ${kind} IF EXISTS "${fresh}"."${r.name}" CASCADE`);
      }
      const tables = template.relations.filter((r) => r.kind === 'r' || r.kind === 'p').map((r) => `"${fresh}"."${r.name}"`);
      // DELETE, not TRUNCATE: a test leaves a few rows, and TRUNCATE gives every table and index new files
      // (measured: the server's CPU for the conformance suite fell from 12.4-15.2 s to 9.0-10.1 s).
      for (const table of tables) await client.query(`DELETE FROM ${table}`);
      // Every sequence starts again (those owned by a column and the others).
      await client.query(
        `SELECT setval(c.oid, s.seqstart, false) FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid
          JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1`,
        [fresh],
      );
      for (const table of template.seeded) {
        await client.query(`INSERT INTO "${fresh}"."${table}" OVERRIDING SYSTEM VALUE SELECT * FROM "${template.schema}"."${table}"`);
      }
      await client.query('COMMIT');
    } catch {
      await client.query('ROLLBACK').catch(() => undefined);
      return false;
    } finally {
      client.release();
    }
    this.ready.push(fresh);
    return true;
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
