import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPostgresAdapter } from '../adapters/postgres';
import { createCatalog, type Catalog, type FacetFilterInput } from '../src';
import { generateDatasets, type GeneratedDataset } from './generator';
import { interleaved, percentile, printTable, type Figure } from './harness';
import { acquireServer } from './postgres-server';
import { ADMIN, assignments, CASES, NAMES, VALUE_TYPES, type FilterCase, type PropertyName } from './search-cases';

/**
 * `npm run bench -- volume-postgres [--entities N]` (default 100,000): load volume and size on PostgreSQL.
 *
 * Baseline, on the same server in the same process: a plain hand-written design (one row per entity
 * with its name, description and `tsvector`, a typed property-value table with three covering
 * indexes, a GIN index for full text) loaded in batches of 1,000 with `INSERT ... SELECT FROM unnest`,
 * against the catalog's bulk load of the same datasets through `catalog.entities.upsertMany` (1,000 per
 * call, each item with its `datasetProperties` and `structuredProperties`). The two loads alternate
 * batch by batch, so that other work on a shared machine slows both alike. Printed: load throughput,
 * bytes per entity (`pg_total_relation_size` of every table of each schema, after VACUUM ANALYZE,
 * table by table for the catalog), p50/p99 of a few searches on both, and the peak RSS of this process.
 *
 * Datasets are generated as they are written (never all held), so it runs at 1,000,000 entities.
 * METACATALOG_BENCH_CHANGES=off loads the catalog with the change feed off (`changes.enabled: false`).
 * METACATALOG_BENCH_EXPLAIN=on prints `EXPLAIN (ANALYZE, BUFFERS)` of each search, the catalog's
 * statement (as the adapter sent it) and the plain design's, after the timings.
 */

const BATCH = 1_000;
const ITERATIONS = 30;
const WARM_UP = 3;
const KEY_IDS: Record<PropertyName, number> = { tier: 1, owner: 2, score: 3, reviewed: 4, costCenter: 5 };

function* batches(count: number): Generator<GeneratedDataset[]> {
  let batch: GeneratedDataset[] = [];
  for (const d of generateDatasets({ count, seed: 42 })) {
    batch.push(d);
    if (batch.length === BATCH) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

const PLAIN_DDL = (s: string) => `
  CREATE SCHEMA ${s};
  CREATE TABLE ${s}.entities (
    id bigint PRIMARY KEY,
    urn text COLLATE "C" NOT NULL UNIQUE,
    entity_type text COLLATE "C" NOT NULL,
    name text NOT NULL,
    description text NOT NULL,
    tsv tsvector NOT NULL
  );
  CREATE INDEX entities_text ON ${s}.entities USING gin (tsv);
  CREATE TABLE ${s}.property_values (
    entity_id bigint NOT NULL,
    key_id integer NOT NULL,
    str_value text COLLATE "C",
    num_value double precision
  );
  CREATE INDEX property_values_str ON ${s}.property_values (key_id, str_value, entity_id);
  CREATE INDEX property_values_num ON ${s}.property_values (key_id, num_value, entity_id);
  CREATE INDEX property_values_by_entity ON ${s}.property_values (entity_id);`;

/** The plain design's load of one batch: one transaction, one INSERT ... SELECT FROM unnest per table. */
async function loadPlainBatch(client: pg.PoolClient, s: string, batch: readonly GeneratedDataset[], firstId: number): Promise<void> {
  const ids = batch.map((_, i) => firstId + i);
  const values: Array<{ entity: number; key: number; str: string | null; num: number | null }> = [];
  batch.forEach((d, i) => {
    const entity = ids[i]!;
    values.push({ entity, key: KEY_IDS.tier, str: d.tier, num: null });
    values.push({ entity, key: KEY_IDS.owner, str: d.owner, num: null });
    values.push({ entity, key: KEY_IDS.score, str: null, num: d.score });
    values.push({ entity, key: KEY_IDS.reviewed, str: d.reviewed, num: null });
    if (d.costCenter) values.push({ entity, key: KEY_IDS.costCenter, str: d.costCenter, num: null });
  });
  await client.query('BEGIN');
  await client.query({
    name: 'plain_entities',
    text: `INSERT INTO ${s}.entities (id, urn, entity_type, name, description, tsv)
           SELECT id, urn, 'dataset', name, description, to_tsvector('simple', name || ' ' || description)
           FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[]) AS x(id, urn, name, description)`,
    values: [ids, batch.map((d) => d.urn), batch.map((d) => d.name), batch.map((d) => d.description)],
  });
  await client.query({
    name: 'plain_values',
    text: `INSERT INTO ${s}.property_values (entity_id, key_id, str_value, num_value)
           SELECT * FROM unnest($1::bigint[], $2::int[], $3::text[], $4::float8[])`,
    values: [values.map((v) => v.entity), values.map((v) => v.key), values.map((v) => v.str), values.map((v) => v.num)],
  });
  await client.query('COMMIT');
}

/** The catalog's bulk load of one batch: `upsertMany` of whole datasets. */
async function loadCatalogBatch(catalog: Catalog, batch: readonly GeneratedDataset[]): Promise<void> {
  await catalog.entities.upsertMany(
    ADMIN,
    batch.map((d) => ({
      urn: d.urn,
      aspects: { datasetProperties: { name: d.name, description: d.description }, structuredProperties: { properties: assignments(d) } },
    })),
  );
}

/**
 * Both loads, batch by batch, alternating (the plain design's batch, then the catalog's same batch), so
 * that a machine shared with other work slows both alike. Returns the time each spent, in ms.
 */
async function loadBoth(
  client: pg.PoolClient,
  plainSchema: string,
  catalog: Catalog,
  count: number,
): Promise<{ plainMs: number; catalogMs: number }> {
  for (const name of NAMES) {
    await catalog.properties.create(ADMIN, {
      qualifiedName: `bench.${name}`,
      displayName: name,
      valueType: VALUE_TYPES[name],
      entityTypes: ['dataset'],
    });
  }
  let plainMs = 0;
  let catalogMs = 0;
  let loaded = 0;
  for (const batch of batches(count)) {
    let start = performance.now();
    await loadPlainBatch(client, plainSchema, batch, loaded + 1);
    plainMs += performance.now() - start;
    start = performance.now();
    await loadCatalogBatch(catalog, batch);
    catalogMs += performance.now() - start;
    loaded += batch.length;
    if (loaded % 100_000 === 0)
      console.log(
        `  ${loaded.toLocaleString('en-US')} loaded (plain ${(plainMs / 1000).toFixed(1)} s, catalog ${(catalogMs / 1000).toFixed(1)} s)`,
      );
  }
  return { plainMs, catalogMs };
}

interface TableSize {
  table: string;
  bytes: number;
}

async function schemaSizes(client: pg.PoolClient, schema: string): Promise<TableSize[]> {
  const tables = await client.query<{ table: string }>(
    `SELECT tablename AS table FROM pg_tables WHERE schemaname = $1 ORDER BY tablename`,
    [schema],
  );
  for (const { table } of tables.rows) await client.query(`VACUUM ANALYZE "${schema}"."${table}"`);
  const rows = await client.query<{ table: string; bytes: string }>(
    `SELECT c.relname AS table, pg_total_relation_size(c.oid) AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') ORDER BY pg_total_relation_size(c.oid) DESC`,
    [schema],
  );
  return rows.rows.map((r) => ({ table: r.table, bytes: Number(r.bytes) }));
}

/** A two-word query of frequent description words, as the search bench picks them. */
function pickWord(count: number): string {
  const counts = new Map<string, number>();
  for (const d of generateDatasets({ count: Math.min(count, 20_000), seed: 42 }))
    for (const w of new Set(d.description.split(' '))) counts.set(w, (counts.get(w) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1]).map(([w]) => w)[20]!;
}

interface SearchCase {
  label: string;
  catalog: () => Promise<{ total: number; urns: string[] }>;
  plain: () => Promise<{ total: number; urns: string[] }>;
  /** The plain design's statement. */
  plainSql: { text: string; values: unknown[] };
  /** Whether the two must return the same total and page (full text is analysed differently by each). */
  compare: boolean;
}

const propertyOf = (field: string): PropertyName => field.slice('structuredProperties.bench.'.length) as PropertyName;

/** The plain design's SQL for a case of the search bench: count + first 20 by URN. */
function plainCase(client: pg.PoolClient, s: string, c: FilterCase): Pick<SearchCase, 'plain' | 'plainSql'> {
  const values: unknown[] = [];
  const param = (v: unknown, cast: string) => {
    values.push(v);
    return `$${values.length}::${cast}`;
  };
  const tests = c.filters.map((f: FacetFilterInput) => {
    const name = propertyOf(f.field);
    const column = VALUE_TYPES[name] === 'number' ? 'num_value' : 'str_value';
    const value = f.values?.[0];
    const typed = (op: string) =>
      `${column} ${op} ${VALUE_TYPES[name] === 'number' ? param(Number(value), 'float8') : param(value, 'text')}`;
    const op = f.condition ?? 'EQUAL';
    const test =
      op === 'EXISTS' ? 'TRUE' : typed(op === 'EQUAL' ? '=' : op === 'GREATER_THAN' ? '>' : op === 'GREATER_THAN_OR_EQUAL_TO' ? '>=' : '<');
    return `SELECT entity_id FROM ${s}.property_values WHERE key_id = ${KEY_IDS[name]} AND ${test}`;
  });
  const ids = tests.map((t) => `e.id IN (${t})`).join(' AND ');
  const [first, ...others] = tests;
  const count = `SELECT count(*) FROM (${first}) c0${others.length ? ` WHERE ${others.map((t) => `c0.entity_id IN (${t})`).join(' AND ')}` : ''}`;
  const text = `SELECT (${count}) AS total, (SELECT array_agg(urn ORDER BY urn) FROM (SELECT e.urn FROM ${s}.entities e WHERE ${ids} ORDER BY e.urn LIMIT 20) p) AS urns`;
  return {
    plain: async () => {
      const { rows } = await client.query<{ total: string; urns: string[] | null }>(text, values);
      return { total: Number(rows[0]!.total), urns: rows[0]!.urns ?? [] };
    },
    plainSql: { text, values },
  };
}

function searchCases(catalog: Catalog, client: pg.PoolClient, s: string, word: string): SearchCase[] {
  const scroll =
    (filters: FacetFilterInput[], query = '*') =>
    async () => {
      const r = await catalog.search.scroll(ADMIN, {
        types: ['DATASET'],
        query,
        count: 20,
        ...(filters.length ? { orFilters: [{ and: filters }] } : {}),
      });
      return { total: r.total, urns: r.searchResults.map((x) => x.entity.urn) };
    };
  const gold: FilterCase = {
    label: 'EQUAL tier=gold (13%)',
    kind: 'filter',
    filters: [{ field: 'structuredProperties.bench.tier', values: ['gold'] }],
  };
  const picked = [gold, ...CASES.filter((c) => /owner=team-0042 \(|score>90|tier=gold, score/.test(c.label))];
  return [
    ...picked.map((c) => ({ label: c.label, catalog: scroll(c.filters), ...plainCase(client, s, c), compare: true })),
    textCase(client, s, word, scroll([], word)),
  ];
}

function textCase(client: pg.PoolClient, s: string, word: string, catalog: SearchCase['catalog']): SearchCase {
  const text = `SELECT (SELECT count(*) FROM ${s}.entities WHERE tsv @@ $1::tsquery) AS total,
     (SELECT array_agg(urn) FROM (SELECT urn FROM ${s}.entities WHERE tsv @@ $1::tsquery ORDER BY ts_rank(tsv, $1::tsquery) DESC, urn LIMIT 20) p) AS urns`;
  const values = [`'${word}'`];
  return {
    label: `full text "${word}"`,
    catalog,
    plain: async () => {
      const { rows } = await client.query<{ total: string; urns: string[] | null }>(text, values);
      return { total: Number(rows[0]!.total), urns: rows[0]!.urns ?? [] };
    },
    plainSql: { text, values },
    compare: false,
  };
}

/**
 * The adapter's pool, with the last search statement it was handed recorded, to explain it. (The
 * adapter sends its searches through `pool.query`, unnamed.)
 */
function recordingPool(url: string): { pool: pg.Pool; last: () => { text: string; values: unknown[] } | undefined } {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  let last: { text: string; values: unknown[] } | undefined;
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    // Searches go through the unnamed statement (planned with their values); everything else is named.
    const config = args[0] as { name?: string; text?: string; values?: unknown[] } | string;
    if (typeof config === 'object' && config.text && !config.name) last = { text: config.text, values: config.values ?? [] };
    return query(...args);
  };
  return { pool, last: () => last };
}

async function explain(client: pg.PoolClient, statement: { text: string; values: unknown[] }): Promise<string> {
  const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${statement.text}`, statement.values);
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

const mb = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MB`;

export async function runVolumePostgresBench(options: { entities?: number } = {}): Promise<Figure[]> {
  const count = options.entities ?? 100_000;
  const changes = process.env.METACATALOG_BENCH_CHANGES !== 'off';
  const server = acquireServer();
  const tag = randomBytes(4).toString('hex');
  const plainSchema = `volume_plain_${tag}`;
  const catalogSchema = `volume_catalog_${tag}`;
  const admin = new pg.Pool({ connectionString: server.url, max: 2 });
  const figures: Figure[] = [];
  const latencies: Figure[] = [];
  const plans: string[] = [];
  const explainPlans = process.env.METACATALOG_BENCH_EXPLAIN === 'on';
  const recording = recordingPool(server.url);
  try {
    const client = await admin.connect();
    try {
      await client.query(PLAIN_DDL(`"${plainSchema}"`));
      const adapter = createPostgresAdapter({ pool: recording.pool }, { schema: catalogSchema });
      const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false }, changes: { enabled: changes } });
      await catalog.ready();
      try {
        const { plainMs, catalogMs } = await loadBoth(client, `"${plainSchema}"`, catalog, count);
        console.log(
          `loaded ${count.toLocaleString('en-US')} datasets: plain design ${(plainMs / 1000).toFixed(1)} s, catalog ${(catalogMs / 1000).toFixed(1)} s (change feed ${changes ? 'on' : 'off'})`,
        );
        const plainSizes = await schemaSizes(client, plainSchema);
        const sizes = await schemaSizes(client, catalogSchema);
        const plainBytes = plainSizes.reduce((n, t) => n + t.bytes, 0) / count;
        const catalogBytes = sizes.reduce((n, t) => n + t.bytes, 0) / count;
        const feedBytes =
          sizes.filter((t) => t.table === 'change_events' || t.table === 'aspect_versions').reduce((n, t) => n + t.bytes, 0) / count;
        const load = (ms: number) => (count / ms) * 1000;
        figures.push(
          {
            workload: `bulk load, upsertMany ×${BATCH} (change feed ${changes ? 'on' : 'off'})`,
            unit: 'datasets/s',
            value: load(catalogMs),
            baseline: load(plainMs),
            baselineName: 'plain, unnest batches',
            better: 'higher',
            goal: '≥ 0.5× plain',
            met: load(catalogMs) >= 0.5 * load(plainMs),
          },
          {
            workload: 'bytes per entity, every table',
            unit: 'B',
            value: catalogBytes,
            baseline: plainBytes,
            baselineName: 'plain',
            better: 'lower',
            goal: '≤ 2× plain',
            met: catalogBytes <= 2 * plainBytes,
          },
          {
            workload: 'bytes per entity, without change_events and aspect_versions',
            unit: 'B',
            value: catalogBytes - feedBytes,
            baseline: plainBytes,
            baselineName: 'plain',
            better: 'lower',
          },
        );
        for (const c of searchCases(catalog, client, `"${plainSchema}"`, pickWord(count))) {
          if (c.compare) {
            const [a, b] = [JSON.stringify(await c.catalog()), JSON.stringify(await c.plain())];
            if (a !== b)
              throw new Error(
                `${c.label}: the catalog and the plain design disagree:\n  catalog ${a.slice(0, 300)}\n  plain   ${b.slice(0, 300)}`,
              );
          }
          const runs = await interleaved(ITERATIONS, c.catalog, c.plain, WARM_UP);
          if (explainPlans) {
            // The last statement of the adapter's pool is this case's search (the definitions are cached by now).
            await c.catalog();
            const sent = recording.last();
            plans.push(`\n### ${c.label}: the catalog\n${sent ? await explain(client, sent) : '(no statement recorded)'}`);
            plans.push(`\n### ${c.label}: the plain design\n${await explain(client, c.plainSql)}`);
          }
          for (const p of [50, 99]) {
            latencies.push({
              workload: `${c.label}: count + first 20, p${p}`,
              unit: 'ms',
              value: percentile(runs.library, p),
              baseline: percentile(runs.baseline, p),
              baselineName: 'plain',
              better: 'lower',
            });
          }
        }
        console.log(`\nsizes (after VACUUM ANALYZE), bytes per entity:`);
        for (const t of plainSizes)
          console.log(`  plain    ${t.table.padEnd(28)} ${mb(t.bytes).padStart(10)}  ${(t.bytes / count).toFixed(0).padStart(6)} B`);
        for (const t of sizes)
          console.log(`  catalog  ${t.table.padEnd(28)} ${mb(t.bytes).padStart(10)}  ${(t.bytes / count).toFixed(0).padStart(6)} B`);
      } finally {
        await catalog.close();
      }
    } finally {
      client.release();
    }
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${plainSchema}" CASCADE`).catch(() => undefined);
    await admin.query(`DROP SCHEMA IF EXISTS "${catalogSchema}" CASCADE`).catch(() => undefined);
    await admin.end();
    await recording.pool.end();
    server.release();
  }
  printTable(
    `PostgreSQL volume: ${count.toLocaleString('en-US')} datasets × 5 properties, the catalog against a plain design on the same server`,
    figures,
  );
  printTable('Searches through catalog.search.scroll against the plain design (interleaved)', latencies);
  if (plans.length > 0) console.log(`\n## EXPLAIN (ANALYZE, BUFFERS) of each search${plans.join('\n')}`);
  console.log(`\npeak RSS of this process: ${mb(process.resourceUsage().maxRSS * 1024)}`);
  return [...figures, ...latencies];
}
