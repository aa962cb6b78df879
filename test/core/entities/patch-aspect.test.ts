import { afterEach, describe, expect, it } from 'vitest';
import { createCatalog, type Catalog } from '../../../src/index';
import { errorOf } from '../../support/errors';
import { adaptersWithPostgres } from '../../support/postgres';

const ADMIN = 'urn:li:corpuser:admin';
const READER = 'urn:li:corpuser:reader';
const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,orders,PROD)';
const RETENTION = 'urn:li:structuredProperty:io.acryl.privacy.retentionTime';

// PostgreSQL too when the shared test server answers.
const adapters = await adaptersWithPostgres('test/core/entities/patch-aspect.test.ts');
let catalog: Catalog | undefined;
afterEach(async () => {
  await catalog?.close();
  catalog = undefined;
});

for (const [kind, adapter] of Object.entries(adapters)) {
  describe(`entities.patchAspect (${kind})`, () => {
    const open = () => (catalog = createCatalog({ adapter: adapter(), superUsers: [ADMIN], jobs: { background: false } }));

    it('patches a generic aspect (absent: from {}), validates the result, and writes nothing when an operation fails', async () => {
      const c = open();
      const created = await c.entities.patchAspect(ADMIN, DATASET, 'datasetProperties', [
        { op: 'add', path: '/name', value: 'orders' },
        { op: 'add', path: '/customProperties', value: { owner: 'sales' } },
      ]);
      expect(created.aspects.datasetProperties?.value).toEqual({ name: 'orders', customProperties: { owner: 'sales' } });

      const patched = await c.entities.patchAspect(ADMIN, DATASET, 'datasetProperties', [
        { op: 'test', path: '/name', value: 'orders' },
        { op: 'replace', path: '/name', value: 'orders v2' },
        { op: 'remove', path: '/customProperties/owner' },
        { op: 'copy', from: '/name', path: '/description' },
      ]);
      expect(patched.aspects.datasetProperties?.value).toEqual({ name: 'orders v2', description: 'orders v2', customProperties: {} });
      expect(patched.aspects.datasetProperties?.version).toBe(2);

      const failedTest = await errorOf(
        c.entities.patchAspect(ADMIN, DATASET, 'datasetProperties', [
          { op: 'replace', path: '/name', value: 'x' },
          { op: 'test', path: '/name', value: 'orders' },
        ]),
      );
      expect(failedTest.code).toBe('CONFLICT');
      expect(failedTest.details[0]?.path).toBe('/patch/1');

      const missing = await errorOf(c.entities.patchAspect(ADMIN, DATASET, 'datasetProperties', [{ op: 'remove', path: '/externalUrl' }]));
      expect(missing).toMatchObject({ code: 'INVALID_INPUT', details: [{ path: '/patch/0' }] });

      const invalid = await errorOf(
        c.entities.patchAspect(ADMIN, DATASET, 'datasetProperties', [{ op: 'add', path: '/nmae', value: 'typo' }]),
      );
      expect(invalid.code).toBe('INVALID_INPUT');
      expect(invalid.message).toContain('nmae');

      const shape = await errorOf(c.entities.patchAspect(ADMIN, DATASET, 'datasetProperties', [{ op: 'add', path: '/name' } as never]));
      expect(shape.details).toEqual([{ path: '/patch/0/value', message: 'is required for add' }]);

      expect((await c.entities.getAspect(ADMIN, DATASET, 'datasetProperties'))?.value).toEqual({
        name: 'orders v2',
        description: 'orders v2',
        customProperties: {},
      });
    });

    it("addresses a keyed array by its elements' primary keys", async () => {
      const c = open();
      await c.entities.upsertAspect(ADMIN, DATASET, 'datasetProperties', { name: 'orders', tags: ['a', 'b'] });
      const view = await c.entities.patchAspect(
        ADMIN,
        DATASET,
        'datasetProperties',
        [
          { op: 'remove', path: '/tags/a' },
          { op: 'add', path: '/tags/c', value: 'c' },
        ],
        {
          arrayPrimaryKeys: { tags: [] },
        },
      );
      expect(view.aspects.datasetProperties?.value).toEqual({ name: 'orders', tags: ['b', 'c'] });
    });

    it('structuredProperties: the values patch, removing an absent property is a no-op (remove then add), authorized as value edits', async () => {
      const c = open();
      await c.properties.create(ADMIN, {
        qualifiedName: 'io.acryl.privacy.retentionTime',
        valueType: 'number',
        entityTypes: ['dataset'],
        cardinality: 'MULTIPLE',
      });
      const path = `/properties/${RETENTION}`;
      // metadata-ingestion/src/datahub/specific/aspect_helpers/structured_properties.py: set = remove (value {}) then add.
      const view = await c.entities.patchAspect(ADMIN, DATASET, 'structuredProperties', [
        { op: 'remove', path, value: {} },
        { op: 'add', path, value: { propertyUrn: RETENTION, values: [{ double: 30 }] } },
      ]);
      expect(view.aspects.structuredProperties?.value.properties).toEqual([
        expect.objectContaining({ propertyUrn: RETENTION, values: [{ double: 30 }] }),
      ]);
      const again = await c.entities.patchAspect(ADMIN, DATASET, 'structuredProperties', [
        { op: 'remove', path, value: {} },
        { op: 'add', path, value: { propertyUrn: RETENTION, values: [{ double: 90 }] } },
      ]);
      expect(again.aspects.structuredProperties?.value.properties).toEqual([expect.objectContaining({ values: [{ double: 90 }] })]);
      expect((await errorOf(c.entities.patchAspect(READER, DATASET, 'structuredProperties', [{ op: 'remove', path }]))).code).toBe(
        'FORBIDDEN',
      );
      expect(
        (await errorOf(c.entities.patchAspect(READER, DATASET, 'datasetProperties', [{ op: 'add', path: '/name', value: 'x' }]))).code,
      ).toBe('FORBIDDEN');
    });

    it('an owned aspect goes through its service (a property definition); a timeseries aspect is refused', async () => {
      const c = open();
      await c.properties.create(ADMIN, { qualifiedName: 'io.acryl.privacy.retentionTime', valueType: 'number', entityTypes: ['dataset'] });
      const view = await c.entities.patchAspect(ADMIN, RETENTION, 'propertyDefinition', [
        { op: 'add', path: '/displayName', value: 'Retention' },
      ]);
      expect(view.aspects.propertyDefinition?.value).toMatchObject({
        qualifiedName: 'io.acryl.privacy.retentionTime',
        displayName: 'Retention',
      });
      const breaking = await errorOf(
        c.entities.patchAspect(ADMIN, RETENTION, 'propertyDefinition', [
          { op: 'replace', path: '/valueType', value: 'urn:li:dataType:datahub.string' },
        ]),
      );
      // A breaking change without a newer version is refused by the definitions service, as a POST of the aspect is.
      expect(breaking.code).toBe('CONFLICT');
      expect((await c.entities.getAspect(ADMIN, RETENTION, 'propertyDefinition'))?.value.valueType).toBe('urn:li:dataType:datahub.number');
      const ts = await errorOf(c.entities.patchAspect(ADMIN, DATASET, 'datasetProfile', [{ op: 'add', path: '/rowCount', value: 1 }]));
      expect(ts.code).toBe('INVALID_INPUT');
    });
  });
}
