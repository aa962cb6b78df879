import { describe, expect, it } from 'vitest';
import { ADAPTERS, ANA, createAdapter, createHarness, dataOf } from './support';

const ORDERS = 'urn:li:dataset:(urn:li:dataPlatform:hive,orders,PROD)';

describe.each(ADAPTERS)('StructuredPropertiesEntry.history (%s)', (kind) => {
  it('lists each value the property had, who set it and when, newest first', async () => {
    let now = 1_700_000_000_000;
    const h = createHarness(createAdapter(kind), { clock: () => now });
    try {
      const tier = (
        await h.catalog.properties.create('urn:li:corpuser:admin', {
          qualifiedName: 'gql.tier',
          valueType: 'string',
          entityTypes: ['dataset'],
        })
      ).urn;
      await h.catalog.properties.upsertValues(ANA, ORDERS, { properties: [{ propertyUrn: tier, values: [{ string: 'gold' }] }] });
      now += 5000;
      await h.catalog.properties.upsertValues('urn:li:corpuser:admin', ORDERS, {
        properties: [{ propertyUrn: tier, values: [{ string: 'silver' }] }],
      });
      const data = dataOf<{ dataset: { structuredProperties: { properties: Array<{ history: unknown[] }> } } }>(
        await h.run(`{ dataset(urn: "${ORDERS}") { structuredProperties { properties { history {
          values { ... on StringValue { stringValue } } actor time definitionVersion aspectVersion current } } } } }`),
      );
      expect(data.dataset.structuredProperties.properties[0]!.history).toEqual([
        {
          values: [{ stringValue: 'silver' }],
          actor: 'urn:li:corpuser:admin',
          time: 1_700_000_005_000,
          definitionVersion: null,
          aspectVersion: 2,
          current: true,
        },
        {
          values: [{ stringValue: 'gold' }],
          actor: ANA,
          time: 1_700_000_000_000,
          definitionVersion: null,
          aspectVersion: 1,
          current: false,
        },
      ]);
    } finally {
      await h.close();
    }
  });
});
