import { describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../../adapters/memory/index';
import { composeAdapter } from '../../../src/adapter/compose-adapter';
import { createScanSearchIndex } from '../../../src/adapter/scan-search-index';
import type { SearchFilter } from '../../../src/adapter/types';
import { EntityRegistry } from '../../../src/core/entities/registry';
import { propertyValueIndexOf } from '../../../src/core/entities/property-values';
import { createCatalog } from '../../../src/index';

const ADMIN = 'urn:li:corpuser:admin';
const dataset = (name: string): string => `urn:li:dataset:(urn:li:dataPlatform:hive,${name},PROD)`;
const TIER = 'urn:li:structuredProperty:io.test.tier';

/**
 * The domain's scan (for an adapter without the property-value index) answers exactly as the scan
 * search index does over the search documents (the contract's plain-JavaScript evaluation): values
 * under the current and a superseded key, soft-deleted holders, several values, a filter, paging.
 */
describe('the property-value questions without the adapter part', () => {
  it('are answered from the stored aspects as the search documents would answer them', async () => {
    const store = createMemoryAdapter();
    const adapter = composeAdapter({ entities: store });
    expect(adapter.capabilities.propertyValues).toBeUndefined();
    expect(adapter.countEntitiesWithPropertyValues).toBeUndefined();
    const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false } });
    try {
      await catalog.ready();
      await catalog.properties.create(ADMIN, {
        qualifiedName: 'io.test.tier',
        valueType: 'string',
        cardinality: 'MULTIPLE',
        entityTypes: ['dataset'],
      });
      const values = (...list: string[]) => ({ properties: [{ propertyUrn: TIER, values: list.map((string) => ({ string })) }] });
      await catalog.properties.upsertValues(ADMIN, dataset('a'), values('gold'));
      await catalog.properties.upsertValues(ADMIN, dataset('b'), values('gold', 'silver'));
      await catalog.properties.upsertValues(ADMIN, dataset('c'), values('bronze', 'silver'));
      await catalog.entities.upsertAspect(ADMIN, dataset('c'), 'status', { removed: true });
      const oldKey = (await catalog.properties.get(ADMIN, TIER))!.definitionKey;
      // A breaking change with a greater version supersedes the key; d is written under the new one.
      const definition = (await catalog.entities.get(ADMIN, TIER))!.aspects.propertyDefinition!.value;
      await catalog.entities.upsertAspect(ADMIN, TIER, 'propertyDefinition', {
        ...definition,
        cardinality: 'SINGLE',
        version: '20260101000000',
      });
      const newKey = (await catalog.properties.get(ADMIN, TIER))!.definitionKey;
      expect(newKey).not.toBe(oldKey);
      await catalog.properties.upsertValues(ADMIN, dataset('d'), values('gold'));

      const scan = propertyValueIndexOf(adapter, new EntityRegistry());
      const reference = createScanSearchIndex(store);
      const filter: SearchFilter = [[{ field: { kind: 'urn' }, operator: 'IN', values: [dataset('b')], negated: false }]];
      const questions = [
        (i: typeof scan) => i.countEntitiesWithPropertyValues(TIER),
        (i: typeof scan) => i.countEntitiesWithPropertyValues(TIER, oldKey),
        (i: typeof scan) => i.countEntitiesWithPropertyValues(TIER, newKey),
        (i: typeof scan) => i.countEntitiesWithPropertyValues('urn:li:structuredProperty:none'),
        (i: typeof scan) => i.findEntitiesWithPropertyValues({ propertyUrn: TIER, limit: 10 }),
        (i: typeof scan) => i.findEntitiesWithPropertyValues({ propertyUrn: TIER, keepDefinitionKey: newKey, limit: 10 }),
        (i: typeof scan) => i.findEntitiesWithPropertyValues({ propertyUrn: TIER, afterUrn: dataset('a'), limit: 1 }),
        (i: typeof scan) => i.findEntitiesWithSeveralPropertyValues({ propertyUrn: TIER, definitionKey: oldKey, limit: 10 }),
        (i: typeof scan) =>
          i.findEntitiesWithSeveralPropertyValues({ propertyUrn: TIER, definitionKey: oldKey, afterUrn: dataset('b'), limit: 10 }),
        (i: typeof scan) => i.findEntitiesWithSeveralPropertyValues({ propertyUrn: TIER, definitionKey: oldKey, limit: 10, filter }),
      ];
      const answers = await Promise.all(questions.map((ask) => ask(scan)));
      expect(answers).toEqual(await Promise.all(questions.map((ask) => ask(reference))));
      // Not vacuous: the answers hold what was written.
      expect(answers[4]).toEqual([dataset('a'), dataset('b'), dataset('c'), dataset('d')]);
      expect(answers[7]).toEqual({ total: 2, urns: [dataset('b'), dataset('c')] });
      expect(answers[9]).toEqual({ total: 1, urns: [dataset('b')] });
    } finally {
      await catalog.close();
    }
  });
});
