import { describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../../adapters/memory/index';
import { createCatalog, type StorageAdapter } from '../../../src/index';
import { upsertStructuredPropertiesFromGraphql } from '../../../src/graphql/property-input';

/**
 * A write is authorized once, in the write path: an actor whose privileges come from a stored policy
 * costs one look at the access state per check (one question to the change feed: did a policy change?),
 * so each write below looks exactly once (before the write path took admissions, a value upsert checked
 * EDIT_ENTITY_PROPERTIES twice: in its service and again in the pipeline). The stored policies themselves
 * are compiled once per change: no write below reads them again.
 */

const ADMIN = 'urn:li:corpuser:admin';
const STEWARD = 'urn:li:corpuser:steward';
const TIER = 'urn:li:structuredProperty:io.example.tier';
const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,db.orders,PROD)';

async function open() {
  const inner = createMemoryAdapter();
  let policyReads = 0;
  let accessLooks = 0;
  const adapter: StorageAdapter = {
    ...inner,
    scanEntities(request) {
      if (request.entityType === 'policy') policyReads++;
      return inner.scanEntities(request);
    },
    readChanges(request) {
      if (request.entityTypes?.includes('policy')) accessLooks++;
      return inner.readChanges!(request);
    },
  };
  const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false } });
  await catalog.policies.create(ADMIN, {
    name: 'stewards',
    privileges: ['EDIT_ENTITY_PROPERTIES', 'MANAGE_STRUCTURED_PROPERTIES', 'EDIT_ENTITY'],
    actors: { users: [STEWARD] },
  });
  await catalog.properties.create(ADMIN, {
    qualifiedName: 'io.example.tier',
    valueType: 'string',
    entityTypes: ['dataset'],
    cardinality: 'MULTIPLE',
  });
  await catalog.entities.upsertAspect(ADMIN, DATASET, 'datasetProperties', { name: 'orders' });
  // The first check after the policy was stored compiles the policies (one read of them); the writes below find them compiled.
  await catalog.entities.upsertAspect(STEWARD, DATASET, 'datasetProperties', { name: 'orders' });
  expect(policyReads).toBe(1);
  /** The looks at the access state one call makes (and, apart, how often it read the stored policies). */
  const readsOf = async (call: () => Promise<unknown>): Promise<number | string> => {
    const [looks, reads] = [accessLooks, policyReads];
    await call();
    return policyReads === reads ? accessLooks - looks : `${accessLooks - looks} looks, ${policyReads - reads} policy reads`;
  };
  return { catalog, readsOf };
}

describe('a write is authorized once, in the write path', () => {
  it('value upserts (both spellings), removal, patch, bulk values, a definition update and a generic write each check their privilege once', async () => {
    const { catalog, readsOf } = await open();
    const counts = {
      upsertValues: await readsOf(() =>
        catalog.properties.upsertValues(STEWARD, DATASET, { properties: [{ propertyUrn: TIER, values: [{ string: 'gold' }] }] }),
      ),
      upsertValuesGraphql: await readsOf(() =>
        upsertStructuredPropertiesFromGraphql(catalog, STEWARD, DATASET, [
          { structuredPropertyUrn: TIER, values: [{ stringValue: 'silver' }] },
        ]),
      ),
      patchValues: await readsOf(() =>
        catalog.properties.patchValues(STEWARD, DATASET, {
          patch: [
            { op: 'add', path: `/properties/${TIER.replace(/\//g, '~1')}`, value: { propertyUrn: TIER, values: [{ string: 'bronze' }] } },
          ],
        }),
      ),
      removeValues: await readsOf(() => catalog.properties.removeValues(STEWARD, DATASET, [TIER])),
      upsertValuesMany: await readsOf(() =>
        catalog.properties.upsertValuesMany(STEWARD, [{ urn: DATASET, properties: [{ propertyUrn: TIER, values: [{ string: 'gold' }] }] }]),
      ),
      update: await readsOf(() => catalog.properties.update(STEWARD, { urn: TIER, description: 'the tier' })),
      upsertAspect: await readsOf(() => catalog.entities.upsertAspect(STEWARD, DATASET, 'datasetProperties', { name: 'orders v2' })),
    };
    expect(counts).toEqual({
      upsertValues: 1,
      upsertValuesGraphql: 1,
      patchValues: 1,
      removeValues: 1,
      upsertValuesMany: 1,
      update: 1,
      upsertAspect: 1,
    });
    expect((await catalog.properties.getValues(STEWARD, DATASET)).map((a) => a.values)).toEqual([[{ string: 'gold' }]]);
    await catalog.close();
  });

  it('an actor without the privilege is refused before anything is written, once', async () => {
    const { catalog, readsOf } = await open();
    const outsider = 'urn:li:corpuser:outsider';
    let refusal: unknown;
    const reads = await readsOf(() =>
      catalog.properties
        .upsertValues(outsider, DATASET, { properties: [{ propertyUrn: TIER, values: [{ string: 'x' }] }] })
        .catch((error: unknown) => {
          refusal = error;
        }),
    );
    expect((refusal as { code?: string }).code).toBe('FORBIDDEN');
    expect(reads).toBe(1);
    expect(await catalog.properties.getValues(ADMIN, DATASET)).toEqual([]);
    await catalog.close();
  });
});
