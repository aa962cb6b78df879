import { describe, expect, it } from 'vitest';
import { freshAdapters } from '../../support/adapters';
import { createCatalog, type CatalogError } from '../../../src/index';

const ADMIN = 'urn:li:corpuser:admin';
const TAGGER = 'urn:li:corpuser:tagger';
const TIER = 'urn:li:structuredProperty:bulk.tier';
const dataset = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,bulk.t${i},PROD)`;
const ADAPTERS = freshAdapters();

async function open(kind: string) {
  const catalog = createCatalog({
    adapter: ADAPTERS[kind as keyof typeof ADAPTERS](),
    superUsers: [ADMIN],
    policies: [{ name: 'taggers', actors: [TAGGER], privileges: ['EDIT_ENTITY_PROPERTIES'] }],
    jobs: { background: false },
  });
  await catalog.properties.create(ADMIN, {
    qualifiedName: 'bulk.tier',
    valueType: 'string',
    entityTypes: ['dataset'],
    allowedValues: [{ value: { string: 'gold' } }, { value: { string: 'silver' } }],
  });
  return catalog;
}

const tier = (value: string) => ({ properties: [{ propertyUrn: TIER, values: [{ string: value }] }] });

describe.each(Object.keys(ADAPTERS))('upsertMany of whole entities, structured properties included (%s)', (kind) => {
  it('writes other aspects and structured properties together, readable and searchable at once', async () => {
    const catalog = await open(kind);
    await catalog.entities.upsertMany(
      ADMIN,
      [0, 1, 2].map((i) => ({
        urn: dataset(i),
        aspects: { datasetProperties: { name: `t${i}` }, structuredProperties: tier(i === 1 ? 'silver' : 'gold') },
      })),
    );
    expect(await catalog.properties.getValues(ADMIN, dataset(1))).toEqual([
      expect.objectContaining({ propertyUrn: TIER, values: [{ string: 'silver' }] }),
    ]);
    expect((await catalog.entities.get(ADMIN, dataset(2)))?.aspects.datasetProperties?.value).toEqual({ name: 't2' });
    const found = await catalog.search.scroll(ADMIN, {
      types: ['DATASET'],
      orFilters: [{ and: [{ field: 'structuredProperties.bulk.tier', values: ['gold'] }] }],
    });
    expect(found.searchResults.map((r) => r.entity.urn).sort()).toEqual([dataset(0), dataset(2)]);
    await catalog.close();
  });

  it('an invalid value refuses the whole chunk, naming the item; nothing of it is written', async () => {
    const catalog = await open(kind);
    const error = (await catalog.entities
      .upsertMany(ADMIN, [
        { urn: dataset(0), aspects: { datasetProperties: { name: 't0' }, structuredProperties: tier('gold') } },
        { urn: dataset(1), aspects: { datasetProperties: { name: 't1' }, structuredProperties: tier('bronze') } },
      ])
      .catch((e: unknown) => e)) as CatalogError;
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.details.map((d) => d.path)).toEqual(['/1/aspects/structuredProperties/properties/0/values/0']);
    expect(await catalog.entities.get(ADMIN, dataset(0))).toBeUndefined();
    await catalog.close();
  });

  it('structured properties alone need EDIT_ENTITY_PROPERTIES; other aspects beside them need EDIT_ENTITY too', async () => {
    const catalog = await open(kind);
    await catalog.entities.upsertMany(TAGGER, [{ urn: dataset(0), aspects: { structuredProperties: tier('gold') } }]);
    expect(await catalog.properties.getValues(ADMIN, dataset(0))).toEqual([
      expect.objectContaining({ propertyUrn: TIER, values: [{ string: 'gold' }] }),
    ]);
    await expect(
      catalog.entities.upsertMany(TAGGER, [
        { urn: dataset(1), aspects: { datasetProperties: { name: 'x' }, structuredProperties: tier('gold') } },
      ]),
    ).rejects.toMatchObject({
      code: 'FORBIDDEN',
      reason: 'EDIT_ENTITY',
    });
    await expect(
      catalog.entities.upsertMany('urn:li:corpuser:nobody', [{ urn: dataset(1), aspects: { structuredProperties: tier('gold') } }]),
    ).rejects.toMatchObject({
      code: 'FORBIDDEN',
      reason: 'EDIT_ENTITY_PROPERTIES',
    });
    expect(await catalog.entities.get(ADMIN, dataset(1))).toBeUndefined();
    await catalog.close();
  });

  it('an oversized batch is refused naming the limit', async () => {
    const catalog = await open(kind);
    const items = Array.from({ length: 100_001 }, (_, i) => ({ urn: dataset(i), aspects: { datasetProperties: { name: 'x' } } }));
    await expect(catalog.entities.upsertMany(ADMIN, items)).rejects.toThrow(/at most 100000 entities, got 100001/);
    await catalog.close();
  });
});
