import type { FilterOperator, SearchCondition, SearchDocument, SearchField, SearchRequest, StorageAdapter } from '../adapter/types';
import { WrittenCatalog } from './search-random';
import { withAdapter } from './support';
import type { ConformanceHarness } from './types';

const TIER = 'urn:li:structuredProperty:io.conformance.tier';
const SCORE = 'urn:li:structuredProperty:io.conformance.score';
const CODE = 'urn:li:structuredProperty:io.conformance.code';
const ds = (name: string): string => `urn:li:dataset:(urn:li:dataPlatform:hive,${name},PROD)`;

interface DocOptions {
  entityType?: string;
  removed?: boolean;
  name?: string;
  description?: string;
  fields?: Record<string, string[]>;
  properties?: Array<[propertyUrn: string, definitionKey: string, values: Array<string | number>]>;
}

function doc(urn: string, options: DocOptions = {}): SearchDocument {
  return {
    urn,
    entityType: options.entityType ?? urn.split(':')[2]!,
    removed: options.removed ?? false,
    text: {
      urnKey: urn.split(':').slice(3).join(':'),
      ...(options.name !== undefined ? { name: options.name } : {}),
      ...(options.description !== undefined ? { description: options.description } : {}),
    },
    fields: options.fields ?? {},
    properties: (options.properties ?? []).map(([propertyUrn, definitionKey, values]) => ({ propertyUrn, definitionKey, values })),
  };
}

const property = (propertyUrn: string, definitionKey: string, valueKind: 'string' | 'number' = 'string'): SearchField => ({
  kind: 'property',
  propertyUrn,
  definitionKey,
  valueKind,
});
const when = (field: SearchField, operator: FilterOperator, values: Array<string | number>, negated = false): SearchCondition => ({
  field,
  operator,
  values,
  negated,
});

function request(scope: Partial<SearchRequest> = {}): SearchRequest {
  return { entityTypes: [], filter: [], includeRemoved: false, order: 'urn', limit: 100, ...scope };
}

async function urns(adapter: StorageAdapter, scope: Partial<SearchRequest>): Promise<string[]> {
  return (await adapter.search(request(scope))).hits.map((h) => h.urn);
}

/** Targeted checks of each rule of the search contract, one rule per test. */
export function registerSearchSemanticsTests(harness: ConformanceHarness): void {
  const { describe, it, expect } = harness;
  const run = (name: string, documents: SearchDocument[], test: (adapter: StorageAdapter) => Promise<void>): void => {
    it(name, async () => {
      await withAdapter(harness, async (adapter) => {
        await new WrittenCatalog(adapter).put(documents);
        await test(adapter);
      });
    });
  };

  describe('search semantics', () => {
    run(
      'matches property values only under the definition key asked for (superseded and deleted definitions never match)',
      [doc(ds('a'), { properties: [[TIER, 'k2', ['gold']]] }), doc(ds('b'), { properties: [[TIER, 'k1', ['gold']]] }), doc(ds('c'))],
      async (adapter) => {
        expect(await urns(adapter, { filter: [[when(property(TIER, 'k2'), 'EQUAL', ['gold'])]] })).toEqual([ds('a')]);
        expect(await urns(adapter, { filter: [[when(property(TIER, 'k2'), 'EXISTS', [])]] })).toEqual([ds('a')]);
        expect(await urns(adapter, { filter: [[when(property(TIER, 'k3'), 'EXISTS', [])]] })).toEqual([]);
        expect(await urns(adapter, { filter: [[when(property(TIER, 'k2'), 'EXISTS', [], true)]] })).toEqual([ds('b'), ds('c')]);
        const [facet] = await adapter.aggregate({ ...request(), facets: [property(TIER, 'k2')], maxValues: 10 });
        expect(facet!.buckets).toEqual([{ value: 'gold', count: 1 }]);
      },
    );

    run(
      'leaves soft-deleted entities out unless includeRemoved',
      [doc(ds('a')), doc(ds('b'), { removed: true, properties: [[TIER, 'k', ['x']]] })],
      async (adapter) => {
        expect(await urns(adapter, {})).toEqual([ds('a')]);
        expect(await urns(adapter, { includeRemoved: true })).toEqual([ds('a'), ds('b')]);
        expect((await adapter.search(request({ includeRemoved: true, filter: [[when(property(TIER, 'k'), 'EQUAL', ['x'])]] }))).total).toBe(
          1,
        );
        expect((await adapter.search(request({ filter: [[when(property(TIER, 'k'), 'EQUAL', ['x'])]] }))).total).toBe(0);
        const [facet] = await adapter.aggregate({ ...request(), facets: [{ kind: 'entityType' }], maxValues: 10 });
        expect(facet!.buckets).toEqual([{ value: 'dataset', count: 1 }]);
      },
    );

    run(
      'compares number values as numbers and string values as strings',
      [
        doc(ds('n9'), {
          properties: [
            [SCORE, 'k', [9]],
            [CODE, 'k', ['9']],
          ],
        }),
        doc(ds('n10'), {
          properties: [
            [SCORE, 'k', [10]],
            [CODE, 'k', ['10']],
          ],
        }),
        doc(ds('n45'), {
          properties: [
            [SCORE, 'k', [45]],
            [CODE, 'k', ['45']],
          ],
        }),
      ],
      async (adapter) => {
        const score = property(SCORE, 'k', 'number');
        const code = property(CODE, 'k');
        expect(await urns(adapter, { filter: [[when(score, 'GREATER_THAN', [9.5])]] })).toEqual([ds('n10'), ds('n45')]);
        expect(await urns(adapter, { filter: [[when(code, 'GREATER_THAN', ['9'])]] })).toEqual([]);
        expect(await urns(adapter, { filter: [[when(code, 'LESS_THAN', ['9'])]] })).toEqual([ds('n10'), ds('n45')]);
        expect(await urns(adapter, { filter: [[when(score, 'EQUAL', [45])]] })).toEqual([ds('n45')]);
        expect(await urns(adapter, { filter: [[when(score, 'EQUAL', ['45'])]] })).toEqual([]);
        expect(await urns(adapter, { filter: [[when(code, 'EQUAL', [45])]] })).toEqual([]);
        expect(await urns(adapter, { filter: [[when(score, 'LESS_THAN_OR_EQUAL_TO', [10])]] })).toEqual([ds('n10'), ds('n9')]);
        expect(await urns(adapter, { filter: [[when(score, 'GREATER_THAN_OR_EQUAL_TO', [50, 10])]] })).toEqual([ds('n10'), ds('n45')]);
        expect(await urns(adapter, { filter: [[when(score, 'CONTAIN', ['4'])]] })).toEqual([]);
      },
    );

    run(
      'orders facet buckets by count, then by value (numbers numerically, strings by code units), at most maxValues',
      [
        doc(ds('a'), {
          properties: [
            [SCORE, 'k', [10, 2]],
            [CODE, 'k', ['b', 'B', 'a']],
          ],
        }),
        doc(ds('b'), {
          properties: [
            [SCORE, 'k', [10]],
            [CODE, 'k', ['b']],
          ],
        }),
        doc(ds('c'), {
          properties: [
            [SCORE, 'k', [2, 2, 0.5]],
            [CODE, 'k', ['a']],
          ],
        }),
      ],
      async (adapter) => {
        const facets = await adapter.aggregate({
          ...request(),
          facets: [property(SCORE, 'k', 'number'), property(CODE, 'k')],
          maxValues: 20,
        });
        expect(facets[0]!.buckets).toEqual([
          { value: 2, count: 2 },
          { value: 10, count: 2 },
          { value: 0.5, count: 1 },
        ]);
        expect(facets[1]!.buckets).toEqual([
          { value: 'a', count: 2 },
          { value: 'b', count: 2 },
          { value: 'B', count: 1 },
        ]);
        const [limited] = await adapter.aggregate({ ...request(), facets: [property(CODE, 'k')], maxValues: 1 });
        expect(limited!.buckets).toEqual([{ value: 'a', count: 2 }]);
        const [filtered] = await adapter.aggregate({
          ...request({ filter: [[when(property(CODE, 'k'), 'EQUAL', ['B'])]] }),
          facets: [property(SCORE, 'k', 'number')],
          maxValues: 5,
        });
        expect(filtered!.buckets).toEqual([
          { value: 2, count: 1 },
          { value: 10, count: 1 },
        ]);
      },
    );

    run(
      'reports the total of all matches beside one page, with keyset (afterUrn) and offset paging',
      ['e', 'a', 'd', 'B', 'c'].map((name) => doc(ds(name))),
      async (adapter) => {
        const first = await adapter.search(request({ limit: 2 }));
        expect(first.total).toBe(5);
        expect(first.hits.map((h) => h.urn)).toEqual([ds('B'), ds('a')]);
        expect(await urns(adapter, { limit: 2, afterUrn: ds('a') })).toEqual([ds('c'), ds('d')]);
        expect(await urns(adapter, { limit: 2, afterUrn: ds('bb') })).toEqual([ds('c'), ds('d')]);
        expect(await urns(adapter, { order: 'relevance', offset: 3, limit: 10 })).toEqual([ds('d'), ds('e')]);
        expect((await adapter.search(request({ limit: 0 }))).hits).toEqual([]);
      },
    );

    run(
      'matches negated conditions on entities without the field, ORs groups and treats an empty group as everything',
      [doc(ds('a'), { properties: [[TIER, 'k', ['gold']]] }), doc(ds('b'), { properties: [[TIER, 'k', ['silver']]] }), doc(ds('c'))],
      async (adapter) => {
        const tier = property(TIER, 'k');
        expect(await urns(adapter, { filter: [[when(tier, 'EQUAL', ['gold'], true)]] })).toEqual([ds('b'), ds('c')]);
        expect(await urns(adapter, { filter: [[when(tier, 'EQUAL', ['gold'])], [when(tier, 'EXISTS', [], true)]] })).toEqual([
          ds('a'),
          ds('c'),
        ]);
        expect(await urns(adapter, { filter: [[when(tier, 'EQUAL', ['gold'])], []] })).toEqual([ds('a'), ds('b'), ds('c')]);
        expect(await urns(adapter, { filter: [[when(tier, 'IN', ['gold', 'silver']), when(tier, 'EQUAL', ['silver'], true)]] })).toEqual([
          ds('a'),
        ]);
        expect(await urns(adapter, { filter: [[when(tier, 'EQUAL', [])]] })).toEqual([]);
        expect(await urns(adapter, { filter: [[when(tier, 'EQUAL', [], true)]] })).toEqual([ds('a'), ds('b'), ds('c')]);
      },
    );

    run(
      'applies string operators to standard fields, URNs and entity types; IEQUAL lower-cases Unicode',
      [
        doc(ds('a'), { fields: { platform: ['urn:li:dataPlatform:hive'], name: ['ÉTÉ Orders'] } }),
        doc('urn:li:chart:(looker,sales)', { fields: { name: ['été orders'] } }),
        doc('urn:li:dataFlow:(airflow,daily,PROD)'),
      ],
      async (adapter) => {
        const name: SearchField = { kind: 'field', name: 'name' };
        expect(await urns(adapter, { filter: [[when(name, 'IEQUAL', ['été ORDERS'])]] })).toEqual(['urn:li:chart:(looker,sales)', ds('a')]);
        expect(await urns(adapter, { filter: [[when(name, 'EQUAL', ['été orders'])]] })).toEqual(['urn:li:chart:(looker,sales)']);
        expect(await urns(adapter, { filter: [[when(name, 'CONTAIN', ['O'])]] })).toEqual([ds('a')]);
        expect(await urns(adapter, { filter: [[when(name, 'END_WITH', ['orders'])]] })).toEqual(['urn:li:chart:(looker,sales)']);
        expect(await urns(adapter, { filter: [[when({ kind: 'urn' }, 'START_WITH', ['urn:li:dataset:'])]] })).toEqual([ds('a')]);
        expect(await urns(adapter, { filter: [[when({ kind: 'urn' }, 'EQUAL', ['urn:li:dataFlow:(airflow,daily,PROD)'])]] })).toEqual([
          'urn:li:dataFlow:(airflow,daily,PROD)',
        ]);
        expect(await urns(adapter, { filter: [[when({ kind: 'entityType' }, 'IN', ['chart', 'dataFlow'])]] })).toEqual([
          'urn:li:chart:(looker,sales)',
          'urn:li:dataFlow:(airflow,daily,PROD)',
        ]);
        expect(await urns(adapter, { entityTypes: ['chart', 'dataset'] })).toEqual(['urn:li:chart:(looker,sales)', ds('a')]);
        expect(await urns(adapter, { filter: [[when({ kind: 'field', name: 'platform' }, 'EXISTS', [])]] })).toEqual([ds('a')]);
      },
    );

    run(
      'full text: every term, stemmed, case- and accent-folded, stop words ignored, prefixes, URN key; never property values',
      [
        doc(ds('sales.customer_orders'), { name: 'Customer orders', description: 'One row per order line, refreshed at the café.' }),
        doc(ds('crm.customers'), { name: 'customers', description: 'The customer master table.', properties: [[TIER, 'k', ['ordering']]] }),
        doc(ds('finance.revenue'), { name: 'revenue', description: 'Daily revenue per region.' }),
      ],
      async (adapter) => {
        const text = async (query: string): Promise<string[]> => urns(adapter, { text: query });
        expect(await text('customer')).toEqual([ds('crm.customers'), ds('sales.customer_orders')]);
        expect(await text('customers order')).toEqual([ds('sales.customer_orders')]);
        expect(await text('CAFE')).toEqual([ds('sales.customer_orders')]);
        expect(await text('the customers')).toEqual([ds('crm.customers'), ds('sales.customer_orders')]);
        expect(await text('the')).toEqual([]);
        expect(await text('rev*')).toEqual([ds('finance.revenue')]);
        expect(await text('crm')).toEqual([ds('crm.customers')]);
        expect(await text('finance.revenue')).toEqual([ds('finance.revenue')]);
        expect(await text('ordering')).toEqual([ds('sales.customer_orders')]);
        expect(await text('nothing-here')).toEqual([]);
        expect((await adapter.search(request({ text: 'revenue customer', order: 'relevance' }))).total).toBe(0);
        expect((await adapter.search(request({ text: 'revenue OR', order: 'relevance' }))).total).toBe(1);
      },
    );

    run(
      'ranks a match in the name above a match in the description',
      [
        doc(ds('b_first'), { name: 'misc', description: 'holds some revenue figures and more words' }),
        doc(ds('z_last'), { name: 'revenue', description: 'figures' }),
      ],
      async (adapter) => {
        const result = await adapter.search(request({ text: 'revenue', order: 'relevance' }));
        expect(result.hits.map((h) => h.urn)).toEqual([ds('z_last'), ds('b_first')]);
        expect(result.hits[0]!.score! > result.hits[1]!.score!).toBe(true);
      },
    );
  });
}
