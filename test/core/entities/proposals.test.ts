import { afterEach, describe, expect, it } from 'vitest';
import { createCatalog, type Catalog } from '../../../src/index';
import { errorOf } from '../../support/errors';
import { adaptersWithPostgres } from '../../support/postgres';

/**
 * catalog.entities.applyProposals, the domain behind ingestProposal(Batch) and `metacatalog ingest`.
 * Proposal shapes follow metadata-ingestion/src/datahub/emitter/mcp.py (to_obj) and
 * metadata-ingestion/src/datahub/emitter/mcp_patch_builder.py (PATCH: the operations as JSON text).
 */

const ADMIN = 'urn:li:corpuser:admin';
const EDITOR = 'urn:li:corpuser:editor';
const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,orders,PROD)';
const OTHER = 'urn:li:dataset:(urn:li:dataPlatform:hive,customers,PROD)';
const RETENTION = 'urn:li:structuredProperty:io.acryl.privacy.retentionTime';

// PostgreSQL too when the shared test server answers (test/support/postgres.ts says why it is skipped otherwise).
const adapters = await adaptersWithPostgres('test/core/entities/proposals.test.ts');
let catalog: Catalog | undefined;
afterEach(async () => {
  await catalog?.close();
  catalog = undefined;
});

const proposal = (entityUrn: string, aspectName: string, value: unknown, changeType = 'UPSERT', systemMetadata?: unknown) => ({
  entityType: entityUrn.split(':')[2],
  entityUrn,
  changeType,
  aspectName,
  aspect: { value: JSON.stringify(value), contentType: changeType === 'PATCH' ? 'application/json-patch+json' : 'application/json' },
  ...(systemMetadata ? { systemMetadata } : {}),
});

for (const [kind, adapter] of Object.entries(adapters)) {
  describe(`entities.applyProposals (${kind})`, () => {
    const open = () =>
      (catalog = createCatalog({
        adapter: adapter(),
        superUsers: [ADMIN],
        policies: [{ actors: [EDITOR], privileges: ['EDIT_ENTITY', 'EDIT_ENTITY_PROPERTIES'] }],
        jobs: { background: false },
      }));

    it('applies in order: upserts, a patch on what the batch wrote, a delete; systemMetadata is kept and read back', async () => {
      const c = open();
      const metadata = { lastObserved: 1700000000000, runId: 'run-1' };
      const outcomes = await c.entities.applyProposals(EDITOR, [
        proposal(DATASET, 'datasetProperties', { name: 'orders' }, 'UPSERT', metadata),
        proposal(DATASET, 'datasetProperties', [{ op: 'add', path: '/description', value: 'All orders' }], 'PATCH'),
        proposal(OTHER, 'status', { removed: false }),
        { entityUrn: OTHER, changeType: 'DELETE', aspectName: 'status' },
        proposal(OTHER, 'datasetProperties', { name: 'customers' }, 'CREATE_ENTITY'),
      ]);
      expect(outcomes.map((o) => [o.changeType, o.changed])).toEqual([
        ['UPSERT', true],
        ['PATCH', true],
        ['UPSERT', true],
        ['DELETE', true],
        ['CREATE_ENTITY', true],
      ]);
      const orders = await c.entities.get(ADMIN, DATASET);
      expect(orders?.aspects.datasetProperties?.value).toEqual({ name: 'orders', description: 'All orders' });
      expect((await c.entities.get(ADMIN, OTHER))?.aspects).toEqual({
        datasetProperties: expect.objectContaining({ value: { name: 'customers' } }),
      });

      await c.entities.applyProposals(EDITOR, [proposal(DATASET, 'status', { removed: false }, 'UPSERT', metadata)]);
      expect((await c.entities.getAspect(ADMIN, DATASET, 'status', { systemMetadata: true }))?.systemMetadata).toMatchObject(metadata);
      // Read without asking for it: none (the catalog's bookkeeping is never shown either).
      expect((await c.entities.getAspect(ADMIN, DATASET, 'status'))?.systemMetadata).toBeUndefined();
    });

    it('checks every proposal first: every problem listed by index, nothing written (a patch that cannot apply included)', async () => {
      const c = open();
      await c.entities.upsertAspect(ADMIN, DATASET, 'datasetProperties', { name: 'orders' });
      const error = await errorOf(
        c.entities.applyProposals(
          EDITOR,
          [
            proposal(OTHER, 'datasetProperties', { name: 'customers' }),
            proposal(DATASET, 'datasetProperties', [{ op: 'replace', path: '/description', value: 'x' }], 'PATCH'),
            { ...proposal(DATASET, 'status', { removed: false }), changeType: 'MERGE' },
            proposal('urn:li:nope:x', 'status', { removed: false }),
            proposal(DATASET, 'datasetProperties', { name: 'orders' }, 'CREATE'),
            { ...proposal(DATASET, 'status', {}), aspect: { value: '{"removed": tru', contentType: 'application/json' } },
            proposal(DATASET, 'datasetKey', {}, 'PATCH'),
          ],
          { prefix: '/proposals' },
        ),
      );
      expect(error.code).toBe('INVALID_INPUT');
      expect(error.details.map((d) => d.path)).toEqual([
        '/proposals/2/changeType',
        '/proposals/3/entityUrn',
        '/proposals/5/aspect/value',
        '/proposals/6/changeType',
        '/proposals/1/aspect/value/0',
        '/proposals/4/changeType',
      ]);
      expect(await c.entities.get(ADMIN, OTHER)).toBeUndefined();
      expect((await c.entities.get(ADMIN, DATASET))?.aspects.datasetProperties?.version).toBe(1);
    });

    it('privileges are checked before any write; owned aspects go through their service', async () => {
      const c = open();
      const refused = await errorOf(
        c.entities.applyProposals(EDITOR, [
          proposal(RETENTION, 'propertyDefinition', {
            qualifiedName: 'io.acryl.privacy.retentionTime',
            valueType: 'urn:li:dataType:datahub.number',
            entityTypes: ['urn:li:entityType:datahub.dataset'],
          }),
        ]),
      );
      expect(refused.code).toBe('FORBIDDEN');
      expect(refused.message).toContain('MANAGE_STRUCTURED_PROPERTIES');
      // Refused before the first write, wherever the proposal needing more stands in the batch.
      const late = await errorOf(
        c.entities.applyProposals(EDITOR, [
          proposal(OTHER, 'datasetProperties', { name: 'customers' }),
          proposal(RETENTION, 'status', { removed: true }),
        ]),
      );
      expect(late.code).toBe('FORBIDDEN');
      expect(await c.entities.get(ADMIN, OTHER)).toBeUndefined();
      await c.entities.applyProposals(ADMIN, [
        proposal(RETENTION, 'propertyDefinition', {
          qualifiedName: 'io.acryl.privacy.retentionTime',
          valueType: 'urn:li:dataType:datahub.number',
          entityTypes: ['urn:li:entityType:datahub.dataset'],
          cardinality: 'MULTIPLE',
        }),
      ]);
      const metadata = { runId: 'props' };
      await c.entities.applyProposals(EDITOR, [
        proposal(DATASET, 'datasetProperties', { name: 'orders' }),
        proposal(
          DATASET,
          'structuredProperties',
          { properties: [{ propertyUrn: RETENTION, values: [{ double: 30 }] }] },
          'UPSERT',
          metadata,
        ),
      ]);
      const values = await c.entities.getAspect(ADMIN, DATASET, 'structuredProperties', { systemMetadata: true });
      expect(values?.value.properties).toEqual([expect.objectContaining({ propertyUrn: RETENTION, values: [{ double: 30 }] })]);
      expect(values?.systemMetadata).toMatchObject(metadata);
      // A value the definition refuses: named at the proposal, nothing written.
      const bad = await errorOf(
        c.entities.applyProposals(
          EDITOR,
          [
            proposal(OTHER, 'datasetProperties', { name: 'customers' }),
            proposal(OTHER, 'structuredProperties', { properties: [{ propertyUrn: RETENTION, values: [{ string: 'thirty' }] }] }),
          ],
          { prefix: '/proposals' },
        ),
      );
      expect(bad.code).toBe('INVALID_INPUT');
      expect(bad.details[0]?.path).toMatch(/^\/proposals\/1\/aspect\/value/);
      expect(await c.entities.get(ADMIN, OTHER)).toBeUndefined();
    });

    it('a key aspect: UPSERT changes nothing, DELETE deletes the entity hard; a timeseries proposal appends a row', async () => {
      const c = open();
      await c.entities.applyProposals(EDITOR, [
        proposal(DATASET, 'datasetKey', { platform: 'urn:li:dataPlatform:hive', name: 'orders', origin: 'PROD' }),
        proposal(DATASET, 'datasetProperties', { name: 'orders' }),
        proposal(DATASET, 'datasetProfile', { timestampMillis: 1700000000000, rowCount: 10 }),
        proposal(DATASET, 'datasetProfile', { timestampMillis: 1700000001000, rowCount: 12 }),
      ]);
      expect((await c.timeseries.latest(ADMIN, DATASET, 'datasetProfile'))?.rowCount).toBe(12);
      const badRow = await errorOf(c.entities.applyProposals(EDITOR, [proposal(DATASET, 'datasetProfile', { rowCount: 1 })]));
      expect(badRow.details[0]?.path).toBe('/0/aspect/value/timestampMillis');
      const [deleted] = await c.entities.applyProposals(EDITOR, [{ entityUrn: DATASET, changeType: 'DELETE', aspectName: 'datasetKey' }]);
      expect(deleted?.changed).toBe(true);
      expect(await c.entities.get(ADMIN, DATASET)).toBeUndefined();
    });
  });
}
