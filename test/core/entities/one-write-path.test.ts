import { afterEach, describe, expect, it } from 'vitest';
import { createCatalog, type Catalog } from '../../../src/index';
import { createFetchHandler } from '../../../src/http/index';
import { adaptersWithPostgres } from '../../support/postgres';

/**
 * The one write path, driven with request bodies taken from DataHub's own sources (each test names the
 * file and function its body comes from). URNs are kept; where a body needs something to exist first
 * (a property definition, an earlier version), the test writes it.
 */

const ADMIN = 'urn:li:corpuser:admin';
// SDK metadata a client sends beside each aspect (test_rest_emitter.py, test_openapi_emitter_emit).
const SDK_SYSTEM_METADATA = {
  lastObserved: 1626995099686,
  runId: 'no-run-id-provided',
  lastRunId: 'no-run-id-provided',
  properties: { clientId: 'acryl-datahub', clientVersion: '1!0.0.0.dev0' },
};

const adapters = await adaptersWithPostgres('test/core/entities/one-write-path.test.ts');
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

    // smoke-test/tests/structured_properties/test_structured_properties.py, create_property_definition():
    // StructuredPropertyDefinitionClass(qualifiedName, valueType=make_data_type_urn(value_type),
    // description="The retention policy for the dataset", entityTypes=[make_entity_type_urn(...)], cardinality).
    const propertyDefinition = (qualifiedName: string, valueType: string, entityType = 'dataset') => ({
      qualifiedName,
      valueType: `urn:li:dataType:datahub.${valueType}`,
      description: 'The retention policy for the dataset',
      entityTypes: [`urn:li:entityType:datahub.${entityType}`],
      cardinality: 'SINGLE',
      immutable: false,
    });

    it('a v3 batch POST takes a property definition (emit_mcp of StructuredPropertyDefinitionClass in OpenAPI mode)', async () => {
      const { c, call } = open();
      // metadata-ingestion/src/datahub/emitter/rest_emitter.py, DataHubRestEmitter._to_openapi_request
      // (as test_rest_emitter.py test_openapi_emitter_emit asserts it): POST
      // /openapi/v3/entity/{mcp.entityType}?async=false with [{ urn, <aspect>: { value, systemMetadata, headers } }];
      // the definition is the smoke test's create_property_definition("retentionPolicy", graph).
      const urn = 'urn:li:structuredProperty:io.acryl.privacy.retentionPolicy';
      const value = propertyDefinition('io.acryl.privacy.retentionPolicy', 'string');
      const posted = await call('POST', '/openapi/v3/entity/structuredProperty?async=false', [
        { urn, propertyDefinition: { value, systemMetadata: SDK_SYSTEM_METADATA, headers: {} } },
      ]);
      expect(posted.status).toBe(200);
      const stored = await c.properties.get(ADMIN, urn);
      expect(stored?.definition).toMatchObject(value);
      // The same definition again, now as a MULTIPLE → SINGLE change is not (test_structured_property_definition_evolution
      // sends SINGLE after MULTIPLE and expects a refusal): here MULTIPLE after SINGLE is allowed, SINGLE again refused.
      const multiple = await call('POST', '/openapi/v3/entity/structuredProperty?async=false', [
        { urn, propertyDefinition: { value: { ...value, cardinality: 'MULTIPLE' }, systemMetadata: SDK_SYSTEM_METADATA, headers: {} } },
      ]);
      expect(multiple.status).toBe(200);
      const single = await call('POST', '/openapi/v3/entity/structuredProperty?async=false', [
        { urn, propertyDefinition: { value, systemMetadata: SDK_SYSTEM_METADATA, headers: {} } },
      ]);
      expect(single.status).toBe(409);
      expect((await c.properties.get(ADMIN, urn))?.definition.cardinality).toBe('MULTIPLE');
    });

    it('a v3 batch POST takes a timeseries aspect (test_openapi_emitter_emit: a datasetProfile), appended as a row', async () => {
      const { c, call } = open();
      // metadata-ingestion/tests/unit/sdk/test_rest_emitter.py, TestDataHubRestEmitter.test_openapi_emitter_emit:
      // the payload the emitter posts to /openapi/v3/entity/dataset?async=false (lastObserved is ANY there).
      const urn = 'urn:li:dataset:(urn:li:dataPlatform:mysql,User.UserAccount,PROD)';
      const profile = {
        rowCount: 2000,
        columnCount: 15,
        timestampMillis: 1626995099686,
        partitionSpec: { partition: 'FULL_TABLE_SNAPSHOT', type: 'FULL_TABLE' },
      };
      const posted = await call('POST', '/openapi/v3/entity/dataset?async=false', [
        { urn, datasetProfile: { value: profile, systemMetadata: SDK_SYSTEM_METADATA, headers: {} } },
      ]);
      expect(posted.status).toBe(200);
      const rows = await c.timeseries.query(ADMIN, { urn, aspect: 'datasetProfile' });
      expect(rows.results.map((r) => r.value)).toEqual([profile]);
      // Beside a versioned aspect of the same entity, in one batch: both land.
      const mixed = await call('POST', '/openapi/v3/entity/dataset?async=false', [
        {
          urn,
          datasetProperties: { value: { name: 'User.UserAccount' }, systemMetadata: SDK_SYSTEM_METADATA, headers: {} },
          datasetProfile: { value: { ...profile, rowCount: 2001, timestampMillis: 1626995099687 }, headers: {} },
        },
      ]);
      expect(mixed.status).toBe(200);
      expect((await c.timeseries.query(ADMIN, { urn, aspect: 'datasetProfile' })).results.map((r) => r.value.rowCount)).toEqual([
        2001, 2000,
      ]);
      expect((await c.entities.getAspect(ADMIN, urn, 'datasetProperties'))?.value).toEqual({ name: 'User.UserAccount' });
    });

    it('a v3 batch PATCH takes a structuredProperties patch (DatasetPatchBuilder.set_structured_property)', async () => {
      const { c, call } = open();
      // smoke-test/tests/structured_properties/test_structured_properties.py, test_dataset_structured_property_patch:
      // a number property "replicationSLA" set to 30 on make_dataset_urn("snowflake", "table_foo_<n>").
      const property = 'urn:li:structuredProperty:io.acryl.privacy.replicationSLA';
      const dataset = 'urn:li:dataset:(urn:li:dataPlatform:snowflake,table_foo_10,PROD)';
      await c.entities.upsertAspect(ADMIN, property, 'propertyDefinition', propertyDefinition('io.acryl.privacy.replicationSLA', 'number'));
      await c.entities.upsertAspect(ADMIN, dataset, 'datasetProperties', { name: 'table_foo_10' });
      // metadata-ingestion/src/datahub/specific/aspect_helpers/structured_properties.py,
      // HasStructuredPropertiesPatch.set_structured_property: remove_structured_property (op "remove",
      // path ("properties", urn), value {}) then add_structured_property (op "add", the same path, value
      // StructuredPropertyValueAssignmentClass(propertyUrn, values=[value])), sent in a v3 batch PATCH.
      const patch = [
        { op: 'remove', path: `/properties/${property}`, value: {} },
        { op: 'add', path: `/properties/${property}`, value: { propertyUrn: property, values: [{ double: 30 }] } },
      ];
      const patched = await call('PATCH', '/openapi/v3/entity/dataset?async=false', [
        { urn: dataset, structuredProperties: { value: { patch } } },
      ]);
      expect(patched.status).toBe(200);
      expect(await c.properties.getValues(ADMIN, dataset)).toMatchObject([{ propertyUrn: property, values: [{ double: 30 }] }]);
      // The same patch again replaces the value (remove, then add): still one assignment.
      const again = await call('PATCH', '/openapi/v3/entity/dataset?async=false', [
        {
          urn: dataset,
          structuredProperties: {
            value: { patch: [patch[0], { ...patch[1], value: { propertyUrn: property, values: [{ double: 31 }] } }] },
          },
        },
      ]);
      expect(again.status).toBe(200);
      expect((await c.entities.getAspect(ADMIN, dataset, 'structuredProperties'))?.value).toEqual({
        properties: [{ propertyUrn: property, values: [{ double: 31 }] }],
      });
    });

    it('a mixed proposal batch with one bad proposal writes nothing', async () => {
      const { c } = open();
      // metadata-ingestion/tests/unit/sdk/test_rest_emitter.py (test_openapi_emitter_emit's datasetProfile)
      // and the smoke test's create_property_definition / attach_property_to_entity, as the Rest.li
      // emitter sends them (one proposal each, aspect serialized as JSON text). The last one attaches a
      // number to a string property: test_structured_property_string expects that refused.
      const dataset = 'urn:li:dataset:(urn:li:dataPlatform:mysql,User.UserAccount,PROD)';
      const property = 'urn:li:structuredProperty:io.acryl.privacy.retentionPolicy';
      const proposal = (entityUrn: string, changeType: string, aspectName: string, value: unknown) => ({
        entityUrn,
        entityType: entityUrn.startsWith('urn:li:dataset:') ? 'dataset' : 'structuredProperty',
        changeType,
        aspectName,
        aspect: { value: JSON.stringify(value), contentType: 'application/json' },
      });
      await expect(
        c.entities.applyProposals(ADMIN, [
          proposal(dataset, 'UPSERT', 'datasetProperties', { name: 'User.UserAccount' }),
          proposal(dataset, 'UPSERT', 'datasetProfile', { rowCount: 2000, columnCount: 15, timestampMillis: 1626995099686 }),
          proposal(property, 'UPSERT', 'propertyDefinition', propertyDefinition('io.acryl.privacy.retentionPolicy', 'string')),
          proposal(dataset, 'UPSERT', 'structuredProperties', { properties: [{ propertyUrn: property, values: [{ double: 200030 }] }] }),
        ]),
      ).rejects.toMatchObject({ code: 'INVALID_INPUT', details: [{ path: expect.stringMatching(/^\/3\/aspect\/value\//) }] });
      expect(await c.entities.get(ADMIN, dataset)).toBeUndefined();
      expect(await c.entities.get(ADMIN, property)).toBeUndefined();
      expect((await c.timeseries.query(ADMIN, { urn: dataset, aspect: 'datasetProfile' })).results).toEqual([]);
    });

    it('structuredProperties read back exactly as written (test_structured_property_search: get_aspect == StructuredPropertiesClass)', async () => {
      const { c, call } = open();
      // smoke-test/tests/structured_properties/test_structured_properties.py, test_structured_property_search:
      // a date property on schemaField entities, attach_property_to_entity(schema_field_urns[0], name,
      // "2020-10-01", namespace="io.datahubproject.test"), then graph.get_aspect(...) must equal
      // StructuredPropertiesClass(properties=[StructuredPropertyValueAssignmentClass(propertyUrn, values=["2020-10-01"])]).
      const qualifiedName = 'io.datahubproject.test.deprecationDate42';
      const property = `urn:li:structuredProperty:${qualifiedName}`;
      const field = 'urn:li:schemaField:(urn:li:dataset:(urn:li:dataPlatform:snowflake,table_foo_10,PROD),column_1)';
      await c.entities.upsertAspect(ADMIN, property, 'propertyDefinition', propertyDefinition(qualifiedName, 'date', 'schemaField'));
      const written = { properties: [{ propertyUrn: property, values: [{ string: '2020-10-01' }] }] };
      const posted = await call('POST', '/openapi/v3/entity/schemaField?async=false', [
        { urn: field, structuredProperties: { value: written, systemMetadata: SDK_SYSTEM_METADATA, headers: {} } },
      ]);
      expect(posted.status).toBe(200);
      const read = (await call('GET', `/openapi/v3/entity/schemaField/${encodeURIComponent(field)}/structuredProperties`)) as {
        json: { value: unknown };
      };
      expect(read.json.value).toEqual(written);
      expect((await c.entities.getAspect(ADMIN, field, 'structuredProperties'))?.value).toEqual(written);
      const [change] = await c.properties.valueHistory(ADMIN, field, property);
      expect(change?.setBy.actor).toBe(ADMIN);
      expect(change?.values).toEqual([{ string: '2020-10-01' }]);
      // Stamps a writer sends are kept and read back as sent.
      const stamped = {
        properties: [{ propertyUrn: property, values: [{ string: '2020-10-02' }], lastModified: { time: 1, actor: ADMIN } }],
      };
      await c.entities.upsertAspect(ADMIN, field, 'structuredProperties', stamped);
      expect((await c.entities.getAspect(ADMIN, field, 'structuredProperties'))?.value).toEqual(stamped);
    });

    it('batchGet honours If-Version-Match per aspect (the OpenAPI v3 usage guide)', async () => {
      const { c, call } = open();
      // docs/api/openapi/openapi-usage-guide.md, "retrieve the previous version ... populating the headers map
      // with If-Version-Match": [{ urn, globalTags: { headers: { "If-Version-Match": "1" } } }]. The catalog
      // knows no globalTags aspect, so the same request names the guide's other aspect of that entity,
      // datasetProperties (its value as the guide's batchGet answer shows it), written twice first.
      const urn = 'urn:li:dataset:(urn:li:dataPlatform:hive,fct_users_created,PROD)';
      const first = {
        description: 'table containing all the users created on a single day',
        customProperties: { encoding: 'utf-8' },
        tags: [],
      };
      const second = { ...first, customProperties: { encoding: 'utf-8', owner: 'analytics' } };
      await c.entities.upsertAspect(ADMIN, urn, 'datasetProperties', first);
      await c.entities.upsertAspect(ADMIN, urn, 'datasetProperties', second);
      const read = async (version: string) =>
        (await call('POST', '/openapi/v3/entity/dataset/batchGet', [
          { urn, datasetProperties: { headers: { 'If-Version-Match': version } } },
        ])) as {
          status: number;
          json: Array<{ datasetProperties?: { value: unknown } }>;
        };
      expect((await read('1')).json[0]?.datasetProperties?.value).toEqual(first);
      expect((await read('0')).json[0]?.datasetProperties?.value).toEqual(second);
      expect((await read('2')).json[0]?.datasetProperties?.value).toEqual(second);
    });
  });
}
