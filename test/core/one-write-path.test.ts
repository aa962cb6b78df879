import { afterEach, describe, expect, it } from 'vitest';
import { createCatalog, type Catalog } from '../../src/index';
import { createFetchHandler } from '../../src/http/index';
import { adaptersWithPostgres } from '../support/postgres';

/**
 * The one write path, driven with request bodies of DataHub's own clients:
 * - metadata-ingestion/src/datahub/emitter/rest_emitter.py (OpenAPI mode: `emit_mcp` of a property
 *   definition posts `[{ urn, propertyDefinition: { value } }]` to /openapi/v3/entity/structuredproperty);
 * - metadata-ingestion/tests/unit/sdk/test_rest_emitter.py `test_openapi_emitter_emit` (a `datasetProfile`
 *   in a v3 batch POST);
 * - metadata-ingestion/src/datahub/specific/dataset.py `DatasetPatchBuilder.set_structured_property`
 *   (`[{ urn, structuredProperties: { value: { patch: [remove, add] } } }]` in a v3 batch PATCH);
 * - docs/api/openapi/openapi-usage-guide.md (batchGet with `headers: { "If-Version-Match": "1" }`);
 * - smoke-test/tests/structured_properties/test_structured_properties.py (the values read back equal
 *   to what was written).
 */

const ADMIN = 'urn:li:corpuser:admin';
const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,SampleHiveDataset,PROD)';
const PROPERTY = 'urn:li:structuredProperty:io.acryl.privacy.retentionTime';

const adapters = await adaptersWithPostgres('test/core/one-write-path.test.ts');
let catalog: Catalog | undefined;
afterEach(async () => {
  await catalog?.close();
  catalog = undefined;
});

for (const [kind, adapter] of Object.entries(adapters)) {
  describe(`one write path (${kind})`, () => {
    const open = () => {
      catalog = createCatalog({ adapter: adapter(), superUsers: [ADMIN], jobs: { background: false } });
      const handler = createFetchHandler(catalog, { trustActorHeader: true });
      const call = async (method: string, path: string, body?: unknown) => {
        const response = await handler(
          new Request(`http://localhost${path}`, {
            method,
            headers: { 'X-Service-Actor': ADMIN, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
            ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
          }),
        );
        const text = await response.text();
        return { status: response.status, json: text ? (JSON.parse(text) as unknown) : undefined };
      };
      return { c: catalog, call };
    };
    const definition = {
      qualifiedName: 'io.acryl.privacy.retentionTime',
      valueType: 'urn:li:dataType:datahub.number',
      cardinality: 'MULTIPLE',
      entityTypes: ['urn:li:entityType:datahub.dataset'],
      displayName: 'Retention Time',
    };

    it('a v3 batch POST takes a property definition, and a timeseries aspect beside another aspect (one commit)', async () => {
      const { c, call } = open();
      const posted = await call('POST', '/openapi/v3/entity/structuredproperty?async=false', [
        { urn: PROPERTY, propertyDefinition: { value: definition } },
      ]);
      expect(posted.status).toBe(200);
      expect((await c.properties.get(ADMIN, PROPERTY))?.definition.qualifiedName).toBe('io.acryl.privacy.retentionTime');
      const profile = { rowCount: 2000, columnCount: 15, timestampMillis: 1626995099686, messageId: '1626995099686' };
      const mixed = await call('POST', '/openapi/v3/entity/dataset?async=false', [
        { urn: DATASET, datasetProperties: { value: { name: 'SampleHiveDataset' } }, datasetProfile: { value: profile } },
      ]);
      expect(mixed.status).toBe(200);
      const rows = await c.timeseries.query(ADMIN, { urn: DATASET, aspect: 'datasetProfile' });
      expect(rows.results.map((r) => r.value)).toEqual([profile]);
      expect((await c.entities.getAspect(ADMIN, DATASET, 'datasetProperties'))?.value).toEqual({ name: 'SampleHiveDataset' });
    });

    it('a v3 batch PATCH takes a structuredProperties patch; the values read back as written', async () => {
      const { c, call } = open();
      await c.entities.upsertAspect(ADMIN, PROPERTY, 'propertyDefinition', definition);
      await c.entities.upsertAspect(ADMIN, DATASET, 'datasetProperties', { name: 'SampleHiveDataset' });
      const patched = await call('PATCH', '/openapi/v3/entity/dataset?async=false', [
        {
          urn: DATASET,
          structuredProperties: {
            value: {
              patch: [
                { op: 'remove', path: `/properties/${PROPERTY}` },
                { op: 'add', path: `/properties/${PROPERTY}`, value: { propertyUrn: PROPERTY, values: [{ double: 365.0 }] } },
              ],
            },
          },
        },
      ]);
      expect(patched.status).toBe(200);
      expect(await c.properties.getValues(ADMIN, DATASET)).toMatchObject([{ propertyUrn: PROPERTY, values: [{ double: 365 }] }]);
    });

    it('a mixed proposal batch with one bad proposal writes nothing', async () => {
      const { c } = open();
      const json = (changeType: string, aspectName: string, value: unknown) => ({
        entityUrn: DATASET,
        changeType,
        aspectName,
        aspect: { value: JSON.stringify(value), contentType: 'application/json' },
      });
      await expect(
        c.entities.applyProposals(ADMIN, [
          json('UPSERT', 'datasetProperties', { name: 'SampleHiveDataset' }),
          json('UPSERT', 'datasetProfile', { rowCount: 10, timestampMillis: 1626995099686 }),
          { ...json('UPSERT', 'propertyDefinition', definition), entityUrn: PROPERTY },
          json('UPSERT', 'structuredProperties', {
            properties: [{ propertyUrn: 'urn:li:structuredProperty:missing', values: [{ double: 1 }] }],
          }),
        ]),
      ).rejects.toMatchObject({ code: 'INVALID_INPUT', details: [{ path: expect.stringMatching(/^\/3\/aspect\/value\//) }] });
      expect(await c.entities.get(ADMIN, DATASET)).toBeUndefined();
      expect(await c.entities.get(ADMIN, PROPERTY)).toBeUndefined();
      expect((await c.timeseries.query(ADMIN, { urn: DATASET, aspect: 'datasetProfile' })).results).toEqual([]);
    });

    it('structuredProperties read back exactly as written; valueHistory still says who set them and when', async () => {
      const { c, call } = open();
      await c.entities.upsertAspect(ADMIN, PROPERTY, 'propertyDefinition', definition);
      // StructuredPropertiesClass(properties=[StructuredPropertyValueAssignmentClass(propertyUrn, values=[365.0])]).
      const written = { properties: [{ propertyUrn: PROPERTY, values: [{ double: 365.0 }] }] };
      const posted = await call('POST', '/openapi/v3/entity/dataset?async=false', [
        { urn: DATASET, structuredProperties: { value: written } },
      ]);
      expect(posted.status).toBe(200);
      const read = (await call('GET', `/openapi/v3/entity/dataset/${encodeURIComponent(DATASET)}/structuredProperties`)) as {
        json: { value: unknown };
      };
      expect(read.json.value).toEqual(written);
      expect((await c.entities.getAspect(ADMIN, DATASET, 'structuredProperties'))?.value).toEqual(written);
      const [change] = await c.properties.valueHistory(ADMIN, DATASET, PROPERTY);
      expect(change?.setBy.actor).toBe(ADMIN);
      expect(change?.values).toEqual([{ double: 365 }]);
      // Stamps a writer sends are kept and read back as sent.
      const stamped = { properties: [{ propertyUrn: PROPERTY, values: [{ double: 30 }], lastModified: { time: 1, actor: ADMIN } }] };
      await c.entities.upsertAspect(ADMIN, DATASET, 'structuredProperties', stamped);
      expect((await c.entities.getAspect(ADMIN, DATASET, 'structuredProperties'))?.value).toEqual(stamped);
    });

    it('batchGet honours If-Version-Match per aspect', async () => {
      const { c, call } = open();
      await c.entities.upsertAspect(ADMIN, DATASET, 'datasetProperties', { name: 'first' });
      await c.entities.upsertAspect(ADMIN, DATASET, 'datasetProperties', { name: 'second' });
      const read = async (version: string) =>
        (await call('POST', '/openapi/v3/entity/dataset/batchGet', [
          { urn: DATASET, datasetProperties: { headers: { 'If-Version-Match': version } } },
        ])) as { status: number; json: Array<{ datasetProperties?: { value: unknown } }> };
      expect((await read('1')).json[0]?.datasetProperties?.value).toEqual({ name: 'first' });
      expect((await read('0')).json[0]?.datasetProperties?.value).toEqual({ name: 'second' });
      expect((await read('2')).json[0]?.datasetProperties?.value).toEqual({ name: 'second' });
    });
  });
}
