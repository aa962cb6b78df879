import type { PropertyValueIndex, SearchFilter, StorageAdapter } from '../adapter/types';
import type { ConformanceHarness } from './types';
import { aspect, createWrite, searchDocument, URN, withAdapter as withAnyAdapter } from './support';

const PROP = 'urn:li:structuredProperty:io.conformance.tier';
const OTHER = 'urn:li:structuredProperty:io.conformance.owner';
const KEY_V1 = 'tier#1';
const KEY_V2 = 'tier#2';

/** An adapter with the property-value index part. */
type WithValueIndex = StorageAdapter & PropertyValueIndex;

/**
 * `findEntitiesWithPropertyValues` / `countEntitiesWithPropertyValues` / `findEntitiesWithSeveralPropertyValues` over search documents built by
 * hand, as the domain derives them (see SearchDocumentProperty in the contract). The part is optional:
 * for an adapter that does not declare `capabilities.propertyValues` these tests are reported skipped
 * (the domain then answers by its own scan, which the catalog sections of the suite exercise).
 */
export function registerPropertyValueTests(harness: ConformanceHarness): void {
  const { describe, expect } = harness;
  const it = harness.capabilities.propertyValues ? harness.it : harness.skip;
  const withAdapter = (test: (adapter: WithValueIndex) => Promise<void>): Promise<void> =>
    withAnyAdapter(harness, (adapter) => test(adapter as WithValueIndex));

  /** a: PROP under v1; b: PROP under v2; c: PROP under v1, soft-deleted; alice: only OTHER; bob: no document. */
  async function seed(adapter: StorageAdapter): Promise<void> {
    const info = [aspect('info', { name: 'x' })];
    await adapter.commit({
      entities: [
        createWrite(URN.a, info, {
          searchDocument: searchDocument(URN.a, [{ propertyUrn: PROP, definitionKey: KEY_V1, values: ['gold'] }]),
        }),
        createWrite(URN.b, info, {
          searchDocument: searchDocument(URN.b, [{ propertyUrn: PROP, definitionKey: KEY_V2, values: [1, 2.5] }]),
        }),
        createWrite(URN.c, info, {
          searchDocument: searchDocument(URN.c, [{ propertyUrn: PROP, definitionKey: KEY_V1, values: ['silver'] }], true),
        }),
        createWrite(URN.alice, info, {
          searchDocument: searchDocument(URN.alice, [{ propertyUrn: OTHER, definitionKey: 'owner#1', values: ['x'] }]),
        }),
        createWrite(URN.bob, info),
      ],
    });
  }

  describe('entities with property values', () => {
    it('finds entities carrying values of a property, in URN order, soft-deleted ones included', async () => {
      await withAdapter(async (adapter) => {
        await seed(adapter);
        expect(await adapter.findEntitiesWithPropertyValues({ propertyUrn: PROP, limit: 100 })).toEqual([URN.a, URN.b, URN.c]);
        expect(await adapter.findEntitiesWithPropertyValues({ propertyUrn: OTHER, limit: 100 })).toEqual([URN.alice]);
        expect(await adapter.findEntitiesWithPropertyValues({ propertyUrn: 'urn:li:structuredProperty:none', limit: 100 })).toEqual([]);
      });
    });

    it('keeps values under keepDefinitionKey out and pages with afterUrn', async () => {
      await withAdapter(async (adapter) => {
        await seed(adapter);
        expect(await adapter.findEntitiesWithPropertyValues({ propertyUrn: PROP, keepDefinitionKey: KEY_V1, limit: 100 })).toEqual([URN.b]);
        expect(await adapter.findEntitiesWithPropertyValues({ propertyUrn: PROP, keepDefinitionKey: KEY_V2, limit: 100 })).toEqual([
          URN.a,
          URN.c,
        ]);
        expect(await adapter.findEntitiesWithPropertyValues({ propertyUrn: PROP, keepDefinitionKey: 'tier#9', limit: 100 })).toEqual([
          URN.a,
          URN.b,
          URN.c,
        ]);
        expect(await adapter.findEntitiesWithPropertyValues({ propertyUrn: PROP, limit: 2 })).toEqual([URN.a, URN.b]);
        expect(await adapter.findEntitiesWithPropertyValues({ propertyUrn: PROP, afterUrn: URN.a, limit: 1 })).toEqual([URN.b]);
        expect(
          await adapter.findEntitiesWithPropertyValues({ propertyUrn: PROP, keepDefinitionKey: KEY_V2, afterUrn: URN.a, limit: 10 }),
        ).toEqual([URN.c]);
      });
    });

    it('counts entities with values of a property, by definition key when given', async () => {
      await withAdapter(async (adapter) => {
        await seed(adapter);
        expect(await adapter.countEntitiesWithPropertyValues(PROP)).toBe(3);
        expect(await adapter.countEntitiesWithPropertyValues(PROP, KEY_V1)).toBe(2);
        expect(await adapter.countEntitiesWithPropertyValues(PROP, KEY_V2)).toBe(1);
        expect(await adapter.countEntitiesWithPropertyValues(PROP, 'tier#9')).toBe(0);
        expect(await adapter.countEntitiesWithPropertyValues(OTHER)).toBe(1);
        expect(await adapter.countEntitiesWithPropertyValues('urn:li:structuredProperty:none')).toBe(0);
      });
    });

    it('finds entities with several values under one definition key, soft-deleted ones included, and follows their documents', async () => {
      await withAdapter(async (adapter) => {
        await seed(adapter);
        const info = [aspect('info', { name: 'x' })];
        const several = (urn: string, values: Array<string | number>, removed = false) =>
          createWrite(urn, info, { searchDocument: searchDocument(urn, [{ propertyUrn: PROP, definitionKey: KEY_V1, values }], removed) });
        await adapter.commit({
          entities: [several(URN.upperB, ['gold', 'silver'], true), several(URN.unknown, ['gold', 'bronze', 'silver'])],
        });
        const find = (definitionKey: string, extra: { afterUrn?: string; limit?: number } = {}) =>
          adapter.findEntitiesWithSeveralPropertyValues({ propertyUrn: PROP, definitionKey, limit: 100, ...extra });
        // Only documents with more than one value under exactly this key: a (one value) and c (one, soft-deleted) are out.
        expect(await find(KEY_V1)).toEqual({ total: 2, urns: [URN.upperB, URN.unknown] });
        expect(await find(KEY_V2)).toEqual({ total: 1, urns: [URN.b] });
        expect(await find('tier#9')).toEqual({ total: 0, urns: [] });
        expect(await adapter.findEntitiesWithSeveralPropertyValues({ propertyUrn: OTHER, definitionKey: 'owner#1', limit: 10 })).toEqual({
          total: 0,
          urns: [],
        });
        expect(await find(KEY_V1, { limit: 1 })).toEqual({ total: 2, urns: [URN.upperB] });
        expect(await find(KEY_V1, { afterUrn: URN.upperB })).toEqual({ total: 2, urns: [URN.unknown] });
        expect(await find(KEY_V1, { limit: 0 })).toEqual({ total: 2, urns: [] });
        // A page far larger than the matches (an adapter may answer it another way than a small one).
        expect(await find(KEY_V1, { limit: 10_000 })).toEqual({ total: 2, urns: [URN.upperB, URN.unknown] });
        expect(await find(KEY_V1, { afterUrn: URN.upperB, limit: 10_000 })).toEqual({ total: 2, urns: [URN.unknown] });

        // Down to one value, then the entity deleted: each leaves the answer.
        await adapter.commit({
          entities: [
            {
              urn: URN.unknown,
              entityType: 'dataset',
              expectVersion: 1,
              put: [aspect('info', { name: 'y' }, 2)],
              searchDocument: searchDocument(URN.unknown, [{ propertyUrn: PROP, definitionKey: KEY_V1, values: ['gold'] }]),
            },
            { urn: URN.upperB, entityType: 'dataset', expectVersion: 1, deleteEntity: true, searchDocument: null },
          ],
        });
        expect(await find(KEY_V1)).toEqual({ total: 0, urns: [] });
        expect(await find(KEY_V2)).toEqual({ total: 1, urns: [URN.b] });
      });
    });

    it('with a filter, counts and lists only the multi-valued entities whose document also matches it', async () => {
      await withAdapter(async (adapter) => {
        const info = [aspect('info', { name: 'x' })];
        const holding = (urn: string, values: Array<string | number>, removed = false) =>
          createWrite(urn, info, { searchDocument: searchDocument(urn, [{ propertyUrn: PROP, definitionKey: KEY_V1, values }], removed) });
        await adapter.commit({
          entities: [
            holding(URN.a, ['gold', 'tin']),
            holding(URN.b, ['bronze', 'tin'], true),
            holding(URN.c, ['tin']),
            holding(URN.upperB, ['gold']),
            holding(URN.alice, ['silver', 'bronze']),
            createWrite(URN.bob, info, {
              searchDocument: searchDocument(URN.bob, [{ propertyUrn: OTHER, definitionKey: 'owner#1', values: ['tin', 'gold'] }]),
            }),
          ],
        });
        const field = { kind: 'property' as const, propertyUrn: PROP, definitionKey: KEY_V1, valueKind: 'string' as const };
        const equal = (...values: string[]) => ({ field, operator: 'EQUAL' as const, values, negated: false });
        const find = (filter: SearchFilter, extra: { afterUrn?: string; limit?: number } = {}) =>
          adapter.findEntitiesWithSeveralPropertyValues({ propertyUrn: PROP, definitionKey: KEY_V1, limit: 100, filter, ...extra });

        expect(await find([])).toEqual({ total: 3, urns: [URN.alice, URN.a, URN.b] });
        // c holds tin alone; b is soft-deleted and counts; bob's tin is under another property.
        expect(await find([[equal('tin')]])).toEqual({ total: 2, urns: [URN.a, URN.b] });
        expect(await find([[equal('tin')], [equal('silver')]])).toEqual({ total: 3, urns: [URN.alice, URN.a, URN.b] });
        expect(await find([[equal('tin'), equal('gold')]])).toEqual({ total: 1, urns: [URN.a] });
        expect(await find([[{ ...equal('gold'), negated: true }]])).toEqual({ total: 2, urns: [URN.alice, URN.b] });
        expect(await find([[{ field: { kind: 'entityType' }, operator: 'EQUAL', values: ['corpuser'], negated: false }]])).toEqual({
          total: 1,
          urns: [URN.alice],
        });
        expect(await find([[{ field: { kind: 'urn' }, operator: 'EQUAL', values: [URN.a, URN.c], negated: false }]])).toEqual({
          total: 1,
          urns: [URN.a],
        });
        expect(await find([[equal('lead')]])).toEqual({ total: 0, urns: [] });
        expect(await find([[equal('tin')]], { limit: 1 })).toEqual({ total: 2, urns: [URN.a] });
        expect(await find([[equal('tin')]], { afterUrn: URN.a })).toEqual({ total: 2, urns: [URN.b] });
        expect(await find([[equal('tin')]], { limit: 0 })).toEqual({ total: 2, urns: [] });
        expect(
          await adapter.findEntitiesWithSeveralPropertyValues({
            propertyUrn: PROP,
            definitionKey: 'tier#9',
            limit: 10,
            filter: [[equal('tin')]],
          }),
        ).toEqual({ total: 0, urns: [] });
      });
    });

    it('follows the search document: replaced, left as it is (undefined), removed (null), deleted with the entity', async () => {
      await withAdapter(async (adapter) => {
        await seed(adapter);
        const put = [aspect('info', { name: 'y' }, 2)];
        await adapter.commit({
          entities: [
            // a: values dropped; b: document untouched; c: document removed.
            { urn: URN.a, entityType: 'dataset', expectVersion: 1, put, searchDocument: searchDocument(URN.a, []) },
            { urn: URN.b, entityType: 'dataset', expectVersion: 1, put },
            { urn: URN.c, entityType: 'dataset', expectVersion: 1, put, searchDocument: null },
          ],
        });
        expect(await adapter.findEntitiesWithPropertyValues({ propertyUrn: PROP, limit: 100 })).toEqual([URN.b]);
        expect(await adapter.countEntitiesWithPropertyValues(PROP)).toBe(1);

        await adapter.commit({
          entities: [{ urn: URN.b, entityType: 'dataset', expectVersion: 2, deleteEntity: true, searchDocument: null }],
        });
        expect(await adapter.countEntitiesWithPropertyValues(PROP)).toBe(0);
        expect(await adapter.findEntitiesWithPropertyValues({ propertyUrn: PROP, limit: 100 })).toEqual([]);
      });
    });
  });
}
