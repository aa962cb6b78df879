import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADAPTERS, ADMIN, ANA, codesOf, countingAdapter, createAdapter, createHarness, dataOf, type Harness } from './support';

const RETENTION = 'urn:li:structuredProperty:io.acryl.privacy.retentionTime';
const TEAM = 'urn:li:structuredProperty:team';
const datasetUrn = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,table_${String(i).padStart(3, '0')},PROD)`;

const SCROLL = `query scroll($input: ScrollAcrossEntitiesInput!) {
  scrollAcrossEntities(input: $input) { nextScrollId count total searchResults { entity { urn type } } }
}`;
const SEARCH = `query search($input: SearchAcrossEntitiesInput!) {
  searchAcrossEntities(input: $input) { start count total searchResults { entity { urn type } matchedFields { name } } }
}`;
const AGGREGATE = `query aggregate($input: AggregateAcrossEntitiesInput!) {
  aggregateAcrossEntities(input: $input) { facets { field displayName aggregations { value count } } }
}`;

interface Page {
  nextScrollId: string | null;
  count: number;
  total: number;
  searchResults: Array<{ entity: { urn: string; type: string } }>;
}

describe.each(ADAPTERS)('GraphQL search and aggregation (%s)', (kind) => {
  let h: Harness;
  let counted: ReturnType<typeof countingAdapter>;
  beforeEach(async () => {
    counted = countingAdapter(createAdapter(kind));
    h = createHarness(counted.adapter);
    await h.catalog.properties.create(ADMIN, {
      qualifiedName: 'io.acryl.privacy.retentionTime',
      valueType: 'number',
      cardinality: 'MULTIPLE',
      entityTypes: ['dataset', 'dataFlow'],
    });
    await h.catalog.properties.create(ADMIN, { qualifiedName: 'team', displayName: 'Team', valueType: 'string', entityTypes: ['dataset'] });
    await h.catalog.entities.upsertMany(
      ADMIN,
      Array.from({ length: 120 }, (_, i) => ({
        urn: datasetUrn(i),
        aspects: { datasetProperties: { name: `table ${i}`, description: i % 2 ? 'orders of the shop' : 'customers' } },
      })),
    );
    await h.catalog.properties.upsertValuesMany(
      ADMIN,
      Array.from({ length: 120 }, (_, i) => ({
        urn: datasetUrn(i),
        properties: [
          { propertyUrn: RETENTION, values: [{ double: i < 100 ? 30 : 90 }] },
          { propertyUrn: TEAM, values: [{ string: i % 3 === 0 ? 'sales' : 'finance' }] },
        ],
      })),
    );
    await h.catalog.entities.upsertAspect(ADMIN, 'urn:li:dataFlow:(airflow,daily,PROD)', 'dataFlowInfo', { name: 'daily' });
  });
  afterEach(() => h.close());

  it('scrollAcrossEntities pages through every match with nextScrollId', async () => {
    const seen: string[] = [];
    let scrollId: string | null = null;
    do {
      const page: Page = dataOf<{ scrollAcrossEntities: Page }>(
        await h.run(SCROLL, { input: { types: ['DATASET'], query: '*', count: 50, ...(scrollId ? { scrollId } : {}) } }, ANA),
      ).scrollAcrossEntities;
      expect(page.total).toBe(120);
      expect(page.count).toBe(page.searchResults.length);
      seen.push(...page.searchResults.map((r) => r.entity.urn));
      for (const r of page.searchResults) expect(r.entity.type).toBe('DATASET');
      scrollId = page.nextScrollId;
    } while (scrollId);
    expect(seen).toHaveLength(120);
    expect(new Set(seen).size).toBe(120);
  });

  it('filters on structured properties: GREATER_THAN with decimal strings, EXISTS, EQUAL, OR of ANDs', async () => {
    const run = async (orFilters: unknown) =>
      dataOf<{ scrollAcrossEntities: Page }>(await h.run(SCROLL, { input: { query: '*', count: 200, orFilters } })).scrollAcrossEntities
        .total;
    expect(
      await run([{ and: [{ field: 'structuredProperties.io.acryl.privacy.retentionTime', condition: 'GREATER_THAN', values: ['45.0'] }] }]),
    ).toBe(20);
    expect(await run([{ and: [{ field: 'structuredProperties.team', condition: 'EXISTS' }] }])).toBe(120);
    expect(await run([{ and: [{ field: 'structuredProperties.team', condition: 'EQUAL', values: ['sales'] }] }])).toBe(40);
    expect(
      await run([
        {
          and: [
            { field: 'structuredProperties.team', values: ['sales'] },
            { field: 'structuredProperties.io.acryl.privacy.retentionTime', values: ['90'] },
          ],
        },
        { and: [{ field: '_entityType', values: ['DATA_FLOW'] }] },
      ]),
    ).toBe(6 + 1); // tables 102, 105, ..., 117 and the data flow
  });

  it('searchAcrossEntities pages with offsets over full-text matches', async () => {
    const first = dataOf<{ searchAcrossEntities: Page & { start: number } }>(
      await h.run(SEARCH, { input: { types: ['DATASET'], query: 'orders', start: 0, count: 10 } }),
    );
    expect(first.searchAcrossEntities).toMatchObject({ start: 0, count: 10, total: 60 });
    const second = dataOf<{ searchAcrossEntities: Page & { start: number } }>(
      await h.run(SEARCH, { input: { types: ['DATASET'], query: 'orders', start: 55, count: 10 } }),
    );
    expect(second.searchAcrossEntities).toMatchObject({ start: 55, count: 5, total: 60 });
    expect(first.searchAcrossEntities.searchResults[0]).toEqual({
      entity: expect.objectContaining({ type: 'DATASET' }),
      matchedFields: [],
    });
  });

  it('aggregateAcrossEntities counts values per facet; numbers come back as decimal strings', async () => {
    const data = dataOf<{
      aggregateAcrossEntities: {
        facets: Array<{ field: string; displayName: string; aggregations: Array<{ value: string; count: number }> }>;
      };
    }>(
      await h.run(AGGREGATE, {
        input: {
          types: [],
          query: '*',
          facets: ['structuredProperties.io.acryl.privacy.retentionTime', 'structuredProperties.team'],
          searchFlags: { maxAggValues: 10 },
        },
      }),
    );
    expect(data.aggregateAcrossEntities.facets).toEqual([
      {
        field: 'structuredProperties.io.acryl.privacy.retentionTime',
        displayName: expect.any(String),
        aggregations: [
          { value: '30.0', count: 100 },
          { value: '90.0', count: 20 },
        ],
      },
      {
        field: 'structuredProperties.team',
        displayName: 'Team',
        aggregations: [
          { value: 'finance', count: 80 },
          { value: 'sales', count: 40 },
        ],
      },
    ]);
  });

  it('search results carry their facets when asked for', async () => {
    const data = dataOf<{
      searchAcrossEntities: { facets: Array<{ field: string; aggregations: Array<{ value: string; count: number }> }> };
    }>(await h.run(`{ searchAcrossEntities(input: { query: "*", count: 0 }) { total facets { field aggregations { value count } } } }`));
    const entityTypes = data.searchAcrossEntities.facets.find((f) => f.field === '_entityType');
    expect(entityTypes?.aggregations).toEqual(
      expect.arrayContaining([
        { value: 'DATASET', count: 120 },
        { value: 'DATA_FLOW', count: 1 },
      ]),
    );
  });

  it('documents written for the established platform run: keepAlive, flags without effect, deprecated filters, skipAggregates', async () => {
    const data = dataOf<{ scroll: { total: number; facets: null }; search: { total: number; facets: unknown[] } }>(
      await h.run(`{
        scroll: scrollAcrossEntities(input: { query: "*", count: 5, keepAlive: "5m", searchFlags: { skipCache: true, fulltext: true, skipHighlighting: true, skipAggregates: true } }) {
          total facets { field }
        }
        search: searchAcrossEntities(input: { types: [DATASET], query: "*", filters: [{ field: "structuredProperties.team", value: "sales" }] }) {
          total facets { field }
        }
      }`),
    );
    // 120 datasets, the data flow and the two property definitions.
    expect(data.scroll).toEqual({ total: 123, facets: null });
    expect(data.search.total).toBe(40);
    expect(data.search.facets.length).toBeGreaterThan(0);
  });

  it('includeSoftDeleted brings soft-deleted entities back into the results', async () => {
    await h.catalog.entities.upsertAspect(ADMIN, datasetUrn(0), 'status', { removed: true });
    const count = async (includeSoftDeleted: boolean) =>
      dataOf<{ scrollAcrossEntities: Page }>(
        await h.run(SCROLL, { input: { types: ['DATASET'], query: '*', count: 0, searchFlags: { includeSoftDeleted } } }),
      ).scrollAcrossEntities.total;
    expect(await count(false)).toBe(119);
    expect(await count(true)).toBe(120);
  });

  it('refusals: unknown standard fields and soft-deleted properties are INVALID_INPUT; no actor is UNAUTHENTICATED', async () => {
    // A property that never existed matches nothing, as in DataHub.
    const never = await h.run(SCROLL, {
      input: { query: '*', orFilters: [{ and: [{ field: 'structuredProperties.nothing', values: ['x'] }] }] },
    });
    expect(dataOf<{ scrollAcrossEntities: Page }>(never).scrollAcrossEntities.total).toBe(0);
    const unknown = await h.run(SCROLL, { input: { query: '*', orFilters: [{ and: [{ field: 'nothing', values: ['x'] }] }] } });
    expect(codesOf(unknown)).toEqual(['INVALID_INPUT']);
    expect(unknown.errors?.[0]?.extensions.details).toEqual([
      expect.objectContaining({ path: expect.stringContaining('/orFilters/0/and/0') }),
    ]);
    await h.catalog.properties.softDelete(ADMIN, TEAM);
    const softDeleted = await h.run(SCROLL, {
      input: { query: '*', orFilters: [{ and: [{ field: 'structuredProperties.team', values: ['sales'] }] }] },
    });
    expect(codesOf(softDeleted)).toEqual(['INVALID_INPUT']);
    expect(codesOf(await h.run(AGGREGATE, { input: { query: '*', facets: ['structuredProperties.team'] } }))).toEqual(['INVALID_INPUT']);
    expect(codesOf(await h.run(SCROLL, { input: { query: '*' } }, null))).toEqual(['UNAUTHENTICATED']);
    expect(codesOf(await h.run(SEARCH, { input: { query: '*' } }, null))).toEqual(['UNAUTHENTICATED']);
    expect(codesOf(await h.run(AGGREGATE, { input: { query: '*' } }, null))).toEqual(['UNAUTHENTICATED']);
    expect(codesOf(await h.run(SCROLL, { input: { query: '*', scrollId: 'not-a-cursor' } }))).toEqual(['INVALID_INPUT']);
  });

  it('a filtered scroll costs one adapter call once definitions are cached, and sees a new version of the property at once', async () => {
    const input = {
      input: {
        types: ['DATASET'],
        query: '*',
        count: 5,
        orFilters: [{ and: [{ field: 'structuredProperties.team', values: ['sales'] }] }],
      },
    };
    const total = async () => dataOf<{ scrollAcrossEntities: Page }>(await h.run(SCROLL, input)).scrollAcrossEntities.total;
    expect(await total()).toBe(40);
    counted.reset();
    expect(await total()).toBe(40);
    // The answer carries the change token it was read under: no separate token call, no read.
    expect(Object.fromEntries(counted.calls)).toEqual({ search: 1 });
    // A breaking version supersedes every value written before it: none may match, at once.
    await h.catalog.properties.update(ADMIN, { urn: TEAM, version: '20260101000000' });
    counted.reset();
    expect(await total()).toBe(0);
    // The first answer was read under a newer token with the old key; resolved again, then searched again.
    expect(counted.calls.get('search')).toBe(2);
    await h.catalog.properties.upsertValues(ADMIN, datasetUrn(3), { properties: [{ propertyUrn: TEAM, values: [{ string: 'sales' }] }] });
    counted.reset();
    expect(await total()).toBe(1);
    // The token moved but the resolution did not change: the first answer stands.
    expect(counted.calls.get('search')).toBe(1);
    counted.reset();
    expect(await total()).toBe(1);
    expect(Object.fromEntries(counted.calls)).toEqual({ search: 1 });
  });

  it('100 results with their structured properties and definitions cost a constant number of storage reads', async () => {
    const page = async (count: number) => {
      counted.reset();
      const data = dataOf<{
        scrollAcrossEntities: { searchResults: Array<{ entity: { structuredProperties: { properties: unknown[] } } }> };
      }>(
        await h.run(`{
          scrollAcrossEntities(input: { types: [DATASET], query: "*", count: ${count} }) {
            searchResults { entity { urn type ... on Dataset { status { removed } }
              structuredProperties { properties {
                structuredProperty { urn definition { qualifiedName displayName valueType { urn } entityTypes { urn } } }
                values { ... on StringValue { stringValue } ... on NumberValue { numberValue } }
              } }
            } }
          }
        }`),
      );
      expect(data.scrollAcrossEntities.searchResults).toHaveLength(count);
      for (const r of data.scrollAcrossEntities.searchResults) expect(r.entity.structuredProperties.properties).toHaveLength(2);
      return new Map(counted.calls);
    };
    const hundred = await page(100);
    // One search; the page's entities in one read (plus the catalog's read of their values' definitions
    // for visibility), then the two definitions in one more: not one read per result.
    expect(hundred.get('search')).toBe(1);
    expect(hundred.get('readEntities')).toBeLessThanOrEqual(3);
    // The change token (SQLite: PRAGMA data_version) tells whether cached definitions still hold.
    expect(hundred.get('changeToken') ?? 0).toBeLessThanOrEqual(2);
    const reads = [...hundred].filter(([method]) => method !== 'changeToken').reduce((a, [, n]) => a + n, 0);
    expect(reads, JSON.stringify([...hundred])).toBeLessThanOrEqual(4);
    // A smaller page reads no more (cached definitions may even spare a read).
    for (const [method, n] of await page(10)) expect(n, method).toBeLessThanOrEqual(hundred.get(method) ?? 0);
  });
});
