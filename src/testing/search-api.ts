import { createCatalog, type Catalog } from '../catalog';
import type { FacetFilterInput } from '../index';
import { rejectionDetails, outcomeCode } from './support';
import type { ConformanceHarness } from './types';

const ADMIN = 'urn:li:corpuser:admin';
/** Holds no privilege: reading needs none. */
const READER = 'urn:li:corpuser:reader';
const T0 = 1_700_000_000_000;
const RETENTION = 'urn:li:structuredProperty:io.search.retention';
const TIER = 'urn:li:structuredProperty:io.search.tier';
const REVIEWED = 'urn:li:structuredProperty:io.search.reviewed';
const ds = (name: string, platform = 'hive'): string => `urn:li:dataset:(urn:li:dataPlatform:${platform},${name},PROD)`;
const FLOW = 'urn:li:dataFlow:(airflow,nightly_revenue,PROD)';

async function withCatalog(harness: ConformanceHarness, test: (catalog: Catalog) => Promise<void>): Promise<void> {
  const adapter = await harness.createAdapter({});
  const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false }, clock: () => T0 });
  try {
    await catalog.ready();
    await test(catalog);
  } finally {
    await catalog.close();
  }
}

/** a (45 days, gold), b (7, silver), c (45.5, gold, soft-deleted), d (no values), e (120, bronze, snowflake), a data flow (45). */
async function seed(catalog: Catalog): Promise<void> {
  await catalog.properties.create(ADMIN, {
    qualifiedName: 'io.search.retention',
    displayName: 'Retention (days)',
    valueType: 'number',
    cardinality: 'MULTIPLE',
    entityTypes: ['dataset', 'dataFlow'],
  });
  await catalog.properties.create(ADMIN, { qualifiedName: 'io.search.tier', valueType: 'string', entityTypes: ['dataset'] });
  await catalog.properties.create(ADMIN, { qualifiedName: 'io.search.reviewed', valueType: 'date', entityTypes: ['dataset'] });
  await catalog.entities.upsertMany(ADMIN, [
    { urn: ds('a'), aspects: { datasetProperties: { name: 'customer orders', description: 'Orders placed by customers' } } },
    { urn: ds('b'), aspects: { datasetProperties: { name: 'daily revenue', description: 'Revenue per day' } } },
    { urn: ds('c'), aspects: { datasetProperties: { name: 'old revenue', description: 'Replaced by daily revenue' } } },
    { urn: ds('d'), aspects: { datasetProperties: { name: 'gold standard', description: 'No properties here' } } },
    { urn: ds('e', 'snowflake'), aspects: { datasetProperties: { name: 'events', description: 'Click events' } } },
    { urn: FLOW, aspects: { dataFlowInfo: { name: 'nightly revenue', description: 'Builds revenue' } } },
  ]);
  const values = (retention: number[], tier?: string, reviewed?: string) => [
    { propertyUrn: RETENTION, values: retention.map((double) => ({ double })) },
    ...(tier ? [{ propertyUrn: TIER, values: [{ string: tier }] }] : []),
    ...(reviewed ? [{ propertyUrn: REVIEWED, values: [{ string: reviewed }] }] : []),
  ];
  await catalog.properties.upsertValuesMany(ADMIN, [
    { urn: ds('a'), properties: values([45], 'gold', '2024-03-01') },
    { urn: ds('b'), properties: values([7, 30], 'silver', '2024-11-20') },
    { urn: ds('c'), properties: values([45.5], 'gold') },
    { urn: ds('e', 'snowflake'), properties: values([120], 'bronze', '2023-12-31') },
    { urn: FLOW, properties: values([45]) },
  ]);
  await catalog.entities.upsertAspect(ADMIN, ds('c'), 'status', { removed: true });
}

const filter = (
  field: string,
  values: string[] | undefined,
  condition?: FacetFilterInput['condition'],
  negated?: boolean,
): FacetFilterInput => ({
  field,
  ...(values ? { values } : {}),
  ...(condition ? { condition } : {}),
  ...(negated ? { negated } : {}),
});

/** Every match, in URN order (a scroll: the order does not depend on full-text scores). */
async function urnsOf(catalog: Catalog, input: Parameters<Catalog['search']['scroll']>[1]): Promise<string[]> {
  return (await catalog.search.scroll(READER, { count: 100, ...input })).searchResults.map((r) => r.entity.urn);
}

/** The other of the two "revenue" matches. */
function otherRevenueMatch(urn: string): { entity: { urn: string; type: string } } {
  return urn === FLOW ? { entity: { urn: ds('b'), type: 'DATASET' } } : { entity: { urn: FLOW, type: 'DATA_FLOW' } };
}

/** The domain layer of search through a catalog over the adapter under test. */
export function registerSearchApiTests(harness: ConformanceHarness): void {
  const { describe, it, expect } = harness;

  describe('catalog.search (scrollAcrossEntities, searchAcrossEntities, aggregateAcrossEntities)', () => {
    it('filters on structured properties: numbers as numbers ("45.0" is 45), dates, strings; OR of ANDs; types', async () => {
      await withCatalog(harness, async (catalog) => {
        await seed(catalog);
        const retention = 'structuredProperties.io.search.retention';
        expect(await urnsOf(catalog, { query: '*', orFilters: [{ and: [filter(retention, ['45.0'])] }] })).toEqual([FLOW, ds('a')]);
        expect(await urnsOf(catalog, { types: ['DATASET'], query: '', orFilters: [{ and: [filter(retention, ['45'])] }] })).toEqual([
          ds('a'),
        ]);
        expect(await urnsOf(catalog, { orFilters: [{ and: [filter(retention, ['40'], 'GREATER_THAN')] }] })).toEqual([
          FLOW,
          ds('a'),
          ds('e', 'snowflake'),
        ]);
        expect(await urnsOf(catalog, { orFilters: [{ and: [filter(retention, ['8'], 'LESS_THAN')] }] })).toEqual([ds('b')]);
        expect(
          await urnsOf(catalog, {
            orFilters: [{ and: [filter('structuredProperties.io.search.reviewed', ['2024-01-01'], 'GREATER_THAN_OR_EQUAL_TO')] }],
          }),
        ).toEqual([ds('a'), ds('b')]);
        expect(
          await urnsOf(catalog, {
            orFilters: [
              { and: [filter('structuredProperties.io.search.tier', ['gold']), filter(retention, ['100'], 'LESS_THAN')] },
              { and: [filter('platform', ['urn:li:dataPlatform:snowflake'])] },
            ],
          }),
        ).toEqual([ds('a'), ds('e', 'snowflake')]);
        expect(
          await urnsOf(catalog, {
            orFilters: [{ and: [filter('structuredProperties.io.search.tier', undefined, 'EXISTS', true)] }],
            types: ['DATASET'],
          }),
        ).toEqual([ds('d')]);
        expect(await urnsOf(catalog, { orFilters: [{ and: [filter('_entityType', ['DATA_FLOW'])] }] })).toEqual([FLOW]);
        expect(await urnsOf(catalog, { orFilters: [{ and: [{ field: '_entityType', value: 'dataFlow' }] }] })).toEqual([FLOW]);
        expect(await urnsOf(catalog, { filters: [filter('urn', ['urn:li:dataFlow:'], 'START_WITH')] })).toEqual([FLOW]);
      });
    });

    it('leaves soft-deleted entities out unless searchFlags.includeSoftDeleted', async () => {
      await withCatalog(harness, async (catalog) => {
        await seed(catalog);
        const gold = [{ and: [filter('structuredProperties.io.search.tier', ['gold'])] }];
        expect(await urnsOf(catalog, { orFilters: gold })).toEqual([ds('a')]);
        expect(await urnsOf(catalog, { orFilters: gold, searchFlags: { includeSoftDeleted: true } })).toEqual([ds('a'), ds('c')]);
      });
    });

    it('filters and facets on removed (false when absent; a filter naming it decides about soft-deleted entities) and the standard fields', async () => {
      await withCatalog(harness, async (catalog) => {
        await seed(catalog);
        const datasets = [ds('a'), ds('b'), ds('c'), ds('d'), ds('e', 'snowflake')];
        const types = ['DATASET'] as const;
        // The condition the established platform's SDK sends by default: negated removed = true.
        const notRemoved = { field: 'removed', condition: 'EQUAL' as const, values: ['true'], negated: true };
        expect(await urnsOf(catalog, { types: [...types], orFilters: [{ and: [notRemoved] }] })).toEqual(
          datasets.filter((u) => u !== ds('c')),
        );
        expect(await urnsOf(catalog, { types: [...types], orFilters: [{ and: [filter('removed', ['true'])] }] })).toEqual([ds('c')]);
        expect(await urnsOf(catalog, { types: [...types], orFilters: [{ and: [filter('removed.keyword', ['TRUE'])] }] })).toEqual([
          ds('c'),
        ]);
        expect(await urnsOf(catalog, { types: [...types], orFilters: [{ and: [filter('removed', ['false'])] }] })).toEqual(
          datasets.filter((u) => u !== ds('c')),
        );
        expect(await urnsOf(catalog, { types: [...types], orFilters: [{ and: [filter('removed', ['true', 'false'], 'IN')] }] })).toEqual(
          datasets,
        );
        expect(await urnsOf(catalog, { types: [...types], orFilters: [{ and: [filter('removed', undefined, 'EXISTS')] }] })).toEqual(
          datasets,
        );
        expect(await urnsOf(catalog, { types: [...types], orFilters: [{ and: [filter('removed', undefined, 'EXISTS', true)] }] })).toEqual(
          [],
        );
        // Named in one group, it decides for the whole filter (as in DataHub): the hive group finds soft-deleted c too.
        expect(
          await urnsOf(catalog, {
            types: [...types],
            orFilters: [{ and: [filter('removed', ['true'])] }, { and: [filter('platform', ['urn:li:dataPlatform:hive'])] }],
          }),
        ).toEqual(datasets.filter((u) => u !== ds('e', 'snowflake')));
        const facet = await catalog.search.aggregate(READER, {
          types: [...types],
          facets: ['removed'],
          searchFlags: { includeSoftDeleted: true },
        });
        expect(facet.facets).toEqual([
          {
            field: 'removed',
            displayName: 'Removed',
            aggregations: [
              { value: 'false', count: 4 },
              { value: 'true', count: 1 },
            ],
          },
        ]);
        expect((await catalog.search.aggregate(READER, { types: [...types], facets: ['removed'] })).facets[0]!.aggregations).toEqual([
          { value: 'false', count: 4 },
        ]);
        // A flag written again clears it.
        await catalog.entities.upsertAspect(ADMIN, ds('c'), 'status', { removed: false });
        expect(await urnsOf(catalog, { types: [...types], orFilters: [{ and: [filter('removed', ['true'])] }] })).toEqual([]);

        await catalog.entities.upsertMany(ADMIN, [
          {
            urn: ds('q'),
            aspects: { datasetProperties: { name: 'q', qualifiedName: 'db.sales.q', customProperties: { team: 'sales', tier: 'x=y' } } },
          },
          { urn: 'urn:li:container:c1', aspects: { containerProperties: { name: 'c1', env: 'PROD', description: '' } } },
        ]);
        expect(await urnsOf(catalog, { orFilters: [{ and: [filter('customProperties', ['team=sales'])] }] })).toEqual([ds('q')]);
        expect(await urnsOf(catalog, { orFilters: [{ and: [filter('customProperties', ['tier=x=y'])] }] })).toEqual([ds('q')]);
        expect(await urnsOf(catalog, { orFilters: [{ and: [filter('qualifiedName.keyword', ['db.sales.q'])] }] })).toEqual([ds('q')]);
        expect(await urnsOf(catalog, { orFilters: [{ and: [filter('id', ['q'])] }] })).toEqual([ds('q')]);
        expect(await urnsOf(catalog, { orFilters: [{ and: [filter('platform.keyword', ['urn:li:dataPlatform:snowflake'])] }] })).toEqual([
          ds('e', 'snowflake'),
        ]);
        expect(await urnsOf(catalog, { orFilters: [{ and: [filter('env', ['PROD'])] }] })).toEqual(['urn:li:container:c1']);
        expect(
          await urnsOf(catalog, { types: ['DATASET', 'CONTAINER'], orFilters: [{ and: [filter('hasDescription', ['false'])] }] }),
        ).toEqual(['urn:li:container:c1', ds('q')]);
        const hasDescription = await catalog.search.aggregate(READER, { types: ['DATASET', 'CONTAINER'], facets: ['hasDescription'] });
        expect(hasDescription.facets[0]!.aggregations).toEqual([
          { value: 'true', count: 5 },
          { value: 'false', count: 2 },
        ]);
        // Refusals: a value that is not true/false, an operator that does not apply.
        const at = async (orFilters: Array<{ and: FacetFilterInput[] }>) =>
          rejectionDetails(catalog.search.search(READER, { query: '*', orFilters }));
        expect(await at([{ and: [filter('removed', ['yes'])] }])).toEqual({
          code: 'INVALID_INPUT',
          paths: ['/orFilters/0/and/0/values/0'],
        });
        expect(await at([{ and: [filter('removed', ['t'], 'START_WITH')] }])).toEqual({
          code: 'INVALID_INPUT',
          paths: ['/orFilters/0/and/0/condition'],
        });
        // The description is matched by the full-text query; it is not an exact-value field.
        expect((await at([{ and: [filter('description', ['Click'], 'START_WITH')] }])).code).toBe('INVALID_INPUT');
      });
    });

    it('full text covers name, description and URN key, never structured property values', async () => {
      await withCatalog(harness, async (catalog) => {
        await seed(catalog);
        expect(await urnsOf(catalog, { query: 'revenue' })).toEqual([FLOW, ds('b')]);
        expect(await urnsOf(catalog, { query: 'revenue', types: ['DATA_FLOW'] })).toEqual([FLOW]);
        expect(await urnsOf(catalog, { query: 'snowflake' })).toEqual([ds('e', 'snowflake')]);
        // "gold" is a tier value: only the dataset named "gold standard" matches.
        expect(await urnsOf(catalog, { query: 'gold' })).toEqual([ds('d')]);
        const ranked = await catalog.search.search(READER, { query: 'revenue', count: 1 });
        expect(ranked.total).toBe(2);
        expect(ranked.count).toBe(1);
        const rest = await catalog.search.search(READER, { query: 'revenue', start: 1, count: 5 });
        expect(rest).toEqual({ start: 1, count: 1, total: 2, searchResults: [otherRevenueMatch(ranked.searchResults[0]!.entity.urn)] });
      });
    });

    it('refuses unknown fields, soft-deleted properties, names no property can have and malformed values with INVALID_INPUT at their path', async () => {
      await withCatalog(harness, async (catalog) => {
        await seed(catalog);
        const at = async (orFilters: Array<{ and: FacetFilterInput[] }>) =>
          rejectionDetails(catalog.search.search(READER, { query: '*', orFilters }));
        expect(await at([{ and: [filter('structuredProperties.io search', ['1'])] }])).toEqual({
          code: 'INVALID_INPUT',
          paths: ['/orFilters/0/and/0/field'],
        });
        expect(await at([{ and: [filter('owner', ['x'])] }])).toEqual({ code: 'INVALID_INPUT', paths: ['/orFilters/0/and/0/field'] });
        expect(
          await at([{ and: [filter('platform', ['x'])] }, { and: [filter('structuredProperties.io.search.retention', ['4x5', '7'])] }]),
        ).toEqual({
          code: 'INVALID_INPUT',
          paths: ['/orFilters/1/and/0/values/0'],
        });
        expect(await at([{ and: [filter('structuredProperties.io.search.retention', ['4'], 'CONTAIN')] }])).toEqual({
          code: 'INVALID_INPUT',
          paths: ['/orFilters/0/and/0/condition'],
        });
        expect(await at([{ and: [filter('structuredProperties.io.search.reviewed', ['2024-02-30'], 'LESS_THAN')] }])).toEqual({
          code: 'INVALID_INPUT',
          paths: ['/orFilters/0/and/0/values/0'],
        });
        expect(await at([{ and: [filter('_entityType', ['TABLE'])] }])).toEqual({
          code: 'INVALID_INPUT',
          paths: ['/orFilters/0/and/0/values/0'],
        });
        expect(await at([{ and: [{ field: 'platform', condition: 'EQUAL' }] }])).toEqual({
          code: 'INVALID_INPUT',
          paths: ['/orFilters/0/and/0'],
        });
        expect((await rejectionDetails(catalog.search.search(READER, { types: ['TABLE'] as never }))).paths).toEqual(['/types/0']);
        expect((await rejectionDetails(catalog.search.scroll(READER, { scrollId: 'not-a-cursor' }))).paths).toEqual(['/scrollId']);
        expect(await outcomeCode(catalog.search.search(READER, { count: -1 }))).toBe('INVALID_INPUT');
        expect(await outcomeCode(catalog.search.search('', { query: '*' }))).toBe('UNAUTHENTICATED');
        // A malformed actor is refused every time (only well-formed ones are remembered).
        expect(await outcomeCode(catalog.search.search('not-a-urn', { query: '*' }))).toBe('UNAUTHENTICATED');
        expect(await outcomeCode(catalog.search.scroll('not-a-urn', { query: '*' }))).toBe('UNAUTHENTICATED');
        // One malformed property name in `filters` and in two groups: refused at each place, in input order.
        const nope = 'structuredProperties.io.(search';
        expect(
          await rejectionDetails(
            catalog.search.scroll(READER, {
              filters: [filter(nope, ['1'])],
              orFilters: [{ and: [filter(nope, ['2'])] }, { and: [filter('platform', ['x']), filter(nope, ['3'])] }],
            }),
          ),
        ).toEqual({ code: 'INVALID_INPUT', paths: ['/filters/0/field', '/orFilters/0/and/0/field', '/orFilters/1/and/1/field'] });

        await catalog.properties.softDelete(ADMIN, TIER);
        expect(await at([{ and: [filter('structuredProperties.io.search.tier', ['gold'])] }])).toEqual({
          code: 'INVALID_INPUT',
          paths: ['/orFilters/0/and/0/field'],
        });
        expect(await outcomeCode(catalog.search.aggregate(READER, { facets: ['structuredProperties.io.search.tier'] }))).toBe(
          'INVALID_INPUT',
        );
      });
    });

    it('a filter on a hard-deleted or never created property matches nothing (negated: everything); its facet has no values', async () => {
      await withCatalog(harness, async (catalog) => {
        await seed(catalog);
        const tier = 'structuredProperties.io.search.tier';
        const before = await urnsOf(catalog, { orFilters: [{ and: [filter(tier, undefined, 'EXISTS')] }] });
        expect(before.length).toBeGreaterThan(0);
        const everything = await urnsOf(catalog, {});
        await catalog.properties.hardDelete(ADMIN, TIER);
        // Before and after the clean-up of the values.
        for (const phase of ['before clean-up', 'after clean-up']) {
          if (phase === 'after clean-up') expect((await catalog.settle()).failed).toEqual([]);
          expect(await urnsOf(catalog, { orFilters: [{ and: [filter(tier, undefined, 'EXISTS')] }] })).toEqual([]);
          expect(await urnsOf(catalog, { orFilters: [{ and: [filter(tier, ['gold'])] }] })).toEqual([]);
          expect(await urnsOf(catalog, { orFilters: [{ and: [filter(tier, ['gold'], 'EQUAL', true)] }] })).toEqual(
            everything.filter((u) => u !== TIER),
          );
          const facets = await catalog.search.aggregate(READER, { facets: [tier, '_entityType'] });
          expect(facets.facets.map((f) => [f.field, f.aggregations.length > 0])).toEqual([
            [tier, false],
            ['_entityType', true],
          ]);
        }
        // Never created: the same answers; values are not typed (the value type is unknown).
        const never = 'structuredProperties.io.search.neverCreated';
        expect(await urnsOf(catalog, { orFilters: [{ and: [filter(never, ['x', '1'], 'GREATER_THAN')] }] })).toEqual([]);
        expect((await catalog.search.aggregate(READER, { facets: [never] })).facets).toEqual([
          { field: never, displayName: never, entity: 'urn:li:structuredProperty:io.search.neverCreated', aggregations: [] },
        ]);
        // Created afterwards, the name resolves to the new definition.
        await catalog.properties.create(ADMIN, { qualifiedName: 'io.search.neverCreated', valueType: 'string', entityTypes: ['dataset'] });
        await catalog.properties.upsertValues(ADMIN, ds('d'), {
          properties: [{ propertyUrn: 'urn:li:structuredProperty:io.search.neverCreated', values: [{ string: 'x' }] }],
        });
        expect(await urnsOf(catalog, { orFilters: [{ and: [filter(never, ['x'])] }] })).toEqual([ds('d')]);
      });
    });

    it('never matches values of a superseded version or of a hard-deleted definition, before their clean-up ran', async () => {
      await withCatalog(harness, async (catalog) => {
        await seed(catalog);
        const tier = 'structuredProperties.io.search.tier';
        await catalog.properties.hardDelete(ADMIN, TIER);
        await catalog.properties.create(ADMIN, { qualifiedName: 'io.search.tier', valueType: 'string', entityTypes: ['dataset'] });
        expect(await urnsOf(catalog, { orFilters: [{ and: [filter(tier, undefined, 'EXISTS')] }] })).toEqual([]);
        await catalog.properties.upsertValues(ADMIN, ds('d'), { properties: [{ propertyUrn: TIER, values: [{ string: 'gold' }] }] });
        expect(await urnsOf(catalog, { orFilters: [{ and: [filter(tier, ['gold'])] }] })).toEqual([ds('d')]);

        const body = {
          qualifiedName: 'io.search.retention',
          valueType: 'number',
          cardinality: 'SINGLE' as const,
          entityTypes: ['dataset', 'dataFlow'],
          version: '20240101000000',
        };
        await catalog.properties.upsert(ADMIN, body);
        expect(
          await urnsOf(catalog, { orFilters: [{ and: [filter('structuredProperties.io.search.retention', ['0'], 'GREATER_THAN')] }] }),
        ).toEqual([]);
        const facets = await catalog.search.aggregate(READER, { facets: ['structuredProperties.io.search.retention'] });
        expect(facets.facets[0]!.aggregations).toEqual([]);
        expect((await catalog.settle()).failed).toEqual([]);
      });
    });

    it('aggregates: _entityType and every property with values by default, decimal strings for numbers, display names, maxAggValues', async () => {
      await withCatalog(harness, async (catalog) => {
        await seed(catalog);
        const all = await catalog.search.aggregate(READER, { query: '*' });
        expect(all.facets.map((f) => [f.field, f.displayName])).toEqual([
          ['_entityType', 'Type'],
          ['structuredProperties.io.search.retention', 'Retention (days)'],
          ['structuredProperties.io.search.reviewed', 'io.search.reviewed'],
          ['structuredProperties.io.search.tier', 'io.search.tier'],
        ]);
        // Property definitions are entities too (searchable, like in the established platform).
        expect(all.facets[0]!.aggregations).toEqual([
          { value: 'DATASET', count: 4 },
          { value: 'STRUCTURED_PROPERTY', count: 3 },
          { value: 'DATA_FLOW', count: 1 },
        ]);
        expect(all.facets[1]!.aggregations).toEqual([
          { value: '45.0', count: 2 },
          { value: '7.0', count: 1 },
          { value: '30.0', count: 1 },
          { value: '120.0', count: 1 },
        ]);
        const filtered = await catalog.search.aggregate(READER, {
          types: ['DATASET'],
          query: 'revenue',
          facets: ['structuredProperties.io.search.tier', 'platform', '_entityType'],
          searchFlags: { includeSoftDeleted: true, maxAggValues: 1 },
        });
        expect(filtered.facets).toEqual([
          // The entity behind a property facet, and behind a value that is a URN.
          {
            field: 'structuredProperties.io.search.tier',
            displayName: 'io.search.tier',
            entity: TIER,
            aggregations: [{ value: 'gold', count: 1 }],
          },
          {
            field: 'platform',
            displayName: 'Platform',
            aggregations: [{ value: 'urn:li:dataPlatform:hive', count: 2, entity: 'urn:li:dataPlatform:hive' }],
          },
          { field: '_entityType', displayName: 'Type', aggregations: [{ value: 'DATASET', count: 2 }] },
        ]);
        const half = await catalog.search.aggregate(READER, {
          facets: ['structuredProperties.io.search.retention'],
          searchFlags: { includeSoftDeleted: true },
          orFilters: [{ and: [filter('urn', ['c,PROD)'], 'END_WITH')] }],
        });
        expect(half.facets[0]!.aggregations).toEqual([{ value: '45.5', count: 1 }]);
      });
    });

    it('scrolls in URN order with an opaque scroll id, with neither duplicates nor gaps while writes happen', async () => {
      await withCatalog(harness, async (catalog) => {
        const names = Array.from({ length: 30 }, (_, i) => `t${String(i * 2).padStart(3, '0')}`);
        await catalog.entities.upsertMany(
          ADMIN,
          names.map((n) => ({ urn: ds(n), aspects: { datasetProperties: { name: n } } })),
        );
        const seen: string[] = [];
        let scrollId: string | null | undefined;
        let pages = 0;
        let total = -1;
        do {
          const page = await catalog.search.scroll(READER, { types: ['DATASET'], query: '*', count: 4, ...(scrollId ? { scrollId } : {}) });
          if (total < 0) total = page.total;
          seen.push(...page.searchResults.map((r) => r.entity.urn));
          scrollId = page.nextScrollId;
          pages++;
          if (pages === 2) {
            // Around the cursor: one new entity before it, one after it; one not yet seen is deleted.
            await catalog.entities.upsertMany(ADMIN, [
              { urn: ds('t001'), aspects: { datasetProperties: { name: 'before' } } },
              { urn: ds('t999'), aspects: { datasetProperties: { name: 'after' } } },
            ]);
            await catalog.entities.delete(ADMIN, ds('t040'));
          }
        } while (scrollId);
        expect(total).toBe(30);
        expect(new Set(seen).size).toBe(seen.length);
        const survivors = names.map((n) => ds(n)).filter((u) => u !== ds('t040'));
        expect(seen.filter((u) => u !== ds('t999'))).toEqual(survivors);
        expect(seen.includes(ds('t999'))).toBe(true);
        expect(seen.includes(ds('t001'))).toBe(false);
        const last = await catalog.search.scroll(READER, { count: 100 });
        expect(last.nextScrollId).toBe(null);
        expect(last.count).toBe(31);
      });
    });
  });
}
