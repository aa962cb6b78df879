import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StorageAdapter } from '../../src/index';
import { ADMIN, call, startTestServer, type TestServer } from './helpers';

/**
 * The OpenAPI v3 requests of DataHub's structured-properties tutorial
 * (datahub-project/datahub docs/api/tutorials/structured-properties.md, the "OpenAPI v3" tabs), with
 * their paths, query strings and bodies copied as written, run in the tutorial's order against the
 * memory and the SQLite adapter.
 */

const RETENTION = 'urn:li:structuredProperty:io.acryl.privacy.retentionTime';
const RETENTION_02 = 'urn:li:structuredProperty:io.acryl.privacy.retentionTime02';
const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,SampleHiveDataset,PROD)';
const DATASET_PATH =
  '/openapi/v3/entity/dataset/urn%3Ali%3Adataset%3A%28urn%3Ali%3AdataPlatform%3Ahive%2CSampleHiveDataset%2CPROD%29/structuredProperties';

// "Create Structured Properties", OpenAPI v3.
const CREATE_RETENTION = `{
	"value": {
		"qualifiedName": "io.acryl.privacy.retentionTime",
		"valueType": "urn:li:dataType:datahub.number",
		"description": "Retention Time is used to figure out how long to retain records in a dataset",
		"displayName": "Retention Time",
		"cardinality": "MULTIPLE",
		"entityTypes": [
			"urn:li:entityType:datahub.dataset",
			"urn:li:entityType:datahub.dataFlow"
		],
		"allowedValues": [
			{
				"value": {
					"double": 30
				},
				"description": "30 days, usually reserved for datasets that are ephemeral and contain pii"
			},
			{
				"value": {
					"double": 60
				},
				"description": "Use this for datasets that drive monthly reporting but contain pii"
			},
			{
				"value": {
					"double": 365
				},
				"description": "Use this for non-sensitive data that can be retained for longer"
			}
		]
	}
}`;

// "Set Structured Property To a Dataset", OpenAPI v3.
const SET_RETENTION = `{
	"value": {
		"properties": [
			{
			  "propertyUrn": "urn:li:structuredProperty:io.acryl.privacy.retentionTime",
			  "values": [
				{"double": 60.0}
			  ]
			}
		  ]
	}
}`;

// "Add Structured Property Value", OpenAPI v3: the second property, then both values.
const CREATE_RETENTION_02 = `{
	"value": {
		"qualifiedName": "io.acryl.privacy.retentionTime02",
		"displayName": "Retention Time 02",
		"valueType": "urn:li:dataType:datahub.string",
		"allowedValues": [
			{
				"value": {"string": "foo2"},
				"description": "test foo2 value"
			},
			{
				"value": {"string": "bar2"},
				"description": "test bar2 value"
			}
		],
		"cardinality": "SINGLE",
		"entityTypes": [
			"urn:li:entityType:datahub.dataset"
		]
	}
}`;
const SET_BOTH = `{
	"value": {
		"properties": [
			{
			  "propertyUrn": "urn:li:structuredProperty:io.acryl.privacy.retentionTime",
			  "values": [
				{"double": 60.0}
			  ]
			},
			{
			  "propertyUrn": "urn:li:structuredProperty:io.acryl.privacy.retentionTime02",
			  "values": [
				{"string": "bar2"}
			  ]
			}
		  ]
	}
}`;

// "Remove Structured Property Value" and "Upsert Structured Property Value", OpenAPI v3.
const PATCH_REMOVE = `{
        "patch": [
            {
                "op": "remove",
                "path": "/properties/urn:li:structuredProperty:io.acryl.privacy.retentionTime"
            }
        ],
        "arrayPrimaryKeys": {
            "properties": [
                "propertyUrn"
            ]
        }
      }`;
const PATCH_ADD = `{
        "patch": [
            {
                "op": "add",
                "path": "/properties/urn:li:structuredProperty:io.acryl.privacy.retentionTime",
                "value": {
                    "propertyUrn": "urn:li:structuredProperty:io.acryl.privacy.retentionTime",
                    "values": [
                        {
                            "double": 365.0
                        }
                    ]
                }
            }
        ],
        "arrayPrimaryKeys": {
            "properties": [
                "propertyUrn"
            ]
        }
    }`;

// "Soft Delete", OpenAPI v3 (both requests send removed: true, as the tutorial writes them).
const SOFT_DELETE = `{
	"value": {
		"removed": true
	}
}`;

// "Update Structured Property With Breaking Schema Changes", OpenAPI v3.
const BREAKING_CHANGE = `{
	"value": {
		"qualifiedName": "io.acryl.privacy.retentionTime",
		"valueType": "urn:li:dataType:datahub.number",
		"description": "Retention Time is used to figure out how long to retain records in a dataset",
		"displayName": "Retention Time",
		"cardinality": "SINGLE",
		"version": "20240614080000",
		"entityTypes": [
			"urn:li:entityType:datahub.dataset",
			"urn:li:entityType:datahub.dataFlow"
		],
		"allowedValues": [
			{
				"value": {
					"double": 30
				},
				"description": "30 days, usually reserved for datasets that are ephemeral and contain pii"
			},
			{
				"value": {
					"double": 60
				},
				"description": "Use this for datasets that drive monthly reporting but contain pii"
			},
			{
				"value": {
					"double": 365
				},
				"description": "Use this for non-sensitive data that can be retained for longer"
			}
		]
	}
}`;

const json = { 'content-type': 'application/json', accept: 'application/json' };
const jsonPatch = { 'content-type': 'application/json-patch+json', accept: 'application/json' };

/** Registers the suite over a catalog on the adapter `adapter` makes (the test server's SQLite file when left out). */
export function tutorialSuite(kind: string, adapter?: () => StorageAdapter): void {
  describe(`the structured-properties tutorial over OpenAPI v3 (${kind})`, () => {
    let t: TestServer;
    let admin: string;
    const send = (method: string, path: string, body?: string, headers = json) =>
      call(t.url, method, path, {
        token: admin,
        ...(body !== undefined ? { rawBody: body, contentType: null } : {}),
        headers: body !== undefined ? headers : { accept: 'application/json' },
      });

    beforeAll(async () => {
      t = await startTestServer(adapter ? { catalog: { adapter: adapter() } } : {});
      admin = t.adminToken;
      // The tutorial's dataset comes from the sample data; here it is written first, through the v3 batch POST.
      const seeded = await send(
        'POST',
        '/openapi/v3/entity/dataset',
        JSON.stringify([{ urn: DATASET, datasetProperties: { value: { name: 'SampleHiveDataset' } } }]),
      );
      expect(seeded.status).toBe(200);
    });
    afterAll(() => t.close());

    it('creates a property, lists it, reads it back', async () => {
      const created = await send(
        'POST',
        '/openapi/v3/entity/structuredProperty/urn%3Ali%3AstructuredProperty%3Aio.acryl.privacy.retentionTime/propertyDefinition',
        CREATE_RETENTION,
      );
      expect(created.status).toBe(200);
      expect(created.json.urn).toBe(RETENTION);
      expect(created.json.propertyDefinition.value).toMatchObject({
        qualifiedName: 'io.acryl.privacy.retentionTime',
        valueType: 'urn:li:dataType:datahub.number',
        cardinality: 'MULTIPLE',
        allowedValues: [{ value: { double: 30 } }, { value: { double: 60 } }, { value: { double: 365 } }],
      });

      // "List Structured Properties" (the tutorial sends it to the frontend's port 9002; the path is the same).
      const listed = await send(
        'GET',
        '/openapi/v3/entity/structuredproperty?systemMetadata=false&includeSoftDelete=false&skipCache=false&aspects=structuredPropertySettings&aspects=propertyDefinition&aspects=institutionalMemory&aspects=structuredPropertyKey&aspects=status&count=10&sortCriteria=urn&sortOrder=ASCENDING&query=*',
      );
      expect(listed.status).toBe(200);
      expect(listed.json.entities.map((e: { urn: string }) => e.urn)).toEqual([RETENTION]);
      expect(listed.json.entities[0].propertyDefinition.value.qualifiedName).toBe('io.acryl.privacy.retentionTime');
      expect(listed.json.entities[0].propertyDefinition.systemMetadata).toBeUndefined();

      const read = await send(
        'GET',
        '/openapi/v3/entity/structuredProperty/urn%3Ali%3AstructuredProperty%3Aio.acryl.privacy.retentionTime/propertyDefinition',
      );
      expect(read.status).toBe(200);
      expect(read.json.value.displayName).toBe('Retention Time');
    });

    it('sets a value on the dataset, adds a second property, patches values away and back', async () => {
      const set = await send('POST', DATASET_PATH, SET_RETENTION);
      expect(set.status).toBe(200);
      expect(set.json).toMatchObject({
        urn: DATASET,
        structuredProperties: { value: { properties: [{ propertyUrn: RETENTION, values: [{ double: 60 }] }] } },
      });

      const second = await send(
        'POST',
        '/openapi/v3/entity/structuredProperty/urn%3Ali%3AstructuredProperty%3Aio.acryl.privacy.retentionTime02/propertyDefinition',
        CREATE_RETENTION_02,
      );
      expect(second.status).toBe(200);
      const both = await send('POST', `${DATASET_PATH}?createIfNotExists=false`, SET_BOTH);
      expect(both.status).toBe(200);
      expect(both.json.structuredProperties.value.properties).toMatchObject([
        { propertyUrn: RETENTION, values: [{ double: 60 }] },
        { propertyUrn: RETENTION_02, values: [{ string: 'bar2' }] },
      ]);

      const removed = await send('PATCH', DATASET_PATH, PATCH_REMOVE, jsonPatch);
      expect(removed.status).toBe(200);
      expect(removed.json).toMatchObject({
        urn: DATASET,
        structuredProperties: { value: { properties: [{ propertyUrn: RETENTION_02, values: [{ string: 'bar2' }] }] } },
      });

      const added = await send('PATCH', DATASET_PATH, PATCH_ADD, jsonPatch);
      expect(added.status).toBe(200);
      expect(added.json.structuredProperties.value.properties).toMatchObject([
        { propertyUrn: RETENTION_02, values: [{ string: 'bar2' }] },
        { propertyUrn: RETENTION, values: [{ double: 365 }] },
      ]);
    });

    it('the first value write without createIfNotExists=false only creates: run again it is refused (409), nothing changes', async () => {
      const again = await send('POST', DATASET_PATH, SET_RETENTION);
      expect(again.status).toBe(409);
      expect(again.json.error.code).toBe('CONFLICT');
      expect(again.json.message).toMatch(/structuredProperties/);
      const read = await send('GET', `${DATASET_PATH}`);
      expect(read.json.value.properties).toHaveLength(2);
    });

    it('soft-deletes the property through its status aspect, and writes status again with createIfNotExists=false', async () => {
      const soft = await send(
        'POST',
        '/openapi/v3/entity/structuredProperty/urn%3Ali%3AstructuredProperty%3Aio.acryl.privacy.retentionTime/status?systemMetadata=false',
        SOFT_DELETE,
      );
      expect(soft.status).toBe(200);
      expect(soft.json).toEqual({ urn: RETENTION, status: { value: { removed: true } } });
      // Values of a soft-deleted property are not returned.
      const hidden = await send('GET', DATASET_PATH);
      expect(hidden.json.value.properties.map((p: { propertyUrn: string }) => p.propertyUrn)).toEqual([RETENTION_02]);

      const again = await send(
        'POST',
        '/openapi/v3/entity/structuredProperty/urn%3Ali%3AstructuredProperty%3Aio.acryl.privacy.retentionTime/status?systemMetadata=false&createIfNotExists=false',
        SOFT_DELETE,
      );
      expect(again.status).toBe(200);
      expect(again.json.status.value).toEqual({ removed: true });
      // Restoring (what the tutorial's answer shows) is the same request with removed: false.
      const restored = await send(
        'POST',
        '/openapi/v3/entity/structuredProperty/urn%3Ali%3AstructuredProperty%3Aio.acryl.privacy.retentionTime/status?systemMetadata=false&createIfNotExists=false',
        SOFT_DELETE.replace('true', 'false'),
      );
      expect(restored.json).toEqual({ urn: RETENTION, status: { value: { removed: false } } });
      expect((await send('GET', DATASET_PATH)).json.value.properties).toHaveLength(2);
    });

    it('hard-deletes the property (200, no body): the definition and its values are gone', async () => {
      const deleted = await send(
        'DELETE',
        '/openapi/v3/entity/structuredProperty/urn%3Ali%3AstructuredProperty%3Aio.acryl.privacy.retentionTime',
      );
      expect(deleted.status).toBe(200);
      expect(deleted.text).toBe('');
      const head = await send(
        'HEAD',
        '/openapi/v3/entity/structuredProperty/urn%3Ali%3AstructuredProperty%3Aio.acryl.privacy.retentionTime',
      );
      expect(head.status).toBe(404);
      expect((await send('GET', DATASET_PATH)).json.value.properties.map((p: { propertyUrn: string }) => p.propertyUrn)).toEqual([
        RETENTION_02,
      ]);
      await t.catalog.settle();
      const stored = await t.catalog.entities.get(ADMIN, DATASET, { aspects: ['structuredProperties'] });
      expect(stored?.aspects.structuredProperties?.value).toMatchObject({
        properties: [{ propertyUrn: RETENTION_02, values: [{ string: 'bar2' }] }],
      });
    });

    it('writes the breaking change with createIfNotExists=false (the property is created anew after its hard delete)', async () => {
      const changed = await send(
        'POST',
        '/openapi/v3/entity/structuredProperty/urn%3Ali%3AstructuredProperty%3Aio.acryl.privacy.retentionTime/propertyDefinition?createIfNotExists=false',
        BREAKING_CHANGE,
      );
      expect(changed.status).toBe(200);
      expect(changed.json.propertyDefinition.value).toMatchObject({ cardinality: 'SINGLE', version: '20240614080000' });
    });
  });
}
