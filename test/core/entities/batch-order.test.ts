import { afterEach, describe, expect, it } from 'vitest';
import { createCatalog, type Catalog } from '../../../src/index';
import { errorOf } from '../../support/errors';
import { adaptersWithPostgres } from '../../support/postgres';

/**
 * Inside one batch, each item of an entity is planned on the entity as the batch's earlier items left
 * it: what they wrote, what they deleted, the entity's own deletion, whatever other entities' items lie
 * between them. Structured property values are checked (immutable ones) against that entity too.
 */

const ADMIN = 'urn:li:corpuser:admin';
const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,orders,PROD)';
const OTHER = 'urn:li:dataset:(urn:li:dataPlatform:hive,customers,PROD)';
const FIXED = 'urn:li:structuredProperty:batch.fixed';
const SEALED = 'urn:li:structuredProperty:batch.sealed';

const adapters = await adaptersWithPostgres('test/core/entities/batch-order.test.ts');
let catalog: Catalog | undefined;
afterEach(async () => {
  await catalog?.close();
  catalog = undefined;
});

const proposal = (entityUrn: string, aspectName: string, value: unknown, changeType = 'UPSERT') => ({
  entityType: 'dataset',
  entityUrn,
  changeType,
  aspectName,
  aspect: { value: JSON.stringify(value), contentType: changeType === 'PATCH' ? 'application/json-patch+json' : 'application/json' },
});
const deletion = (entityUrn: string, aspectName: string) => ({ entityType: 'dataset', entityUrn, changeType: 'DELETE', aspectName });
const values = (...assignments: Array<[string, string]>) => ({
  properties: assignments.map(([propertyUrn, value]) => ({ propertyUrn, values: [{ string: value }] })),
});

for (const [kind, adapter] of Object.entries(adapters)) {
  describe(`the order of a batch (${kind})`, () => {
    const open = async () => {
      const c = (catalog = createCatalog({ adapter: adapter(), superUsers: [ADMIN], jobs: { background: false } }));
      for (const id of ['fixed', 'sealed'])
        await c.properties.create(ADMIN, { qualifiedName: `batch.${id}`, valueType: 'string', entityTypes: ['dataset'], immutable: true });
      return c;
    };

    it('a later item sees what the earlier ones wrote and deleted, with other entities between them', async () => {
      const c = await open();
      await c.entities.upsertAspect(ADMIN, DATASET, 'datasetProperties', { name: 'old', description: 'kept' });
      await c.entities.applyProposals(ADMIN, [
        proposal(DATASET, 'datasetProperties', [{ op: 'add', path: '/name', value: 'one' }], 'PATCH'),
        proposal(OTHER, 'datasetProperties', { name: 'other' }),
        proposal(DATASET, 'status', { removed: false }),
        deletion(DATASET, 'datasetProperties'),
        proposal(OTHER, 'datasetProperties', [{ op: 'add', path: '/description', value: 'seen' }], 'PATCH'),
        proposal(DATASET, 'datasetProperties', [{ op: 'add', path: '/name', value: 'two' }], 'PATCH'),
      ]);
      expect((await c.entities.get(ADMIN, DATASET))?.aspects.datasetProperties?.value).toEqual({ name: 'two' });
      expect((await c.entities.get(ADMIN, DATASET))?.aspects.status?.value).toEqual({ removed: false });
      expect((await c.entities.get(ADMIN, OTHER))?.aspects.datasetProperties?.value).toEqual({ name: 'other', description: 'seen' });
    });

    it('values are checked against the stored ones when the batch changed only other aspects of the entity', async () => {
      const c = await open();
      await c.entities.upsertMany(ADMIN, [{ urn: DATASET, aspects: { structuredProperties: values([FIXED, 'a']) } }]);
      const error = await errorOf(
        c.entities.upsertMany(ADMIN, [
          { urn: DATASET, aspects: { datasetProperties: { name: 'orders' }, structuredProperties: values([FIXED, 'b']) } },
        ]),
      );
      expect(error.details).toEqual([
        {
          path: '/aspects/structuredProperties/properties/0/values',
          message: `${FIXED} is immutable: once set, its values cannot be changed`,
        },
      ]);
      expect((await c.entities.get(ADMIN, DATASET))?.aspects.datasetProperties).toBeUndefined();
    });

    it('values see the entity deleted earlier in the batch, and the values an earlier item of the batch set', async () => {
      const c = await open();
      await c.entities.upsertMany(ADMIN, [{ urn: DATASET, aspects: { structuredProperties: values([FIXED, 'a']) } }]);
      // The entity goes first: its immutable value goes with it, so the batch may set another.
      await c.entities.applyProposals(ADMIN, [
        deletion(DATASET, 'datasetKey'),
        proposal(OTHER, 'datasetProperties', { name: 'other' }),
        proposal(DATASET, 'structuredProperties', values([FIXED, 'b'])),
      ]);
      expect((await c.properties.getValues(ADMIN, DATASET)).map((a) => [a.propertyUrn, a.values])).toEqual([[FIXED, [{ string: 'b' }]]]);
      // A value the batch's first patch sets is immutable for its second one.
      const error = await errorOf(
        c.entities.patchMany(ADMIN, [
          {
            urn: DATASET,
            aspect: 'structuredProperties',
            patch: [{ op: 'add', path: `/properties/${SEALED}`, value: { values: [{ string: 'x' }] } }],
          },
          { urn: OTHER, aspect: 'datasetProperties', patch: [{ op: 'add', path: '/name', value: 'between' }] },
          {
            urn: DATASET,
            aspect: 'structuredProperties',
            patch: [{ op: 'add', path: `/properties/${SEALED}`, value: { values: [{ string: 'y' }] } }],
          },
        ]),
      );
      expect(error.details.map((d) => d.message)).toEqual([`${SEALED} is immutable: once set, its values cannot be changed`]);
      expect((await c.properties.getValues(ADMIN, DATASET)).map((a) => a.propertyUrn)).toEqual([FIXED]);
      expect((await c.entities.get(ADMIN, OTHER))?.aspects.datasetProperties?.value).toEqual({ name: 'other' });
    });
  });
}
