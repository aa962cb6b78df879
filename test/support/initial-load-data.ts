import type { Catalog, FacetFilterInput } from '../../src/index';
import { RANDOM_WORDS } from '../../src/testing/search-catalog';
import { seededRandom } from '../../src/testing/random';

/**
 * The data and questions of the initial-load tests (test/core/transfer/initial-load.test.ts on SQLite and
 * memory, test/adapters/postgres/initial-load.test.ts): a catalog like the conformance suite's search data.
 */
export const ADMIN = 'urn:li:corpuser:admin';
const P = (name: string) => `urn:li:structuredProperty:io.load.${name}`;
const TIERS = ['gold', 'silver', 'bronze'];
const RETENTIONS = [7, 30, 45, 90, 365];
export const ds = (i: number, platform: string) =>
  `urn:li:dataset:(urn:li:dataPlatform:${platform},db.t${String(i).padStart(4, '0')},PROD)`;

/**
 * A catalog like the conformance suite's search data, on a larger scale: datasets of three platforms and
 * data flows, names and descriptions from the suite's words, a string property of three values, a
 * multi-valued number, a date, a string of many distinct values (too many for per-value counts), some
 * entities soft-deleted, some without values, a soft-deleted property whose values are hidden.
 */
export async function seedSource(catalog: Catalog, count: number): Promise<void> {
  const random = seededRandom(40);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const words = (n: number) => Array.from({ length: n }, () => pick(RANDOM_WORDS)).join(' ');
  await catalog.properties.create(ADMIN, { qualifiedName: 'io.load.tier', valueType: 'string', entityTypes: ['dataset'] });
  await catalog.properties.create(ADMIN, {
    qualifiedName: 'io.load.retention',
    valueType: 'number',
    cardinality: 'MULTIPLE',
    entityTypes: ['dataset', 'dataFlow'],
  });
  await catalog.properties.create(ADMIN, { qualifiedName: 'io.load.reviewed', valueType: 'date', entityTypes: ['dataset'] });
  await catalog.properties.create(ADMIN, { qualifiedName: 'io.load.owner', valueType: 'string', entityTypes: ['dataset'] });
  await catalog.properties.create(ADMIN, { qualifiedName: 'io.load.legacy', valueType: 'string', entityTypes: ['dataset'] });
  const entities = [];
  for (let i = 0; i < count; i++) {
    const flow = i % 7 === 6;
    const urn = flow ? `urn:li:dataFlow:(airflow,flow_${i},PROD)` : ds(i, pick(['hive', 'snowflake', 'kafka']));
    const properties = [];
    if (!flow && random() < 0.8) properties.push({ propertyUrn: P('tier'), values: [{ string: pick(TIERS) }] });
    if (random() < 0.7)
      properties.push({
        propertyUrn: P('retention'),
        values: [...new Set([pick(RETENTIONS), pick(RETENTIONS)])].map((double) => ({ double })),
      });
    if (!flow && random() < 0.5)
      properties.push({
        propertyUrn: P('reviewed'),
        values: [{ string: `2024-${String(1 + Math.floor(random() * 12)).padStart(2, '0')}-15` }],
      });
    if (!flow && random() < 0.6) properties.push({ propertyUrn: P('owner'), values: [{ string: `team-${Math.floor(random() * 150)}` }] });
    if (!flow && random() < 0.3) properties.push({ propertyUrn: P('legacy'), values: [{ string: pick(TIERS) }] });
    const info = { name: words(2), description: words(8) };
    entities.push({
      urn,
      aspects: {
        ...(flow ? { dataFlowInfo: info } : { datasetProperties: info }),
        ...(properties.length ? { structuredProperties: { properties } } : {}),
        ...(random() < 0.1 ? { status: { removed: true } } : {}),
      },
    });
  }
  for (let i = 0; i < entities.length; i += 100) await catalog.entities.upsertMany(ADMIN, entities.slice(i, i + 100));
  await catalog.properties.delete(ADMIN, P('legacy'));
}

export async function exportOf(catalog: Catalog): Promise<unknown[]> {
  const records: unknown[] = [];
  for await (const record of catalog.exportAll()) records.push(JSON.parse(JSON.stringify(record)));
  return records;
}

export async function importAll(catalog: Catalog, records: readonly unknown[], initial: boolean, chunk = 97): Promise<void> {
  for (let i = 0; i < records.length; i += chunk) {
    const slice = records.slice(i, i + chunk);
    await (initial ? catalog.importRecords(slice, { initial: true }) : catalog.importRecords(slice));
  }
}

/** Every question the comparison asks: searches, filters of every property and operator, facets, counts. */
export async function answers(catalog: Catalog): Promise<unknown[]> {
  const out: unknown[] = [];
  const filters: FacetFilterInput[][] = [[]];
  for (const tier of TIERS) filters.push([{ field: 'structuredProperties.io.load.tier', values: [tier] }]);
  for (const days of RETENTIONS) {
    filters.push([{ field: 'structuredProperties.io.load.retention', values: [String(days)] }]);
    filters.push([{ field: 'structuredProperties.io.load.retention', values: [String(days)], condition: 'GREATER_THAN' }]);
  }
  filters.push([{ field: 'structuredProperties.io.load.reviewed', values: ['2024-06-01'], condition: 'LESS_THAN' }]);
  for (const name of ['tier', 'retention', 'reviewed', 'owner'])
    filters.push([{ field: `structuredProperties.io.load.${name}`, condition: 'EXISTS' }]);
  for (const owner of ['team-3', 'team-77', 'team-149']) filters.push([{ field: 'structuredProperties.io.load.owner', values: [owner] }]);
  filters.push([{ field: 'platform', values: ['urn:li:dataPlatform:snowflake'] }]);
  filters.push([
    { field: 'structuredProperties.io.load.tier', values: ['gold'] },
    { field: 'structuredProperties.io.load.retention', values: ['30'], condition: 'GREATER_THAN_OR_EQUAL_TO' },
  ]);
  const facets = [
    'structuredProperties.io.load.tier',
    'structuredProperties.io.load.retention',
    'structuredProperties.io.load.owner',
    'platform',
    '_entityType',
  ];
  for (const and of filters) {
    for (const includeSoftDeleted of [false, true]) {
      const scope = {
        types: ['DATASET' as const, 'DATA_FLOW' as const],
        query: '*',
        orFilters: [{ and }],
        searchFlags: { includeSoftDeleted },
      };
      const found = await catalog.search.search(ADMIN, { ...scope, count: 1000 });
      out.push({ and, includeSoftDeleted, total: found.total, urns: found.searchResults.map((r) => r.entity.urn) });
      out.push(
        (await catalog.search.aggregate(ADMIN, { ...scope, facets, searchFlags: { includeSoftDeleted, maxAggValues: 200 } })).facets,
      );
    }
  }
  for (const word of RANDOM_WORDS.slice(0, 12)) {
    const found = await catalog.search.search(ADMIN, { query: word, count: 1000 });
    out.push({ word, total: found.total, urns: found.searchResults.map((r) => r.entity.urn).sort() });
  }
  return out;
}
