import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADAPTERS, ADMIN, ANA, codesOf, countingAdapter, createAdapter, createHarness, dataOf, type Harness } from './support';

const ORDERS = 'urn:li:dataset:(urn:li:dataPlatform:hive,sales.orders,PROD)';
const FLOW = 'urn:li:dataFlow:(airflow,daily_sales,PROD)';
const MISSING = 'urn:li:dataset:(urn:li:dataPlatform:hive,never_written,PROD)';

describe.each(ADAPTERS)('GraphQL entity reads (%s)', (kind) => {
  let h: Harness;
  let counted: ReturnType<typeof countingAdapter>;
  beforeEach(async () => {
    counted = countingAdapter(createAdapter(kind));
    h = createHarness(counted.adapter);
    await h.catalog.entities.upsertMany(ADMIN, [
      { urn: ORDERS, aspects: { datasetProperties: { name: 'orders' }, status: { removed: false } } },
      { urn: FLOW, aspects: { dataFlowInfo: { name: 'daily sales' }, status: { removed: true } } },
    ]);
  });
  afterEach(() => h.close());

  it('entity(urn) resolves the concrete type through the Entity interface', async () => {
    const data = dataOf(
      await h.run(`{
        d: entity(urn: "${ORDERS}") { __typename urn type ... on Dataset { status { removed } } }
        f: entity(urn: "${FLOW}") { __typename urn type ... on DataFlow { status { removed } } }
        none: entity(urn: "${MISSING}") { urn }
      }`),
    );
    expect(data).toEqual({
      d: { __typename: 'Dataset', urn: ORDERS, type: 'DATASET', status: { removed: false } },
      f: { __typename: 'DataFlow', urn: FLOW, type: 'DATA_FLOW', status: { removed: true } },
      none: null,
    });
  });

  it('dataset(urn) and dataFlow(urn) read their type and refuse a URN of another type', async () => {
    expect(dataOf(await h.run(`{ dataset(urn: "${ORDERS}") { urn type } dataFlow(urn: "${FLOW}") { urn type } }`))).toEqual({
      dataset: { urn: ORDERS, type: 'DATASET' },
      dataFlow: { urn: FLOW, type: 'DATA_FLOW' },
    });
    expect(dataOf(await h.run(`{ dataset(urn: "${MISSING}") { urn } }`))).toEqual({ dataset: null });
    const wrong = await h.run(`{ dataset(urn: "${FLOW}") { urn } dataFlow(urn: "not a urn") { urn } }`);
    expect(codesOf(wrong)).toEqual(['INVALID_INPUT', 'INVALID_INPUT']);
  });

  it('a malformed URN is INVALID_INPUT for that field only', async () => {
    const result = await h.run(`{ bad: entity(urn: "urn:li:dataset") { urn } good: entity(urn: "${ORDERS}") { urn } }`);
    expect(codesOf(result)).toEqual(['INVALID_INPUT']);
    expect(result.errors?.[0]?.path).toEqual(['bad']);
    expect(result.data).toEqual({ bad: null, good: { urn: ORDERS } });
  });

  it('an entity without structured properties has an empty list; users have a username', async () => {
    await h.catalog.entities.upsertAspect(ADMIN, ANA, 'corpUserInfo', { displayName: 'Ana' });
    const data = dataOf(
      await h.run(`{
        entity(urn: "${ORDERS}") { structuredProperties { properties { associatedUrn } } }
        user: entity(urn: "${ANA}") { type ... on CorpUser { username } }
      }`),
    );
    expect(data).toEqual({ entity: { structuredProperties: { properties: [] } }, user: { type: 'CORP_USER', username: 'ana' } });
  });

  it('the entities of one request level are read in one batch, each once', async () => {
    const urns = Array.from({ length: 50 }, (_, i) => `urn:li:dataset:(urn:li:dataPlatform:hive,t${i},PROD)`);
    await h.catalog.entities.upsertMany(
      ADMIN,
      urns.map((urn) => ({ urn, aspects: { status: { removed: false } } })),
    );
    counted.reset();
    const fields = urns.map(
      (urn, i) =>
        `e${i}: entity(urn: "${urn}") { urn ... on Dataset { status { removed } structuredProperties { properties { associatedUrn } } } }`,
    );
    const again = urns.slice(0, 10).map((urn, i) => `again${i}: dataset(urn: "${urn}") { urn }`);
    const data = dataOf<Record<string, { urn: string } | null>>(await h.run(`{ ${[...fields, ...again].join('\n')} }`));
    expect(Object.values(data).filter(Boolean)).toHaveLength(60);
    expect(counted.calls.get('readEntities')).toBe(1);
  });
});
