import { describe, expect, it } from 'vitest';
import { createCatalog, type Catalog, type StorageAdapter } from '../../../src/index';
import { adaptersWithPostgres } from '../../support/postgres';

const ADMIN = 'urn:li:corpuser:admin';
const DS = 'urn:li:dataset:(urn:li:dataPlatform:hive,unchanged,PROD)';
const adapters = await adaptersWithPostgres('test/core/entities/unchanged-writes.test.ts');

const open = (adapter: StorageAdapter): Catalog => createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false } });
const eventsOf = async (catalog: Catalog) => (await catalog.changes.read(ADMIN, {})).events.filter((e) => e.entityUrn === DS);

describe('writing an aspect equal to the stored one is a no-op', () => {
  for (const [kind, make] of Object.entries(adapters)) {
    it(`${kind}: no version, no event, no kept version on every write path; the writer's system metadata is kept`, async () => {
      const catalog = open(make());
      try {
        const value = { name: 'unchanged', description: 'the same every time', customProperties: { a: '1', b: '2' } };
        await catalog.entities.upsertAspect(ADMIN, DS, 'datasetProperties', value);
        expect(await eventsOf(catalog)).toHaveLength(1);

        // The same value again, through each path (keys in another order count as the same value).
        const reordered = { customProperties: { b: '2', a: '1' }, description: value.description, name: value.name };
        await catalog.entities.upsertAspect(ADMIN, DS, 'datasetProperties', reordered);
        await catalog.entities.upsertMany(ADMIN, [
          {
            urn: DS,
            aspects: { datasetProperties: value },
            systemMetadata: { datasetProperties: { runId: 'run-2', lastObserved: 1_800_000_000_000 } },
          },
        ]);
        await catalog.entities.applyProposals(ADMIN, [
          {
            entityUrn: DS,
            entityType: 'dataset',
            changeType: 'UPSERT',
            aspectName: 'datasetProperties',
            aspect: { value: JSON.stringify(value), contentType: 'application/json' },
          },
        ]);
        const view = await catalog.entities.get(ADMIN, DS, { systemMetadata: true });
        expect(view?.aspects.datasetProperties).toMatchObject({ version: 1, value });
        // DataHub keeps the writer's last run and observation time without a new version.
        expect(view?.aspects.datasetProperties?.systemMetadata).toMatchObject({ runId: 'run-2', lastObserved: 1_800_000_000_000 });
        expect(await eventsOf(catalog)).toHaveLength(1);
        // The history holds the one version written (the current one).
        expect((await catalog.entities.history(ADMIN, DS, 'datasetProperties')).map((v) => v.version)).toEqual([1]);

        // A changed value is a new version with its event, as before.
        await catalog.entities.upsertAspect(ADMIN, DS, 'datasetProperties', { ...value, description: 'changed' });
        expect((await catalog.entities.get(ADMIN, DS))?.aspects.datasetProperties?.version).toBe(2);
        expect(await eventsOf(catalog)).toHaveLength(2);
        expect((await catalog.entities.history(ADMIN, DS, 'datasetProperties')).map((v) => v.version)).toEqual([2, 1]);
      } finally {
        await catalog.close();
      }
    });
  }
});
