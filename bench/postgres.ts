import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createPostgresAdapter } from '../adapters/postgres';
import { createSqliteAdapter } from '../adapters/sqlite';
import { createCatalog, type Catalog } from '../src';
import type { AggregateRequest, SearchCondition, SearchField, SearchRequest, StorageAdapter } from '../src/adapter/types';
import { analyzeText } from '../src/adapter/text-analysis';
import { acquireServer } from './postgres-server';
import { generateDatasets, type GeneratedDataset } from './generator';
import { againstHandSql, interleaved, median, percentile, printTable, type Figure } from './harness';
import { CASES, FACETS, field, load, propertyUrn, scrollInput, sqliteFigures, type PropertyName as SearchBenchProperty } from './search';

/**
 * `npm run bench -- --adapter postgres`: the search and aggregation workloads at 100k entities on the
 * PostgreSQL adapter, each against hand-written SQL on the same schema and the same server, with the
 * SQLite adapter's figure for the same request printed beside it.
 *
 * The server: METACATALOG_BENCH_POSTGRES_URL, else METACATALOG_TEST_POSTGRES_URL, else a throw-away
 * cluster started with test/support/pg-test-server.sh (and stopped at the end).
 */

const ADMIN = 'urn:li:corpuser:admin';
const ITERATIONS = 30;
const WARM_UP = 5;
/** The properties of the search bench's catalog (bench/search.ts creates them), by qualified name. */
const PROPERTIES = ['bench.tier', 'bench.owner', 'bench.score', 'bench.reviewed', 'bench.costCenter'] as const;
type BenchProperty = (typeof PROPERTIES)[number];

/** The fields of the requests, resolved by the catalog as a search through the API would. */
async function resolveFields(catalog: Catalog): Promise<Record<BenchProperty, SearchField>> {
  const out: Partial<Record<BenchProperty, SearchField>> = {};
  for (const name of PROPERTIES) {
    const resolved = await catalog.properties.resolveFilterField(ADMIN, name);
    out[name] = {
      kind: 'property',
      propertyUrn: resolved.propertyUrn,
      definitionKey: resolved.definitionKey,
      valueKind: resolved.valueKind,
    };
  }
  return out as Record<BenchProperty, SearchField>;
}

interface Words {
  common: string;
  second: string;
}

/** Two frequent description words (vocabulary rank 20 and 40: each in a few percent of datasets). */
function pickWords(datasets: readonly GeneratedDataset[]): Words {
  const counts = new Map<string, number>();
  for (const d of datasets.slice(0, 20_000)) for (const w of new Set(d.description.split(' '))) counts.set(w, (counts.get(w) ?? 0) + 1);
  const ranked = [...counts].sort((a, b) => b[1] - a[1]).map(([w]) => w);
  return { common: ranked[20]!, second: ranked[40]! };
}

type Workload =
  | { name: string; kind: 'search'; request: (f: Record<BenchProperty, SearchField>) => SearchRequest; sql: HandWritten }
  | { name: string; kind: 'aggregate'; request: (f: Record<BenchProperty, SearchField>) => AggregateRequest; sql: HandWritten };

/** Hand-written SQL for one workload: text and parameters, given the schema and the property key ids. */
/** `key`: a property's id in `property_keys`; `name`: a standard field's or entity type's id in `search_names`. */
type HandWritten = (s: string, key: (name: BenchProperty) => number, name: (name: string) => number) => { text: string; values: unknown[] };

const SCOPE = { entityTypes: ['dataset'], includeRemoved: false };
const eq = (field: SearchField, value: string | number): SearchCondition => ({ field, operator: 'EQUAL', values: [value], negated: false });

/** count(*) and the first page by URN of a WHERE clause, in one statement as the adapter does. */
const countAndPage = (s: string, from: string, where: string): string => `SELECT
  (SELECT count(*) FROM ${from} WHERE ${where}) AS total,
  (SELECT json_agg(json_build_array(x.urn, x.entity_type) ORDER BY x.urn) FROM (SELECT d.urn, d.entity_type FROM ${from} WHERE ${where} ORDER BY d.urn LIMIT 20) x) AS hits`;

const countAndRanked = (s: string, where: string): string => `SELECT
  (SELECT count(*) FROM ${s}.search_docs d JOIN ${s}.search_text t ON t.entity_id = d.entity_id WHERE ${where}) AS total,
  (SELECT json_agg(json_build_array(x.urn, x.entity_type, x.score) ORDER BY x.score DESC, x.urn) FROM (
     SELECT d.urn, d.entity_type, ts_rank(t.tsv, $1::tsquery)::float8 AS score
     FROM ${s}.search_docs d JOIN ${s}.search_text t ON t.entity_id = d.entity_id WHERE ${where}
     ORDER BY score DESC, d.urn LIMIT 20) x) AS hits`;

const facet = (s: string, scope: string, key: string, i: number) =>
  `(SELECT ${i} AS facet, v.str_value, v.num_value, count(*) AS n FROM ${s}.property_values v JOIN ${scope} ON sc.entity_id = v.entity_id
    WHERE v.key_id = ${key} GROUP BY v.str_value, v.num_value ORDER BY n DESC, v.num_value NULLS LAST, v.str_value LIMIT 10)`;
const fieldFacet = (s: string, scope: string, fieldId: number, i: number) =>
  `(SELECT ${i} AS facet, f.value, NULL::float8, count(*) AS n FROM ${s}.search_fields f JOIN ${scope} ON sc.entity_id = f.entity_id
    WHERE f.field_id = ${fieldId} GROUP BY f.value ORDER BY n DESC, f.value LIMIT 10)`;

/**
 * The workloads of the search issue's bench (bench/search.ts): count + first 20 by URN for seven
 * filters, and two facets over the whole corpus. The hand-written SQL takes the form a person would
 * pick on this schema: counts from the value rows alone (they carry the document's type and removed
 * flag; each value is stored once per document), pages walking the URNs with an EXISTS probe.
 */
function searchIssueWorkloads(): Workload[] {
  const gt = (field: SearchField, value: string | number) => ({
    field,
    operator: 'GREATER_THAN' as const,
    values: [value],
    negated: false,
  });
  const gte = (field: SearchField, value: string | number) => ({
    field,
    operator: 'GREATER_THAN_OR_EQUAL_TO' as const,
    values: [value],
    negated: false,
  });
  const exists = (field: SearchField) => ({ field, operator: 'EXISTS' as const, values: [], negated: false });
  const scope = `v.entity_type = 'dataset' AND NOT v.removed`;
  const probe = (s: string, key: string, test: string) =>
    `EXISTS (SELECT 1 FROM ${s}.property_values w WHERE w.entity_id = d.entity_id AND w.key_id = ${key}${test ? ` AND ${test}` : ''})`;
  const countThenPage = (s: string, count: string, probes: string[]) => `SELECT (${count}) AS total,
    (SELECT json_agg(json_build_array(x.urn, x.entity_type) ORDER BY x.urn) FROM (
       SELECT d.urn, d.entity_type FROM ${s}.search_docs d WHERE d.entity_type = 'dataset' AND NOT d.removed AND ${probes.join(' AND ')}
       ORDER BY d.urn LIMIT 20) x) AS hits`;
  const single = (
    name: string,
    property: BenchProperty,
    test: string,
    condition: (f: Record<BenchProperty, SearchField>) => SearchCondition,
  ): Workload => ({
    name,
    kind: 'search',
    request: (f) => ({ ...SCOPE, filter: [[condition(f)]], order: 'urn', limit: 20 }),
    sql: (s, key) => ({
      text: countThenPage(
        s,
        `SELECT count(*) FROM ${s}.property_values v WHERE v.key_id = $1${test ? ` AND ${test.replaceAll('w.', 'v.')}` : ''} AND ${scope}`,
        [probe(s, '$1', test)],
      ),
      values: [key(property)],
    }),
  });
  const facetOver = (property: BenchProperty): Workload => ({
    name: `facet ${property.slice('bench.'.length)} over the whole corpus (20 values)`,
    kind: 'aggregate',
    request: (f) => ({ ...SCOPE, filter: [], facets: [f[property]], maxValues: 20 }),
    sql: (s, key) => ({
      text: `SELECT v.str_value, v.num_value, count(*) AS n FROM ${s}.property_values v WHERE v.key_id = $1 AND ${scope}
        GROUP BY v.str_value, v.num_value ORDER BY n DESC, v.num_value NULLS LAST, v.str_value LIMIT 20`,
      values: [key(property)],
    }),
  });
  return [
    single('EQUAL tier=bronze (50%)', 'bench.tier', `w.str_value = 'bronze'`, (f) => eq(f['bench.tier'], 'bronze')),
    single('EQUAL owner=team-0042 (0.1%)', 'bench.owner', `w.str_value = 'team-0042'`, (f) => eq(f['bench.owner'], 'team-0042')),
    single('GREATER_THAN score>90 (10%)', 'bench.score', 'w.num_value > 90', (f) => gt(f['bench.score'], 90)),
    single('EXISTS costCenter (30%)', 'bench.costCenter', '', (f) => exists(f['bench.costCenter'])),
    {
      name: 'AND tier=gold, score>50',
      kind: 'search',
      request: (f) => ({ ...SCOPE, filter: [[eq(f['bench.tier'], 'gold'), gt(f['bench.score'], 50)]], order: 'urn', limit: 20 }),
      sql: (s, key) => ({
        text: countThenPage(
          s,
          `SELECT count(*) FROM ${s}.property_values v WHERE v.key_id = $1 AND v.str_value = 'gold' AND ${scope}
             AND EXISTS (SELECT 1 FROM ${s}.property_values w WHERE w.entity_id = v.entity_id AND w.key_id = $2 AND w.num_value > 50)`,
          [probe(s, '$1', `w.str_value = 'gold'`), probe(s, '$2', 'w.num_value > 50')],
        ),
        values: [key('bench.tier'), key('bench.score')],
      }),
    },
    {
      name: 'AND tier=bronze, costCenter EXISTS, reviewed>=2025-07-01',
      kind: 'search',
      request: (f) => ({
        ...SCOPE,
        filter: [[eq(f['bench.tier'], 'bronze'), exists(f['bench.costCenter']), gte(f['bench.reviewed'], '2025-07-01')]],
        order: 'urn',
        limit: 20,
      }),
      sql: (s, key) => ({
        text: countThenPage(
          s,
          `SELECT count(*) FROM ${s}.property_values v WHERE v.key_id = $1 AND v.str_value = 'bronze' AND ${scope}
             AND EXISTS (SELECT 1 FROM ${s}.property_values w WHERE w.entity_id = v.entity_id AND w.key_id = $2)
             AND EXISTS (SELECT 1 FROM ${s}.property_values w WHERE w.entity_id = v.entity_id AND w.key_id = $3 AND w.str_value >= '2025-07-01')`,
          [probe(s, '$1', `w.str_value = 'bronze'`), probe(s, '$2', ''), probe(s, '$3', `w.str_value >= '2025-07-01'`)],
        ),
        values: [key('bench.tier'), key('bench.costCenter'), key('bench.reviewed')],
      }),
    },
    {
      name: 'AND owner=team-0042, score>50',
      kind: 'search',
      request: (f) => ({ ...SCOPE, filter: [[eq(f['bench.owner'], 'team-0042'), gt(f['bench.score'], 50)]], order: 'urn', limit: 20 }),
      sql: (s, key) => ({
        text: countThenPage(
          s,
          `SELECT count(*) FROM ${s}.property_values v WHERE v.key_id = $1 AND v.str_value = 'team-0042' AND ${scope}
             AND EXISTS (SELECT 1 FROM ${s}.property_values w WHERE w.entity_id = v.entity_id AND w.key_id = $2 AND w.num_value > 50)`,
          [probe(s, '$1', `w.str_value = 'team-0042'`), probe(s, '$2', 'w.num_value > 50')],
        ),
        values: [key('bench.owner'), key('bench.score')],
      }),
    },
    facetOver('bench.tier'),
    facetOver('bench.owner'),
  ];
}

/** More workloads: full text, an OR of groups, facets of a full-text or filtered scope. */
function workloads(words: Words): Workload[] {
  // The query terms as the contract analyses them (the index holds analysed terms too).
  const tsq = (text: string) =>
    analyzeText(text)
      .map((w) => `'${w}'`)
      .join(' & ');
  return [
    {
      name: "search '*', first page by URN",
      kind: 'search',
      request: () => ({ ...SCOPE, filter: [], order: 'urn', limit: 20 }),
      sql: (s) => ({ text: countAndPage(s, `${s}.search_docs d`, `d.entity_type = 'dataset' AND NOT d.removed`), values: [] }),
    },
    {
      name: `full text "${words.common}", by relevance`,
      kind: 'search',
      request: () => ({ ...SCOPE, text: words.common, filter: [], order: 'relevance', limit: 20 }),
      sql: (s) => ({
        text: countAndRanked(s, `t.tsv @@ $1::tsquery AND d.entity_type = 'dataset' AND NOT d.removed`),
        values: [tsq(words.common)],
      }),
    },
    {
      name: `full text "${words.common} ${words.second}", by relevance`,
      kind: 'search',
      request: () => ({ ...SCOPE, text: `${words.common} ${words.second}`, filter: [], order: 'relevance', limit: 20 }),
      sql: (s) => ({
        text: countAndRanked(s, `t.tsv @@ $1::tsquery AND d.entity_type = 'dataset' AND NOT d.removed`),
        values: [tsq(`${words.common} ${words.second}`)],
      }),
    },
    {
      name: 'filter tier = gold, by URN',
      kind: 'search',
      request: (f) => ({ ...SCOPE, filter: [[eq(f['bench.tier'], 'gold')]], order: 'urn', limit: 20 }),
      sql: (s, key) => ({
        text: countAndPage(
          s,
          `${s}.search_docs d JOIN ${s}.property_values v ON v.entity_id = d.entity_id`,
          `v.key_id = $1 AND v.str_value = $2 AND d.entity_type = 'dataset' AND NOT d.removed`,
        ),
        values: [key('bench.tier'), 'gold'],
      }),
    },
    {
      name: 'filter score > 90, by URN',
      kind: 'search',
      request: (f) => ({
        ...SCOPE,
        filter: [[{ field: f['bench.score'], operator: 'GREATER_THAN', values: [90], negated: false }]],
        order: 'urn',
        limit: 20,
      }),
      sql: (s, key) => ({
        text: countAndPage(
          s,
          `${s}.search_docs d JOIN ${s}.property_values v ON v.entity_id = d.entity_id`,
          `v.key_id = $1 AND v.num_value > $2 AND d.entity_type = 'dataset' AND NOT d.removed`,
        ),
        values: [key('bench.score'), 90],
      }),
    },
    {
      name: '(tier = gold AND score < 10) OR owner = team-0001',
      kind: 'search',
      request: (f) => ({
        ...SCOPE,
        filter: [
          [eq(f['bench.tier'], 'gold'), { field: f['bench.score'], operator: 'LESS_THAN', values: [10], negated: false }],
          [eq(f['bench.owner'], 'team-0001')],
        ],
        order: 'urn',
        limit: 20,
      }),
      sql: (s, key) => ({
        text: countAndPage(
          s,
          `${s}.search_docs d`,
          `d.entity_type = 'dataset' AND NOT d.removed AND d.entity_id IN (
             SELECT a.entity_id FROM ${s}.property_values a JOIN ${s}.property_values b ON b.entity_id = a.entity_id
             WHERE a.key_id = $1 AND a.str_value = 'gold' AND b.key_id = $2 AND b.num_value < 10
             UNION SELECT c.entity_id FROM ${s}.property_values c WHERE c.key_id = $3 AND c.str_value = 'team-0001')`,
        ),
        values: [key('bench.tier'), key('bench.score'), key('bench.owner')],
      }),
    },
    {
      name: `full text "${words.common}" AND tier = gold, by relevance`,
      kind: 'search',
      request: (f) => ({ ...SCOPE, text: words.common, filter: [[eq(f['bench.tier'], 'gold')]], order: 'relevance', limit: 20 }),
      sql: (s, key) => ({
        text: countAndRanked(
          s,
          `t.tsv @@ $1::tsquery AND d.entity_type = 'dataset' AND NOT d.removed
           AND d.entity_id IN (SELECT v.entity_id FROM ${s}.property_values v WHERE v.key_id = $2 AND v.str_value = 'gold')`,
        ),
        values: [tsq(words.common), key('bench.tier')],
      }),
    },
    {
      name: "facets tier, owner, platform over '*'",
      kind: 'aggregate',
      request: (f) => ({
        ...SCOPE,
        filter: [],
        facets: [f['bench.tier'], f['bench.owner'], { kind: 'field', name: 'platform' }],
        maxValues: 10,
      }),
      // The value rows carry the document's type and removed flag: one table per facet.
      sql: (s, key, name) => ({
        text: `(SELECT 0 AS facet, v.str_value, v.num_value, count(*) AS n FROM ${s}.property_values v
             WHERE v.key_id = $1 AND v.entity_type = 'dataset' AND NOT v.removed
             GROUP BY v.str_value, v.num_value ORDER BY n DESC, v.num_value NULLS LAST, v.str_value LIMIT 10)
          UNION ALL
          (SELECT 1, v.str_value, v.num_value, count(*) AS n FROM ${s}.property_values v
             WHERE v.key_id = $2 AND v.entity_type = 'dataset' AND NOT v.removed
             GROUP BY v.str_value, v.num_value ORDER BY n DESC, v.num_value NULLS LAST, v.str_value LIMIT 10)
          UNION ALL
          (SELECT 2, f.value, NULL::float8, count(*) AS n FROM ${s}.search_fields f
             WHERE f.field_id = ${name('platform')} AND f.type_id = ${name('dataset')} AND NOT f.removed
             GROUP BY f.value ORDER BY n DESC, f.value LIMIT 10)`,
        values: [key('bench.tier'), key('bench.owner')],
      }),
    },
    {
      name: `facets tier, platform for full text "${words.common}"`,
      kind: 'aggregate',
      request: (f) => ({
        ...SCOPE,
        text: words.common,
        filter: [],
        facets: [f['bench.tier'], { kind: 'field', name: 'platform' }],
        maxValues: 10,
      }),
      sql: (s, key, name) => {
        const scope = `(SELECT entity_id FROM scope) sc`;
        return {
          text: `WITH scope AS MATERIALIZED (SELECT d.entity_id FROM ${s}.search_docs d JOIN ${s}.search_text t ON t.entity_id = d.entity_id
              WHERE t.tsv @@ $1::tsquery AND d.entity_type = 'dataset' AND NOT d.removed)
            ${facet(s, scope, '$2', 0)} UNION ALL ${fieldFacet(s, scope, name('platform'), 1)}`,
          values: [tsq(words.common), key('bench.tier')],
        };
      },
    },
    {
      name: 'facet tier where score > 50',
      kind: 'aggregate',
      request: (f) => ({
        ...SCOPE,
        filter: [[{ field: f['bench.score'], operator: 'GREATER_THAN', values: [50], negated: false }]],
        facets: [f['bench.tier']],
        maxValues: 10,
      }),
      sql: (s, key) => ({
        text: `SELECT v.str_value, v.num_value, count(*) AS n
          FROM ${s}.property_values v JOIN ${s}.property_values w ON w.entity_id = v.entity_id JOIN ${s}.search_docs d ON d.entity_id = v.entity_id
          WHERE v.key_id = $1 AND w.key_id = $2 AND w.num_value > 50 AND d.entity_type = 'dataset' AND NOT d.removed
          GROUP BY v.str_value, v.num_value ORDER BY n DESC, v.num_value NULLS LAST, v.str_value LIMIT 10`,
        values: [key('bench.tier'), key('bench.score')],
      }),
    },
  ];
}

async function runRequest(adapter: StorageAdapter, workload: Workload, fields: Record<BenchProperty, SearchField>): Promise<unknown> {
  return workload.kind === 'search' ? adapter.search(workload.request(fields)) : adapter.aggregate(workload.request(fields));
}

function sameResult(label: string, library: unknown, baseline: unknown): void {
  const a = JSON.stringify(library);
  const b = JSON.stringify(baseline);
  if (a !== b)
    throw new Error(
      `${label}: the library and the hand-written SQL disagree:\n  library  ${a.slice(0, 400)}\n  baseline ${b.slice(0, 400)}`,
    );
}

/** The SQLite figure of the same case, from the search bench's own run, for the column beside. */
function sqliteBeside(sqlite: readonly Figure[], label: string, percentileName: 'p50' | 'p99'): string {
  const figure = sqlite.find((f) => f.workload.startsWith(`SQLite ${label}`) && f.workload.endsWith(percentileName));
  return figure ? `SQLite ${figure.value.toPrecision(3)} ms` : 'SQLite n/a';
}

export async function runPostgresBench(options: { entities?: number } = {}): Promise<Figure[]> {
  const count = options.entities ?? 100_000;
  // The search issue's catalog (bench/search.ts): the same generator and seed.
  const datasets = [...generateDatasets({ count, seed: 42 })];
  const words = pickWords(datasets);
  const server = acquireServer();
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Pool({ connectionString: server.url, max: 2 });
  const dir = mkdtempSync(join(tmpdir(), 'metacatalog-bench-'));
  const figures: Figure[] = [];
  const more: Figure[] = [];
  let sqlite: Figure[] = [];
  try {
    // SQLite: the search issue's own figures (through catalog.search, against its hand SQL), printed beside.
    sqlite = await sqliteFigures(dir, datasets);

    const pgAdapter = createPostgresAdapter({ connectionString: server.url }, { schema });
    const pgCatalog = createCatalog({ adapter: pgAdapter, superUsers: [ADMIN], jobs: { background: false } });
    await pgCatalog.ready();
    const loaded = await load(pgCatalog, datasets);
    await admin.query(
      `VACUUM ANALYZE "${schema}".search_docs, "${schema}".search_text, "${schema}".search_fields, "${schema}".property_values, "${schema}".property_keys`,
    );
    const keyIds = new Map(
      (
        await admin.query<{ id: number; property: string; def_key: string }>(`SELECT id, property, def_key FROM "${schema}".property_keys`)
      ).rows.map((r) => [`${r.property} ${r.def_key}`, r.id] as const),
    );
    const nameIds = new Map(
      (await admin.query<{ id: number; name: string }>(`SELECT id, name FROM "${schema}".search_names`)).rows.map(
        (r) => [r.name, r.id] as const,
      ),
    );
    const nameId = (name: string): number => {
      const id = nameIds.get(name);
      if (id === undefined) throw new Error(`no search name id for ${name}`);
      return id;
    };
    const key = (name: BenchProperty): number => {
      const short = name.slice('bench.'.length) as SearchBenchProperty;
      const id = keyIds.get(`${propertyUrn(short)} ${loaded.keys[short]}`);
      if (id === undefined) throw new Error(`no key id for ${name}`);
      return id;
    };
    figures.push({
      workload: `PostgreSQL: write ${count.toLocaleString('en-US')} datasets + 5 properties (public API, setup)`,
      unit: 'ms',
      value: loaded.ms,
      better: 'lower',
    });

    const client = await admin.connect();
    try {
      const hand = new Map(searchIssueWorkloads().map((w) => [w.name, w] as const));
      // What the domain hands the adapter for a catalog.search call, captured once per case: the
      // adapter's SQL is measured against the hand-written SQL with exactly that request; the whole
      // catalog.search call (which also reads the property definitions, one more round trip) is shown too.
      const captured: { search?: SearchRequest; aggregate?: AggregateRequest } = {};
      const adapterSearch = pgAdapter.search.bind(pgAdapter);
      const adapterAggregate = pgAdapter.aggregate.bind(pgAdapter);
      pgAdapter.search = async (request) => {
        captured.search = request;
        return adapterSearch(request);
      };
      pgAdapter.aggregate = async (request) => {
        captured.aggregate = request;
        return adapterAggregate(request);
      };
      const ratioFigure = (label: string, libraryMs: number[], handMs: number[], catalogMs: number[], baselineName: string): Figure[] => {
        const [p50, hand50, p99, hand99] = [
          percentile(libraryMs, 50),
          percentile(handMs, 50),
          percentile(libraryMs, 99),
          percentile(handMs, 99),
        ];
        return [
          {
            workload: `PostgreSQL ${label}, p50 [through catalog.search ${median(catalogMs).toPrecision(3)} ms; ${sqliteBeside(sqlite, label, 'p50')}]`,
            unit: 'ms',
            value: p50,
            baseline: hand50,
            baselineName,
            better: 'lower',
            goal: `≤ 1.5× ${baselineName}`,
            met: p50 <= 1.5 * hand50,
          },
          {
            workload: `PostgreSQL ${label}, p99 [${sqliteBeside(sqlite, label, 'p99')}]`,
            unit: 'ms',
            value: p99,
            baseline: hand99,
            baselineName,
            better: 'lower',
          },
        ];
      };

      // The search issue's cases: count + first 20.
      for (const c of CASES) {
        const sql = hand.get(c.label)!.sql(`"${schema}"`, key, nameId);
        const input = scrollInput(c.filters);
        const viaCatalog = async () => {
          const r = await pgCatalog.search.scroll(ADMIN, input);
          return { total: r.total, urns: r.searchResults.map((x) => x.entity.urn) };
        };
        // Sent as node-postgres sends a query by default (the unnamed statement, planned with the values
        // each time), which is also how the adapter sends its search statements.
        const baseline = async () => {
          const row = (await client.query<{ total: string; hits: Array<[string, string]> | null }>({ text: sql.text, values: sql.values }))
            .rows[0];
          return { total: Number(row?.total ?? 0), urns: (row?.hits ?? []).map((h) => h[0]) };
        };
        sameResult(c.label, await viaCatalog(), await baseline());
        const request = captured.search!;
        // The domain asks for one hit more than the page, to know whether another page follows.
        const library = async () => {
          const r = await adapterSearch(request);
          return { total: r.total, urns: r.hits.slice(0, 20).map((h) => h.urn) };
        };
        sameResult(`${c.label} (adapter)`, await library(), await baseline());
        const runs = await interleaved(c.kind === 'and' ? 40 : 60, library, baseline, WARM_UP);
        const catalogRuns = await interleaved(20, viaCatalog, async () => undefined, WARM_UP);
        figures.push(...ratioFigure(`${c.label}: count + first 20`, runs.library, runs.baseline, catalogRuns.library, 'hand SQL'));
      }
      // The search issue's facets over the whole corpus.
      for (const name of FACETS) {
        const sql = hand.get(`facet ${name} over the whole corpus (20 values)`)!.sql(`"${schema}"`, key, nameId);
        const input = { types: ['DATASET' as const], query: '*', facets: [field(name)], searchFlags: { maxAggValues: 20 } };
        const viaCatalog = async () =>
          (await pgCatalog.search.aggregate(ADMIN, input)).facets[0]!.aggregations.map((a) => ({ value: a.value, count: a.count }));
        const baseline = async () =>
          (await client.query<{ str_value: string; n: string }>({ text: sql.text, values: sql.values })).rows.map((r) => ({
            value: r.str_value,
            count: Number(r.n),
          }));
        sameResult(`facet ${name}`, await viaCatalog(), await baseline());
        const request = captured.aggregate!;
        const library = async () =>
          (await adapterAggregate(request))[0]!.buckets.slice(0, 20).map((b) => ({ value: b.value, count: b.count }));
        sameResult(`facet ${name} (adapter)`, await library(), await baseline());
        const runs = await interleaved(40, library, baseline, WARM_UP);
        const catalogRuns = await interleaved(20, viaCatalog, async () => undefined, WARM_UP);
        figures.push(
          ...ratioFigure(`facet ${name} over the whole corpus`, runs.library, runs.baseline, catalogRuns.library, 'hand GROUP BY'),
        );
      }
      pgAdapter.search = adapterSearch;
      pgAdapter.aggregate = adapterAggregate;

      // More questions, asked of the adapters directly (full text, an OR of groups, facets of a text or
      // filtered scope), with the SQLite adapter's answer to the same request checked and timed beside.
      const sqliteAdapter = createSqliteAdapter({ filename: join(dir, 'search.db') });
      const sqliteCatalog = createCatalog({ adapter: sqliteAdapter, superUsers: [ADMIN], jobs: { background: false } });
      await sqliteCatalog.ready();
      const pgFields = await resolveFields(pgCatalog);
      const sqliteFields = await resolveFields(sqliteCatalog);
      for (const workload of workloads(words)) {
        const sql = workload.sql(`"${schema}"`, key, nameId);
        const statement = { text: sql.text, values: sql.values };
        const check = await runRequest(pgAdapter, workload, pgFields);
        const handRows = (await client.query(statement)).rows as Array<Record<string, unknown>>;
        sameResult(workload.name, summary(check), handSummary(handRows[0] ?? {}, workload.kind, handRows));
        sameResult(`${workload.name} (SQLite adapter)`, summary(check), summary(await runRequest(sqliteAdapter, workload, sqliteFields)));
        const runs = await interleaved(
          ITERATIONS,
          () => runRequest(pgAdapter, workload, pgFields),
          () => client.query(statement),
          WARM_UP,
        );
        const sqliteMs = median(
          (
            await interleaved(
              ITERATIONS,
              () => runRequest(sqliteAdapter, workload, sqliteFields),
              async () => undefined,
              WARM_UP,
            )
          ).library,
        );
        const [p50, hand50] = [median(runs.library), median(runs.baseline)];
        more.push(againstHandSql(`${workload.name}, p50 [SQLite adapter ${sqliteMs.toPrecision(3)} ms]`, p50, hand50));
      }
      await sqliteCatalog.close();
    } finally {
      client.release();
    }
    await pgCatalog.close();
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
    server.release();
  }
  printTable(
    `PostgreSQL: the search issue's workloads at ${count.toLocaleString('en-US')} datasets × 5 properties (the adapter with the request catalog.search sends, against hand SQL interleaved; the whole catalog.search call and SQLite's figure of the same case beside)`,
    figures,
  );
  printTable('SQLite, as the search bench measures it (same run, same catalog)', sqlite);
  printTable(
    `PostgreSQL: more workloads, adapter requests (full text, OR, scoped facets) at ${count.toLocaleString('en-US')} datasets`,
    more,
  );
  return [...figures, ...more];
}

/** The same summary of a hand-written answer: `total` and `hits` columns, or facet rows. */
function handSummary(row: Record<string, unknown>, kind: Workload['kind'], rows: Array<Record<string, unknown>>): unknown {
  if (kind === 'aggregate') {
    const facets = new Map<number, Array<{ value: unknown; count: number }>>();
    for (const r of rows) {
      const values = Object.values(r);
      const [facet, str, num, n] = values.length === 4 ? values : [0, ...values];
      const list = facets.get(Number(facet)) ?? [];
      list.push({ value: num ?? str, count: Number(n) });
      facets.set(Number(facet), list);
    }
    return [...facets.keys()].sort((a, b) => a - b).map((k) => facets.get(k));
  }
  const hits = (row.hits ?? []) as Array<[string, string, number?]>;
  const ranked = hits.some((h) => h[2] !== undefined);
  return { total: Number(row.total), hits: ranked ? hits.length : hits.map((h) => h[0]) };
}

/** What two adapters must agree on: totals and pages (sets when ranked), facet buckets. */
function summary(result: unknown): unknown {
  if (Array.isArray(result)) return result.map((f: { buckets: unknown }) => f.buckets);
  const r = result as { total: number; hits: Array<{ urn: string; score?: number }> };
  const ranked = r.hits.some((h) => h.score !== undefined);
  return { total: r.total, hits: ranked ? r.hits.length : r.hits.map((h) => h.urn) };
}
