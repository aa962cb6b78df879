import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createPostgresAdapter } from '../../../adapters/postgres/index';
import type { StorageAdapter } from '../../../src/adapter/types';
import { CatalogError } from '../../../src/errors';
import { POSTGRES_URL, SchemaPool, withPostgresServer } from '../../support/postgres';

/** What the PostgreSQL adapter adds to the contract: its options, pool ownership, schemas, storage limits. */

const T0 = 1_700_000_000_000;
const URN_A = 'urn:li:dataset:(urn:li:dataPlatform:hive,a,PROD)';

function codeOf(run: () => unknown): string {
  try {
    run();
    return 'returned';
  } catch (error) {
    return error instanceof CatalogError ? error.code : `not a CatalogError: ${String(error)}`;
  }
}

async function asyncCodeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'resolved';
  } catch (error) {
    return error instanceof CatalogError ? error.code : `not a CatalogError: ${String(error)}`;
  }
}

const create = (urn: string) => ({
  entities: [
    {
      urn,
      entityType: 'dataset',
      expectVersion: 0,
      put: [
        {
          name: 'info',
          value: { n: 1 },
          version: 1,
          created: { time: T0, actor: 'urn:li:corpuser:a' },
          lastModified: { time: T0, actor: 'urn:li:corpuser:a' },
        },
      ],
    },
  ],
});

describe('createPostgresAdapter options (no server needed)', () => {
  it('needs exactly one of connectionString and pool, and a plain schema name', () => {
    const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });
    expect(codeOf(() => createPostgresAdapter({} as never))).toBe('INVALID_INPUT');
    expect(codeOf(() => createPostgresAdapter({ connectionString: '' }))).toBe('INVALID_INPUT');
    expect(codeOf(() => createPostgresAdapter({ connectionString: 'postgres://x', pool } as never))).toBe('INVALID_INPUT');
    expect(codeOf(() => createPostgresAdapter({ connectionString: 'postgres://x' }, { schema: 'bad-name; DROP' }))).toBe('INVALID_INPUT');
    expect(codeOf(() => createPostgresAdapter({ connectionString: 'postgres://x' }, { schema: 'a'.repeat(64) }))).toBe('INVALID_INPUT');
    expect(codeOf(() => createPostgresAdapter({ pool }, { schema: 'catalog_1' }))).toBe('returned');
    expect(codeOf(() => createPostgresAdapter({ connectionString: 'postgres://x', schema: 'Catalog' }))).toBe('returned');
    void pool.end();
  });
});

await withPostgresServer('test/adapters/postgres/adapter.test.ts', 'postgres adapter', () => {
  const schemas = new SchemaPool();
  const adapters: StorageAdapter[] = [];
  const pools: pg.Pool[] = [];
  afterEach(async () => {
    for (const a of adapters.splice(0)) await a.close();
    for (const p of pools.splice(0)) await p.end();
    await schemas.dropAll();
  });
  afterAll(async () => {
    await schemas.end();
  });

  describe('postgres adapter', () => {
    it("uses a host's pool without ending it, and the connection's current schema by default", async () => {
      const schema = schemas.freshSchema();
      await schemas.query(`CREATE SCHEMA "${schema}"`);
      const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 3, options: `-c search_path=${schema}` });
      pools.push(pool);
      const adapter = createPostgresAdapter({ pool });
      await adapter.open();
      await adapter.commit(create(URN_A));
      await adapter.close();
      // The tables went into the current schema, and the pool still works after close().
      const rows = await pool.query<{ urn: string }>('SELECT urn FROM entities');
      expect(rows.rows).toEqual([{ urn: URN_A }]);
      expect(await schemas.countRows(schemas.adapter({ schema }), 'entities')).toBe(1);
    });

    it('opens a migrated schema as a role that may use its tables but not create anything', async () => {
      const schema = schemas.freshSchema();
      const owner = schemas.adapter({ schema });
      await owner.open();
      await owner.close();
      const role = `${schema}_user`;
      await schemas.query(`CREATE ROLE "${role}" NOLOGIN`);
      try {
        await schemas.query(`GRANT USAGE ON SCHEMA "${schema}" TO "${role}"`);
        await schemas.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "${schema}" TO "${role}"`);
        await schemas.query(`GRANT USAGE ON ALL SEQUENCES IN SCHEMA "${schema}" TO "${role}"`);
        // The session runs as that role (SET ROLE at connection start).
        const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 2, options: `-c role=${role}` });
        pools.push(pool);
        const adapter = createPostgresAdapter({ pool }, { schema });
        await adapter.open();
        await adapter.commit(create(URN_A));
        expect((await adapter.readEntities([URN_A])).map((e) => e.version)).toEqual([1]);
        await adapter.close();
        await pool.end();
        pools.splice(pools.indexOf(pool), 1);
      } finally {
        await schemas.query(`DROP OWNED BY "${role}"`);
        await schemas.query(`DROP ROLE "${role}"`);
      }
    });

    it('keeps catalogs in different schemas of one database apart', async () => {
      const [one, two] = [schemas.freshSchema(), schemas.freshSchema()];
      const a = schemas.adapter({ schema: one });
      const b = schemas.adapter({ schema: two });
      adapters.push(a, b);
      await Promise.all([a.open(), b.open()]);
      await a.commit(create(URN_A));
      expect((await a.readEntities([URN_A])).length).toBe(1);
      expect(await b.readEntities([URN_A])).toEqual([]);
      await b.commit(create(URN_A));
      expect((await b.scanEntities({ limit: 10 })).map((e) => e.version)).toEqual([1]);
    });

    it('two processes creating the same new entity: one CONFLICT, one entity', async () => {
      const schema = schemas.freshSchema();
      const a = schemas.adapter({ schema });
      const b = schemas.adapter({ schema });
      adapters.push(a, b);
      await a.open();
      await b.open();
      for (let i = 0; i < 10; i++) {
        const urn = `urn:li:dataset:(urn:li:dataPlatform:hive,race${i},PROD)`;
        const outcomes = await Promise.all([asyncCodeOf(a.commit(create(urn))), asyncCodeOf(b.commit(create(urn)))]);
        expect(outcomes.sort()).toEqual(['CONFLICT', 'resolved']);
      }
      expect(await schemas.countRows(a, 'entities')).toBe(10);
      expect(await schemas.countRows(a, 'aspects')).toBe(10);
    });

    it('refuses a timeseries index name Postgres cannot hold with INVALID_INPUT', async () => {
      const adapter = schemas.adapter({ schema: schemas.freshSchema() });
      adapters.push(adapter);
      await adapter.open();
      const index = { indexName: 'x'.repeat(64), entityType: 'dataset', aspect: 'datasetProfile' };
      expect(await asyncCodeOf(adapter.appendTimeseries(index, [{ urn: URN_A, timestampMillis: T0, value: {} }]))).toBe('INVALID_INPUT');
      // 63 characters fit, and so do the names of its indexes and sequence.
      const longest = { ...index, indexName: 'y'.repeat(63) };
      await adapter.appendTimeseries(longest, [{ urn: URN_A, timestampMillis: T0, value: { n: 1 } }]);
      expect(await adapter.rebuildTimeseriesIndex(longest, T0 - 1)).toBe(0);
      await adapter.appendTimeseries(longest, [{ urn: URN_A, timestampMillis: T0 + 1, value: { n: 2 } }]);
      expect((await adapter.queryTimeseries({ ...longest, limit: 10 })).rows.map((r) => r.value)).toEqual([{ n: 2 }, { n: 1 }]);
    });

    it('answers filters and facets on a property no value was ever written under (nothing, no error)', async () => {
      const adapter = schemas.adapter({ schema: schemas.freshSchema() });
      adapters.push(adapter);
      await adapter.open();
      await adapter.commit(create(URN_A));
      const never = {
        kind: 'property' as const,
        propertyUrn: 'urn:li:structuredProperty:never',
        definitionKey: 'k',
        valueKind: 'string' as const,
      };
      const scope = { entityTypes: ['dataset'], includeRemoved: false, filter: [] };
      expect(await adapter.aggregate({ ...scope, facets: [never], maxValues: 5 })).toEqual([{ field: never, buckets: [] }]);
      const condition = { field: never, operator: 'EQUAL' as const, values: ['a'], negated: false };
      expect(await adapter.search({ ...scope, filter: [[condition]], order: 'urn', limit: 5 })).toEqual({ total: 0, hits: [] });
      expect(await adapter.search({ ...scope, filter: [[condition], [{ ...condition, negated: true }]], order: 'urn', limit: 5 })).toEqual({
        total: 0,
        hits: [],
      });
    });

    it('stores aspect values exactly, including characters JSON escapes', async () => {
      const adapter = schemas.adapter({ schema: schemas.freshSchema() });
      adapters.push(adapter);
      await adapter.open();
      const value = {
        text: "nul \u0000, quote ', backslash \\, emoji 😀, lone \ud800",
        big: 2 ** 53 - 1,
        small: 1e-300,
        nested: { list: [null, true, -0.5] },
      };
      await adapter.commit({ entities: [{ ...create(URN_A).entities[0]!, put: [{ ...create(URN_A).entities[0]!.put[0]!, value }] }] });
      const [entity] = await adapter.readEntities([URN_A]);
      expect(entity?.aspects.info?.value).toEqual(JSON.parse(JSON.stringify(value)));
    });
  });
});
