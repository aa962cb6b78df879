import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADAPTERS, openHarness, type CompatHarness } from './harness';

/**
 * The GraphQL document `DataHubGraph.get_urns_by_filter` sends, copied from
 * metadata-ingestion/src/datahub/ingestion/graph/client.py (datahub-project/datahub).
 */
const SCROLL_URNS_WITH_FILTERS = `
query scrollUrnsWithFilters(
    $types: [EntityType!],
    $query: String!,
    $orFilters: [AndFilterInput!],
    $batchSize: Int!,
    $scrollId: String) {

    scrollAcrossEntities(input: {
        query: $query,
        count: $batchSize,
        scrollId: $scrollId,
        types: $types,
        orFilters: $orFilters,
        searchFlags: {
            skipHighlighting: true
            skipAggregates: true
        }
    }) {
        nextScrollId
        searchResults {
            entity {
                urn
            }
        }
    }
}
`;

/**
 * `_get_status_filter(RemovedStatusFilter.NOT_SOFT_DELETED).to_raw()` and its ONLY_SOFT_DELETED form,
 * from metadata-ingestion/src/datahub/ingestion/graph/filters.py.
 */
const NOT_SOFT_DELETED = { field: 'removed', condition: 'EQUAL', values: ['true'], negated: true };
const ONLY_SOFT_DELETED = { field: 'removed', condition: 'EQUAL', values: ['true'] };

/** `to_es_filter_name(qualified_name=...)` and the EXISTS rule of smoke-test/tests/structured_properties/test_structured_properties.py. */
const existsRule = (qualifiedName: string) => ({ field: `structuredProperties.${qualifiedName}`, negated: 'false', condition: 'EXISTS' });

const dataset = (name: string) => `urn:li:dataset:(urn:li:dataPlatform:snowflake,${name},PROD)`;
const NAMESPACE = 'io.acryl.privacy';

/** get_urns_by_filter: every page, as `_scroll_across_entities` follows nextScrollId. */
async function getUrnsByFilter(
  h: CompatHarness,
  options: { entityTypes?: string[]; extraFilters?: object[]; status?: object | null; batchSize?: number },
): Promise<string[]> {
  const and = [...(options.status === null ? [] : [options.status ?? NOT_SOFT_DELETED]), ...(options.extraFilters ?? [])];
  const variables: Record<string, unknown> = {
    types: options.entityTypes ?? null,
    query: '*',
    orFilters: [{ and }],
    batchSize: options.batchSize ?? 10000,
  };
  const urns: string[] = [];
  let scrollId: string | null = null;
  let first = true;
  while (first || scrollId) {
    first = false;
    const answer = await h.graphql(SCROLL_URNS_WITH_FILTERS, { ...variables, scrollId });
    expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
    const data = answer.data.scrollAcrossEntities as { nextScrollId: string | null; searchResults: Array<{ entity: { urn: string } }> };
    urns.push(...data.searchResults.map((r) => r.entity.urn));
    scrollId = data.nextScrollId;
  }
  return urns;
}

async function createProperty(h: CompatHarness, name: string): Promise<string> {
  const urn = `urn:li:structuredProperty:${NAMESPACE}.${name}`;
  // The definition create_property_definition builds, sent through the OpenAPI v2 aspect route.
  const body = {
    qualifiedName: `${NAMESPACE}.${name}`,
    valueType: 'urn:li:dataType:datahub.string',
    description: 'The retention policy for the dataset',
    entityTypes: ['urn:li:entityType:datahub.dataset'],
    cardinality: 'SINGLE',
  };
  const answer = await h.request('POST', `/openapi/v2/entity/structuredProperty/${encodeURIComponent(urn)}/propertyDefinition`, body);
  expect(answer.status).toBe(200);
  return urn;
}

async function assign(h: CompatHarness, urn: string, propertyUrn: string, value: string): Promise<void> {
  const answer = await h.request('POST', `/openapi/v2/entity/dataset/${encodeURIComponent(urn)}/structuredProperties`, {
    properties: [{ propertyUrn, values: [{ string: value }] }],
  });
  expect(answer.status).toBe(200);
}

describe.each(ADAPTERS)('DataHub SDK searches (%s)', (kind) => {
  let h: CompatHarness;
  beforeEach(async () => {
    h = await openHarness(kind);
  });
  afterEach(() => h.close());

  it('get_urns_by_filter with its default status filter (negated removed = true) is answered, soft-deleted entities left out', async () => {
    for (const name of ['a', 'b', 'c']) {
      expect(
        (await h.request('POST', `/openapi/v2/entity/dataset/${encodeURIComponent(dataset(name))}/datasetProperties`, { name })).status,
      ).toBe(200);
    }
    await h.request('POST', `/openapi/v2/entity/dataset/${encodeURIComponent(dataset('c'))}/status`, { removed: true });
    expect(await getUrnsByFilter(h, { entityTypes: ['DATASET'] })).toEqual([dataset('a'), dataset('b')]);
    expect(await getUrnsByFilter(h, { entityTypes: ['DATASET'], status: ONLY_SOFT_DELETED })).toEqual([dataset('c')]);
    // RemovedStatusFilter.ALL sends no status rule: the default (soft-deleted left out) holds.
    expect(await getUrnsByFilter(h, { entityTypes: ['DATASET'], status: null })).toEqual([dataset('a'), dataset('b')]);
    // Pages of one, as the scroll loop follows nextScrollId.
    expect(await getUrnsByFilter(h, { entityTypes: ['DATASET'], batchSize: 1 })).toEqual([dataset('a'), dataset('b')]);
    // The platform filter the SDK builds (`platform.keyword`).
    const platform = { field: 'platform.keyword', condition: 'EQUAL', values: ['urn:li:dataPlatform:snowflake'] };
    expect(await getUrnsByFilter(h, { extraFilters: [platform] })).toEqual([dataset('a'), dataset('b')]);
  });

  it('get_urns_by_filter(env=...) : the four OR groups _get_env_filters builds (origin, customProperties env= and instance=, env) run', async () => {
    // _get_env_filters(env) of filters.py, each group ANDed with the default status rule, as generate_filter distributes them.
    const envGroups = (env: string) => [
      { field: 'origin', value: env, condition: 'EQUAL' },
      { field: 'customProperties', value: `env=${env}` },
      { field: 'customProperties', value: `instance=${env}` },
      { field: 'env', value: env },
    ];
    await h.request('POST', `/openapi/v2/entity/dataset/${encodeURIComponent(dataset('prod_table'))}/datasetProperties`, {
      name: 'prod_table',
    });
    await h.request('POST', `/openapi/v2/entity/container/${encodeURIComponent('urn:li:container:db1')}/containerProperties`, {
      name: 'db1',
      customProperties: { env: 'DEV' },
    });
    await h.request('POST', `/openapi/v2/entity/dataFlow/${encodeURIComponent('urn:li:dataFlow:(airflow,nightly,prod)')}/dataFlowInfo`, {
      name: 'nightly',
      env: 'DEV',
    });
    const scroll = async (env: string) => {
      const answer = await h.graphql(SCROLL_URNS_WITH_FILTERS, {
        types: null,
        query: '*',
        orFilters: envGroups(env).map((rule) => ({ and: [NOT_SOFT_DELETED, rule] })),
        batchSize: 10000,
        scrollId: null,
      });
      expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
      return (answer.data.scrollAcrossEntities.searchResults as Array<{ entity: { urn: string } }>).map((r) => r.entity.urn);
    };
    expect(await scroll('PROD')).toEqual([dataset('prod_table')]);
    expect(await scroll('DEV')).toEqual(['urn:li:container:db1', 'urn:li:dataFlow:(airflow,nightly,prod)']);
  });

  it('test_dataset_structured_property_delete: after a hard delete the EXISTS search answers [] and the other property still matches', async () => {
    await h.request('POST', `/openapi/v2/entity/dataset/${encodeURIComponent(dataset('table_foo_1'))}/datasetProperties`, {
      name: 'table_foo_1',
    });
    const property1 = await createProperty(h, 'hardDeleteTest1Property');
    const property2 = await createProperty(h, 'hardDeleteTest2Property');
    await h.request('POST', `/openapi/v2/entity/dataset/${encodeURIComponent(dataset('table_foo_1'))}/structuredProperties`, {
      properties: [
        { propertyUrn: property1, values: [{ string: 'foo' }] },
        { propertyUrn: property2, values: [{ string: 'bar' }] },
      ],
    });
    const validateSearch = (qualifiedName: string) => getUrnsByFilter(h, { extraFilters: [existsRule(qualifiedName)] });
    expect(await validateSearch(`${NAMESPACE}.hardDeleteTest1Property`)).toEqual([dataset('table_foo_1')]);
    expect(await validateSearch(`${NAMESPACE}.hardDeleteTest2Property`)).toEqual([dataset('table_foo_1')]);

    expect((await h.request('DELETE', `/openapi/v2/entity/structuredProperty/${encodeURIComponent(property1)}`)).status).toBe(200);
    // Before the values' clean-up ran, and after it.
    expect(await validateSearch(`${NAMESPACE}.hardDeleteTest1Property`)).toEqual([]);
    expect(await validateSearch(`${NAMESPACE}.hardDeleteTest2Property`)).toEqual([dataset('table_foo_1')]);
    await h.catalog.settle();
    expect(await validateSearch(`${NAMESPACE}.hardDeleteTest1Property`)).toEqual([]);
    expect(await validateSearch(`${NAMESPACE}.hardDeleteTest2Property`)).toEqual([dataset('table_foo_1')]);
  });

  it('test_dataset_structured_property_soft_delete_search_filter_validation: a soft-deleted property is still refused', async () => {
    await h.request('POST', `/openapi/v2/entity/dataset/${encodeURIComponent(dataset('table_foo_2'))}/datasetProperties`, {
      name: 'table_foo_2',
    });
    const property = await createProperty(h, 'softDeleteSearchFilter1');
    await assign(h, dataset('table_foo_2'), property, 'x');
    expect(await getUrnsByFilter(h, { extraFilters: [existsRule(`${NAMESPACE}.softDeleteSearchFilter1`)] })).toEqual([
      dataset('table_foo_2'),
    ]);
    await h.request('POST', `/openapi/v2/entity/structuredProperty/${encodeURIComponent(property)}/status`, { removed: true });
    const answer = await h.graphql(SCROLL_URNS_WITH_FILTERS, {
      types: null,
      query: '*',
      orFilters: [{ and: [NOT_SOFT_DELETED, existsRule(`${NAMESPACE}.softDeleteSearchFilter1`)] }],
      batchSize: 10000,
      scrollId: null,
    });
    expect(answer.errors?.map((e) => e.extensions?.code)).toEqual(['INVALID_INPUT']);
    expect(answer.errors?.[0]?.message).not.toMatch(/datahub/i);
  });
});
