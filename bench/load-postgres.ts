/**
 * The PostgreSQL part of `npm run bench -- load`: the restore of the same export (JSON lines, 1,000
 * records a call) into an empty schema with the initial load (`importRecords(records, { initial: true })`,
 * COPY underneath), against a plain load of the same datasets with `COPY` in the same run and on the
 * same server: an entity row with the dataset's JSON document and a generated `tsvector` column, typed
 * property-value rows, then (as a person loading by hand would, and as `pg_restore` does) the three
 * value indexes and a GIN index over the text built after the rows, `ANALYZE`, all in one transaction.
 * Wall clock only: most of the work is the server's, which the process's CPU time does not see.
 *
 * The server: METACATALOG_BENCH_POSTGRES_URL, else METACATALOG_TEST_POSTGRES_URL, else a throw-away
 * cluster of its own (bench/postgres-server.ts).
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { createPostgresAdapter } from '../adapters/postgres';
import { createCatalog } from '../src';
import { time, type Figure } from './harness';
import { acquireServer } from './postgres-server';
import { ADMIN } from './search-cases';
import { datasetBatches } from './volume-data';

const KEY_IDS = { tier: 1, owner: 2, score: 3, reviewed: 4, costCenter: 5 } as const;

const copyField = (value: string | number | null): string =>
  value === null ? '\\N' : String(value).replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c]!);

/** The plain design loaded with COPY, indexes after, in one transaction. */
async function plainCopyLoad(pool: pg.Pool, schema: string, count: number): Promise<void> {
  const s = `"${schema}"`;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`
      CREATE SCHEMA ${s};
      CREATE TABLE ${s}.entities (
        id bigint PRIMARY KEY,
        urn text COLLATE "C" NOT NULL UNIQUE,
        entity_type text COLLATE "C" NOT NULL,
        document text NOT NULL,
        tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', (document::json ->> 'name') || ' ' || (document::json ->> 'description'))) STORED
      );
      CREATE TABLE ${s}.property_values (entity_id bigint NOT NULL, key_id integer NOT NULL, str_value text COLLATE "C", num_value double precision);`);
    let id = 0;
    for (const batch of datasetBatches(count, 10_000)) {
      const entities: string[] = [];
      const values: string[] = [];
      for (const d of batch) {
        id++;
        const document = JSON.stringify({ name: d.name, description: d.description, tier: d.tier, owner: d.owner, score: d.score });
        entities.push([id, d.urn, 'dataset', document].map(copyField).join('\t'));
        values.push(`${id}\t${KEY_IDS.tier}\t${copyField(d.tier)}\t\\N`, `${id}\t${KEY_IDS.owner}\t${copyField(d.owner)}\t\\N`);
        values.push(`${id}\t${KEY_IDS.score}\t\\N\t${d.score}`, `${id}\t${KEY_IDS.reviewed}\t${copyField(d.reviewed)}\t\\N`);
        if (d.costCenter) values.push(`${id}\t${KEY_IDS.costCenter}\t${copyField(d.costCenter)}\t\\N`);
      }
      await pipeline(
        Readable.from([`${entities.join('\n')}\n`]),
        client.query(copyFrom(`COPY ${s}.entities (id, urn, entity_type, document) FROM STDIN`)),
      );
      await pipeline(Readable.from([`${values.join('\n')}\n`]), client.query(copyFrom(`COPY ${s}.property_values FROM STDIN`)));
    }
    await client.query(`
      SET LOCAL maintenance_work_mem = '256MB';
      CREATE INDEX entities_text ON ${s}.entities USING gin (tsv);
      CREATE INDEX property_values_str ON ${s}.property_values (key_id, str_value, entity_id) WHERE str_value IS NOT NULL;
      CREATE INDEX property_values_num ON ${s}.property_values (key_id, num_value, entity_id) WHERE num_value IS NOT NULL;
      CREATE INDEX property_values_by_entity ON ${s}.property_values (entity_id);
      ANALYZE ${s}.entities, ${s}.property_values;
      COMMIT;`);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** Figures of the restore into an empty PostgreSQL schema, against the plain COPY load. */
export async function postgresLoadFigures(lines: readonly string[], count: number, callSize: number): Promise<Figure[]> {
  const n = count.toLocaleString('en-US');
  const server = acquireServer();
  const admin = new pg.Pool({ connectionString: server.url, max: 2 });
  const schemas = [`mc_load_plain_${randomBytes(4).toString('hex')}`, `mc_load_initial_${randomBytes(4).toString('hex')}`];
  try {
    const plain = await time(() => plainCopyLoad(admin, schemas[0]!, count));
    const adapter = createPostgresAdapter({ connectionString: server.url }, { schema: schemas[1]! });
    const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false } });
    await catalog.ready();
    const initial = await time(async () => {
      for (let i = 0; i < lines.length; i += callSize) {
        const records = lines.slice(i, i + callSize).map((l) => JSON.parse(l) as unknown);
        await catalog.importRecords(records, { initial: true });
      }
      await catalog.search.search(ADMIN, { types: ['DATASET'], query: 'data', count: 1 });
    });
    await catalog.close();
    const rate = (ms: number) => count / (ms / 1000);
    return [
      {
        workload: `restore an export of ${n} datasets into an empty PostgreSQL schema, initial load (COPY)`,
        unit: 'entities/s',
        value: rate(initial.ms),
        baseline: rate(plain.ms),
        baselineName: 'plain COPY',
        better: 'higher',
        goal: '≥ 0.5× plain COPY',
        met: rate(initial.ms) >= 0.5 * rate(plain.ms),
      },
    ];
  } finally {
    for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await admin.end();
    server.release();
  }
}
