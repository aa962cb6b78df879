import { afterEach, describe, expect, it } from 'vitest';
import { createCatalog, type Catalog } from '../../../src/index';
import { freshAdapters } from '../../support/adapters';
import { errorOf } from '../../support/errors';

/**
 * `catalog.entities`: system metadata a writer sends (kept, read back on request, never the catalog's
 * own bookkeeping), writes only-if-absent, `exists`, and the atomic `deleteAspects`.
 */

const ADMIN = 'urn:li:corpuser:admin';
const READER = 'urn:li:corpuser:reader';
const A = 'urn:li:dataset:(urn:li:dataPlatform:hive,conditions.a,PROD)';
const B = 'urn:li:dataset:(urn:li:dataPlatform:hive,conditions.b,PROD)';
const KEY = 'a-token-signing-key-for-these-tests-0123456789';

const adapters = freshAdapters();
let catalog: Catalog | undefined;
afterEach(async () => {
  await catalog?.close();
  catalog = undefined;
});

for (const [kind, adapter] of Object.entries(adapters)) {
  describe(`entity write conditions and system metadata (${kind})`, () => {
    const open = () =>
      (catalog = createCatalog({ adapter: adapter(), superUsers: [ADMIN], tokenSigningKey: KEY, jobs: { background: false } }));

    it('keeps the system metadata a writer sends and reads it back only when asked, with version and stamps', async () => {
      const c = open();
      const [written] = await c.entities.upsertMany(
        ADMIN,
        [
          {
            urn: A,
            aspects: { datasetProperties: { name: 'a' } },
            systemMetadata: { datasetProperties: { runId: 'r1', lastObserved: 5, properties: { k: 'v' }, version: '99' } },
          },
        ],
        { systemMetadata: true },
      );
      expect(written?.aspects.datasetProperties?.systemMetadata).toEqual({
        lastObserved: 5,
        runId: 'r1',
        lastRunId: 'no-run-id-provided',
        properties: { k: 'v' },
        version: '1',
        aspectCreated: written?.aspects.datasetProperties?.created,
        aspectModified: written?.aspects.datasetProperties?.lastModified,
      });
      expect((await c.entities.get(READER, A))?.aspects.datasetProperties?.systemMetadata).toBeUndefined();
      expect((await c.entities.getMany(READER, [A], { systemMetadata: true }))[0]?.aspects.datasetProperties?.systemMetadata?.runId).toBe(
        'r1',
      );
      // The next write without system metadata replaces it.
      await c.entities.upsertAspect(ADMIN, A, 'datasetProperties', { name: 'a2' });
      expect((await c.entities.get(READER, A, { systemMetadata: true }))?.aspects.datasetProperties?.systemMetadata).toMatchObject({
        runId: 'no-run-id-provided',
        version: '2',
      });
    });

    it('refuses unknown or mistyped system metadata fields, and metadata for an aspect the write lacks, writing nothing', async () => {
      const c = open();
      const refused = await errorOf(
        c.entities.upsertMany(ADMIN, [
          { urn: A, aspects: { status: { removed: false } } },
          {
            urn: B,
            aspects: { status: { removed: false } },
            systemMetadata: { status: { tokenHash: 'x', runId: 3 }, datasetProperties: { runId: 'r' } },
          },
        ]),
      );
      expect(refused.code).toBe('INVALID_INPUT');
      expect(refused.details.map((d) => d.path).sort()).toEqual([
        '/1/systemMetadata/datasetProperties',
        '/1/systemMetadata/status/runId',
        '/1/systemMetadata/status/tokenHash',
      ]);
      expect(await c.entities.getMany(READER, [A, B])).toEqual([]);
    });

    it("never reads back the catalog's bookkeeping: a token's salted hash, a property's value keys", async () => {
      const c = open();
      const token = await c.tokens.create(ADMIN, { type: 'PERSONAL', actorUrn: ADMIN, duration: 'ONE_HOUR', name: 't' });
      // Token records (with their salted hash) are not entities a generic read returns at all.
      expect(await c.entities.get(ADMIN, token.metadata.urn, { systemMetadata: true })).toBeUndefined();

      await c.properties.create(ADMIN, {
        qualifiedName: 'io.conditions.tier',
        valueType: 'urn:li:dataType:datahub.string',
        entityTypes: ['urn:li:entityType:datahub.dataset'],
      });
      const [view] = await c.entities.upsertMany(
        ADMIN,
        [
          {
            urn: A,
            aspects: {
              structuredProperties: {
                properties: [{ propertyUrn: 'urn:li:structuredProperty:io.conditions.tier', values: [{ string: 'gold' }] }],
              },
            },
            systemMetadata: { structuredProperties: { runId: 'sp' } },
          },
        ],
        { systemMetadata: true },
      );
      expect(Object.keys(view?.aspects.structuredProperties?.systemMetadata ?? {}).sort()).toEqual([
        'aspectCreated',
        'aspectModified',
        'lastObserved',
        'lastRunId',
        'runId',
        'version',
      ]);
      expect(view?.aspects.structuredProperties?.systemMetadata?.runId).toBe('sp');
      expect((await c.entities.get(READER, A, { systemMetadata: true }))?.aspects.structuredProperties?.systemMetadata?.runId).toBe('sp');
      // The value keys are still kept beside it: search still finds the value.
      const found = await c.search.scroll(READER, {
        query: '*',
        orFilters: [{ and: [{ field: 'structuredProperties.io.conditions.tier', values: ['gold'] }] }],
      });
      expect(found.searchResults.map((r) => r.entity.urn)).toEqual([A]);
    });

    it('onlyIfAbsent: aspect refuses an existing aspect, entity an existing entity (CONFLICT), atomically with the rest', async () => {
      const c = open();
      await c.entities.upsertAspect(ADMIN, A, 'status', { removed: false });
      const refused = await errorOf(
        c.entities.upsertMany(ADMIN, [
          { urn: B, aspects: { status: { removed: false } }, onlyIfAbsent: 'aspect' },
          { urn: A, aspects: { status: { removed: true } }, onlyIfAbsent: 'aspect' },
        ]),
      );
      expect(refused).toMatchObject({ code: 'CONFLICT', details: [{ path: '/1/aspects/status' }] });
      expect(await c.entities.get(READER, B)).toBeUndefined();

      const created = await c.entities.upsertAspect(ADMIN, A, 'datasetProperties', { name: 'a' }, { onlyIfAbsent: 'aspect' });
      expect(created.aspects.datasetProperties?.value).toEqual({ name: 'a' });
      expect((await errorOf(c.entities.upsertAspect(ADMIN, A, 'status', { removed: true }, { onlyIfAbsent: 'entity' }))).code).toBe(
        'CONFLICT',
      );
      expect((await c.entities.get(READER, A))?.aspects.status?.value).toEqual({ removed: false });
      const fresh = await c.entities.upsertAspect(ADMIN, B, 'status', { removed: false }, { onlyIfAbsent: 'entity' });
      expect(fresh.urn).toBe(B);
      // An aspect owned by a service (a property definition) is checked before the service writes.
      const definition = {
        qualifiedName: 'io.conditions.once',
        valueType: 'urn:li:dataType:datahub.string',
        entityTypes: ['urn:li:entityType:datahub.dataset'],
      };
      const urn = 'urn:li:structuredProperty:io.conditions.once';
      await c.entities.upsertAspect(ADMIN, urn, 'propertyDefinition', definition, { onlyIfAbsent: 'aspect' });
      expect((await errorOf(c.entities.upsertAspect(ADMIN, urn, 'propertyDefinition', definition, { onlyIfAbsent: 'aspect' }))).code).toBe(
        'CONFLICT',
      );
    });

    it('exists: entity or aspect, soft-deleted ones only when asked', async () => {
      const c = open();
      expect(await c.entities.exists(READER, A)).toBe(false);
      await c.entities.upsertAspects(ADMIN, A, { datasetProperties: { name: 'a' }, status: { removed: true } });
      expect(await c.entities.exists(READER, A)).toBe(false);
      expect(await c.entities.exists(READER, A, { includeSoftDeleted: true })).toBe(true);
      expect(await c.entities.exists(READER, A, { aspect: 'datasetProperties', includeSoftDeleted: true })).toBe(true);
      expect(await c.entities.exists(READER, A, { aspect: 'structuredProperties', includeSoftDeleted: true })).toBe(false);
      await c.entities.upsertAspect(ADMIN, A, 'status', { removed: false });
      expect(await c.entities.exists(READER, A, { aspect: 'datasetProperties' })).toBe(true);
      expect((await errorOf(c.entities.exists(READER, A, { aspect: 'chartInfo' }))).code).toBe('INVALID_INPUT');
    });

    it('deleteAspects deletes several aspects in one step, checks every name first, and needs EDIT_ENTITY', async () => {
      const c = open();
      await c.entities.upsertAspects(ADMIN, A, { datasetProperties: { name: 'a' }, status: { removed: false } });
      const refused = await errorOf(c.entities.deleteAspects(ADMIN, A, ['status', 'chartInfo', 'structuredProperties']));
      expect(refused).toMatchObject({ code: 'INVALID_INPUT', details: [{ path: '/aspects/1' }, { path: '/aspects/2' }] });
      expect(Object.keys((await c.entities.get(READER, A))?.aspects ?? {}).sort()).toEqual(['datasetProperties', 'status']);
      expect((await errorOf(c.entities.deleteAspects(READER, A, ['status']))).code).toBe('FORBIDDEN');
      expect(await c.entities.deleteAspects(ADMIN, B, ['status'])).toEqual([]);
      expect(await c.entities.deleteAspects(ADMIN, A, ['status', 'status'])).toEqual(['status']);
      expect(Object.keys((await c.entities.get(READER, A))?.aspects ?? {})).toEqual(['datasetProperties']);
      // Deleting the last aspect deletes the entity.
      expect(await c.entities.deleteAspects(ADMIN, A, ['datasetProperties'])).toEqual(['datasetProperties']);
      expect(await c.entities.get(READER, A)).toBeUndefined();
    });

    it('patchMany patches several entities in one step, in order, and writes nothing when one fails', async () => {
      const c = open();
      await c.entities.upsertAspect(ADMIN, A, 'datasetProperties', { name: 'a' });
      const views = await c.entities.patchMany(ADMIN, [
        { urn: A, aspect: 'datasetProperties', patch: [{ op: 'add', path: '/description', value: 'one' }] },
        { urn: B, aspect: 'status', patch: [{ op: 'add', path: '/removed', value: false }] },
        { urn: A, aspect: 'datasetProperties', patch: [{ op: 'replace', path: '/description', value: 'two' }] },
      ]);
      expect(views.map((v) => v.urn)).toEqual([A, B]);
      expect(views[0]?.aspects.datasetProperties?.value).toEqual({ name: 'a', description: 'two' });
      expect(views[0]?.aspects.datasetProperties?.version).toBe(2);

      const failed = await errorOf(
        c.entities.patchMany(ADMIN, [
          { urn: A, aspect: 'datasetProperties', patch: [{ op: 'remove', path: '/description' }] },
          { urn: B, aspect: 'status', patch: [{ op: 'remove', path: '/nothing' }] },
        ]),
      );
      expect(failed).toMatchObject({ code: 'INVALID_INPUT', details: [{ path: '/1/patch/0' }] });
      const refused = await errorOf(
        c.entities.patchMany(ADMIN, [
          { urn: A, aspect: 'structuredProperties', patch: [] },
          { urn: A, aspect: 'datasetProfile', patch: [] },
        ]),
      );
      // structuredProperties is patched in a batch by its owner's rules now (the one write path); a timeseries aspect never is.
      expect(refused.details.map((d) => d.path)).toEqual(['/1/aspect']);
      expect((await errorOf(c.entities.patchMany(READER, [{ urn: A, aspect: 'status', patch: [] }]))).code).toBe('FORBIDDEN');
      expect((await c.entities.get(READER, A))?.aspects.datasetProperties?.value).toEqual({ name: 'a', description: 'two' });
    });
  });
}
