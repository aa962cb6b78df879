/**
 * `npm run bench -- sqlite-graphql-filters [--entities N]` (default 100,000): structured-property
 * filters asked through the catalog's GraphQL schema on a SQLite file, against hand-written SQL over
 * the same file.
 *
 * The catalog side is what a GraphQL server with a document cache runs per request: the document is
 * parsed and validated once, then `execute`d with the request's variables and a fresh context (the
 * actor) each time: `searchAcrossEntities` with one `structuredProperties.<qualifiedName>` filter,
 * selecting the total and the URNs of the first 20 results. The baseline is the best SQL a person would
 * write for the same answer on the file's own tables (entities, search_keys, search_values), in the
 * plain design's form: the count of the property's value rows read from the value index (no test of
 * the entity type: only datasets carry the property), and the first page walking the URN index of the
 * datasets with a probe of each one's value (the matches are 10% or more of the corpus, so the walk
 * stops after a few hundred entities).
 * Both answers are compared before timing; the two sides run interleaved in the same process.
 *
 * METACATALOG_BENCH_SQLITE_FILE=path keeps the loaded file there and reuses it when it exists, so the
 * queries can be run again (or under `node --cpu-prof`) without loading again.
 */
import Database from 'better-sqlite3';
import { execute, parse, validate, type DocumentNode, type GraphQLSchema } from 'graphql';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteAdapter } from '../adapters/sqlite';
import { createCatalog, type Catalog, type FacetFilterInput } from '../src';
import { createGraphQLSchema } from '../src/graphql';
import { againstHandSql, interleaved, percentile, printTable, time, type Figure } from './harness';
import { ADMIN, field, propertyUrn, sameResult, type PropertyName } from './search-cases';
import { createBenchProperties, datasetBatches, datasetEntity } from './volume-data';

const CALL_SIZE = 1_000;
const ITERATIONS = 300;
/** Steady state: the JIT has compiled the GraphQL execution and the search path before timing starts. */
const WARM_UP = 50;

/** The questions: one filter each, its property, and the value test of the hand SQL. */
interface GraphQLFilterCase {
  label: string;
  property: PropertyName;
  filter: FacetFilterInput;
  /** The test of a search_values row `alias` (value column only; the key is added). */
  test: (alias: string) => string;
}

const CASES: readonly GraphQLFilterCase[] = [
  {
    label: 'EQUAL tier=gold (13%)',
    property: 'tier',
    filter: { field: field('tier'), values: ['gold'], condition: 'EQUAL' },
    test: (a) => `${a}.value = 'gold'`,
  },
  {
    label: 'GREATER_THAN score>90 (10%)',
    property: 'score',
    filter: { field: field('score'), values: ['90'], condition: 'GREATER_THAN' },
    test: (a) => `${a}.value > 90`,
  },
  {
    label: 'EXISTS costCenter (30%)',
    property: 'costCenter',
    filter: { field: field('costCenter'), condition: 'EXISTS' },
    test: () => '1',
  },
];

const DOCUMENT = `query benchFilter($input: SearchAcrossEntitiesInput!) {
  searchAcrossEntities(input: $input) {
    total
    searchResults { entity { urn } }
  }
}`;

interface Answer {
  total: number;
  urns: string[];
}

/** The hand-written count and first page of one case, prepared once on a second connection. */
function handSql(db: Database.Database, c: GraphQLFilterCase, definitionKey: string): () => Answer {
  const keyId = db
    .prepare("SELECT id FROM search_keys WHERE kind = 'property' AND name = ? AND def_key = ?")
    .pluck()
    .get(propertyUrn(c.property), definitionKey) as number;
  // The plain design's count: the property's value rows alone. Only datasets carry these properties,
  // so, like the plain design, it needs no test of the entity type (the answers are compared below).
  const count = db.prepare(`SELECT COUNT(*) FROM search_values v WHERE v.key_id = ${keyId} AND v.removed = 0 AND ${c.test('v')}`).pluck();
  const page = db
    .prepare(
      `SELECT d.urn FROM entities d WHERE d.removed = 0 AND d.entity_type = 'dataset'
         AND EXISTS (SELECT 1 FROM search_values w WHERE w.entity_id = d.entity_id AND w.key_id = ${keyId} AND ${c.test('w')})
       ORDER BY d.urn LIMIT 20`,
    )
    .pluck();
  return () => ({ total: count.get() as number, urns: page.all() as string[] });
}

/** One request as a server with a document cache runs it: the parsed document, new variables and context. */
function graphQLRequest(schema: GraphQLSchema, document: DocumentNode, filter: FacetFilterInput): () => Promise<Answer> {
  return async () => {
    const result = await execute({
      schema,
      document,
      variableValues: { input: { types: ['DATASET'], query: '*', start: 0, count: 20, orFilters: [{ and: [filter] }] } },
      contextValue: { actorUrn: ADMIN },
    });
    if (result.errors?.length) throw new Error(`GraphQL: ${result.errors.map((e) => e.message).join('; ')}`);
    const data = result.data as { searchAcrossEntities: { total: number; searchResults: Array<{ entity: { urn: string } }> } };
    return { total: data.searchAcrossEntities.total, urns: data.searchAcrossEntities.searchResults.map((r) => r.entity.urn) };
  };
}

async function loadCatalog(file: string, count: number): Promise<{ ms: number }> {
  const catalog = createCatalog({ adapter: createSqliteAdapter({ filename: file }), superUsers: [ADMIN], jobs: { background: false } });
  try {
    await catalog.ready();
    await createBenchProperties(catalog);
    const { ms } = await time(async () => {
      for (const batch of datasetBatches(count, CALL_SIZE)) await catalog.entities.upsertMany(ADMIN, batch.map(datasetEntity));
    });
    return { ms };
  } finally {
    await catalog.close();
  }
}

async function definitionKeys(catalog: Catalog): Promise<Record<string, string>> {
  const keys: Record<string, string> = {};
  for (const c of CASES) keys[c.property] = (await catalog.properties.get(ADMIN, propertyUrn(c.property)))!.definitionKey;
  return keys;
}

export async function runSqliteGraphqlFiltersBench(options: { entities?: number } = {}): Promise<Figure[]> {
  const count = options.entities ?? 100_000;
  const n = count.toLocaleString('en-US');
  const dir = mkdtempSync(join(tmpdir(), 'metacatalog-gql-filters-'));
  const figures: Figure[] = [];
  try {
    const kept = process.env.METACATALOG_BENCH_SQLITE_FILE;
    const file = kept ?? join(dir, 'catalog.db');
    if (!kept || !existsSync(kept)) {
      const loaded = await loadCatalog(file, count);
      console.log(`  loaded ${n} datasets in ${(loaded.ms / 1000).toFixed(1)} s (setup)`);
    }
    // Reopened, as a service finds its file.
    const catalog = createCatalog({ adapter: createSqliteAdapter({ filename: file }), superUsers: [ADMIN], jobs: { background: false } });
    await catalog.ready();
    const keys = await definitionKeys(catalog);
    const schema = createGraphQLSchema(catalog);
    const document = parse(DOCUMENT);
    const problems = validate(schema, document);
    if (problems.length) throw new Error(`the bench document does not validate: ${problems.map((p) => p.message).join('; ')}`);
    // The baseline's connection gets the adapter's page cache (64 MB), so both read from memory alike.
    const hand = new Database(file, { readonly: true });
    hand.pragma('cache_size = -65536');
    try {
      for (const c of CASES) {
        const library = graphQLRequest(schema, document, c.filter);
        const baseline = handSql(hand, c, keys[c.property]!);
        sameResult(c.label, await library(), baseline());
        const runs = await interleaved(ITERATIONS, library, baseline, WARM_UP);
        const [p50, hand50] = [percentile(runs.library, 50), percentile(runs.baseline, 50)];
        figures.push(againstHandSql(`SQLite GraphQL ${c.label}: count + first 20, p50`, p50, hand50), {
          workload: `SQLite GraphQL ${c.label}: count + first 20, p99`,
          unit: 'ms',
          value: percentile(runs.library, 99),
          baseline: percentile(runs.baseline, 99),
          baselineName: 'hand SQL',
          better: 'lower',
        });
      }
    } finally {
      hand.close();
      await catalog.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  printTable(
    `Structured-property filters through GraphQL on SQLite: ${n} datasets × 5 properties (document parsed once; hand SQL interleaved in the same process)`,
    figures,
  );
  for (const f of figures.filter((x) => x.workload.endsWith('p50'))) {
    console.log(`  ${f.workload.replace(': count + first 20, p50', '')}: ${(f.value / f.baseline!).toFixed(2)}× hand SQL`);
  }
  return figures;
}
