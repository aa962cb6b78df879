import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, call, DATASET, EDITOR, enc, READER, startTestServer, type TestServer } from './helpers';

const PROP = 'urn:li:structuredProperty:io.acryl.privacy.retentionTime';
const TIER = 'urn:li:structuredProperty:io.acryl.tier';
const DATASET_2 = 'urn:li:dataset:(urn:li:dataPlatform:hive,sales.customers,PROD)';

const retention = {
  qualifiedName: 'io.acryl.privacy.retentionTime',
  displayName: 'Retention Time',
  valueType: 'urn:li:dataType:datahub.number',
  allowedValues: [
    { value: { double: 30 }, description: '30 days' },
    { value: { double: 90 }, description: '90 days' },
  ],
  cardinality: 'MULTIPLE',
  entityTypes: ['urn:li:entityType:datahub.dataset', 'urn:li:entityType:datahub.dataFlow'],
};
const tier = {
  qualifiedName: 'io.acryl.tier',
  valueType: 'urn:li:dataType:datahub.string',
  allowedValues: [{ value: { string: 'gold' }, description: 'Gold' }, { value: { string: 'silver' } }],
  cardinality: 'SINGLE',
  entityTypes: ['urn:li:entityType:datahub.dataset'],
};

let t: TestServer;
let admin: string;
let editor: string;
let reader: string;
const entityPath = (type: string, urn: string, aspect?: string) => `/openapi/v2/entity/${type}/${enc(urn)}${aspect ? `/${aspect}` : ''}`;

beforeAll(async () => {
  t = await startTestServer();
  admin = t.adminToken;
  editor = await t.tokenFor(EDITOR);
  reader = await t.tokenFor(READER);
});
afterAll(() => t.close());

describe('structured property definitions over REST', () => {
  it('POST .../structuredProperty/{urn}/propertyDefinition creates, GET reads it back (root and /gms)', async () => {
    const created = await call(t.url, 'POST', entityPath('structuredProperty', PROP, 'propertyDefinition'), {
      token: admin,
      body: retention,
    });
    expect(created.status).toBe(200);
    expect(created.json.urn).toBe(PROP);
    expect(created.json.aspects.propertyDefinition.value).toMatchObject({ ...retention, created: { actor: ADMIN } });

    const read = await call(t.url, 'GET', `/gms${entityPath('structuredProperty', PROP, 'propertyDefinition')}`, { token: reader });
    expect(read.status).toBe(200);
    expect(read.json.value.qualifiedName).toBe('io.acryl.privacy.retentionTime');
    expect(read.json.value.allowedValues).toEqual(retention.allowedValues);

    const tierCreated = await call(t.url, 'POST', `/gms${entityPath('structuredproperty', TIER, 'propertyDefinition')}`, {
      token: admin,
      body: tier,
    });
    expect(tierCreated.status).toBe(200);
  });

  it('a definition without the privilege is 403 naming it; an invalid one is 400 listing every violation', async () => {
    const refused = await call(t.url, 'POST', entityPath('structuredProperty', 'urn:li:structuredProperty:x.y', 'propertyDefinition'), {
      token: editor,
      body: { ...tier, qualifiedName: 'x.y' },
    });
    expect(refused.status).toBe(403);
    expect(refused.json.error.code).toBe('FORBIDDEN');
    expect(refused.json.error.message).toContain('MANAGE_STRUCTURED_PROPERTIES');

    const invalid = await call(t.url, 'POST', entityPath('structuredProperty', 'urn:li:structuredProperty:bad', 'propertyDefinition'), {
      token: admin,
      body: { qualifiedName: 'bad', valueType: 'urn:li:dataType:datahub.nope', entityTypes: ['urn:li:entityType:dataset'] },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.json.error.code).toBe('INVALID_INPUT');
    expect(invalid.json.error.details.length).toBeGreaterThanOrEqual(2);
  });

  it('a breaking change without a newer version is 409', async () => {
    const breaking = await call(t.url, 'POST', entityPath('structuredProperty', PROP, 'propertyDefinition'), {
      token: admin,
      body: { ...retention, cardinality: 'SINGLE' },
    });
    expect(breaking.status).toBe(409);
    expect(breaking.json.error.code).toBe('CONFLICT');
  });
});

describe('structured property values over REST', () => {
  it('POST .../structuredProperties replaces all, GET reads them, PATCH (json-patch) changes some', async () => {
    const written = await call(t.url, 'POST', entityPath('dataset', DATASET, 'structuredProperties'), {
      token: editor,
      body: {
        properties: [
          { propertyUrn: PROP, values: [{ double: 30 }, { double: 90 }] },
          { propertyUrn: TIER, values: [{ string: 'gold' }] },
        ],
      },
    });
    expect(written.status).toBe(200);
    expect(written.json.urn).toBe(DATASET);
    expect(written.json.aspects.structuredProperties.value.properties.map((p: { propertyUrn: string }) => p.propertyUrn)).toEqual([
      PROP,
      TIER,
    ]);

    const patched = await call(t.url, 'PATCH', entityPath('dataset', DATASET, 'structuredProperties'), {
      token: editor,
      contentType: 'application/json-patch+json',
      body: { patch: [{ op: 'remove', path: `/properties/${TIER}` }], arrayPrimaryKeys: { properties: ['propertyUrn'] } },
    });
    expect(patched.status).toBe(200);
    expect(patched.json).toEqual({
      urn: DATASET,
      aspects: {
        structuredProperties: {
          value: { properties: [expect.objectContaining({ propertyUrn: PROP, values: [{ double: 30 }, { double: 90 }] })] },
        },
      },
    });

    const added = await call(t.url, 'PATCH', `/gms${entityPath('dataset', DATASET, 'structuredProperties')}`, {
      token: editor,
      contentType: 'application/json-patch+json; charset=utf-8',
      body: { patch: [{ op: 'add', path: `/properties/${TIER}`, value: { values: [{ string: 'silver' }] } }] },
    });
    expect(added.status).toBe(200);
    expect(added.json.aspects.structuredProperties.value.properties.map((p: { propertyUrn: string }) => p.propertyUrn)).toEqual([
      PROP,
      TIER,
    ]);

    const read = await call(t.url, 'GET', entityPath('dataset', DATASET, 'structuredProperties'), { token: reader });
    expect(read.status).toBe(200);
    expect(read.json.value.properties).toHaveLength(2);
  });

  it('PATCH needs application/json-patch+json (415), a failed test op is 409, a bad value 400', async () => {
    const wrongType = await call(t.url, 'PATCH', entityPath('dataset', DATASET, 'structuredProperties'), {
      token: editor,
      body: { patch: [{ op: 'remove', path: `/properties/${TIER}` }] },
    });
    expect(wrongType.status).toBe(415);
    expect(wrongType.json.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');

    const failedTest = await call(t.url, 'PATCH', entityPath('dataset', DATASET, 'structuredProperties'), {
      token: editor,
      contentType: 'application/json-patch+json',
      body: { patch: [{ op: 'test', path: `/properties/${TIER}`, value: { propertyUrn: TIER, values: [{ string: 'gold' }] } }] },
    });
    expect(failedTest.status).toBe(409);

    const badValue = await call(t.url, 'POST', entityPath('dataset', DATASET_2, 'structuredProperties'), {
      token: editor,
      body: { properties: [{ propertyUrn: TIER, values: [{ string: 'bronze' }] }] },
    });
    expect(badValue.status).toBe(400);
    expect(badValue.json.error.details[0].path).toBe('/properties/0/values/0');
  });

  it('PATCH exists only for structuredProperties: elsewhere 405 with Allow', async () => {
    const r = await call(t.url, 'PATCH', entityPath('dataset', DATASET, 'datasetProperties'), {
      token: editor,
      contentType: 'application/json-patch+json',
      body: { patch: [] },
    });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('GET, HEAD, POST, DELETE');
    expect(r.json.error.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('writing values without EDIT_ENTITY_PROPERTIES is 403', async () => {
    const r = await call(t.url, 'POST', entityPath('dataset', DATASET, 'structuredProperties'), {
      token: reader,
      body: { properties: [] },
    });
    expect(r.status).toBe(403);
    expect(r.json.error.message).toContain('EDIT_ENTITY_PROPERTIES');
  });
});

describe('status: soft delete and restore', () => {
  it('POST status { removed: true } soft-deletes a property (values hidden), { removed: false } restores it', async () => {
    const removed = await call(t.url, 'POST', entityPath('structuredProperty', TIER, 'status'), { token: admin, body: { removed: true } });
    expect(removed.status).toBe(200);
    expect(removed.json).toEqual({ urn: TIER, aspects: { status: { value: { removed: true } } } });
    const hidden = await call(t.url, 'GET', entityPath('dataset', DATASET, 'structuredProperties'), { token: reader });
    expect(hidden.json.value.properties.map((p: { propertyUrn: string }) => p.propertyUrn)).toEqual([PROP]);
    const assign = await call(t.url, 'POST', entityPath('dataset', DATASET_2, 'structuredProperties'), {
      token: editor,
      body: { properties: [{ propertyUrn: TIER, values: [{ string: 'gold' }] }] },
    });
    expect(assign.status).toBe(400);

    const restored = await call(t.url, 'POST', `/gms${entityPath('structuredProperty', TIER, 'status')}`, {
      token: admin,
      body: { removed: false },
    });
    expect(restored.status).toBe(200);
    const back = await call(t.url, 'GET', entityPath('dataset', DATASET, 'structuredProperties'), { token: reader });
    expect(back.json.value.properties.map((p: { propertyUrn: string }) => p.propertyUrn)).toEqual([PROP, TIER]);
  });
});

describe('generic entities and aspects', () => {
  it('POST an aspect, GET the entity and the aspect; an absent aspect is 404', async () => {
    const written = await call(t.url, 'POST', entityPath('dataset', DATASET_2, 'datasetProperties'), {
      token: editor,
      body: { name: 'customers', description: 'Customers.' },
    });
    expect(written.status).toBe(200);
    expect(written.json).toEqual({
      urn: DATASET_2,
      aspects: { datasetProperties: { value: { name: 'customers', description: 'Customers.' } } },
    });

    const entity = await call(t.url, 'GET', entityPath('dataset', DATASET_2), { token: reader });
    expect(entity.status).toBe(200);
    expect(entity.json.urn).toBe(DATASET_2);
    expect(entity.json.aspects.datasetProperties.value.name).toBe('customers');

    const some = await call(t.url, 'GET', `${entityPath('dataset', DATASET)}?aspects=structuredProperties`, { token: reader });
    expect(Object.keys(some.json.aspects)).toEqual(['structuredProperties']);

    const absent = await call(t.url, 'GET', entityPath('dataset', DATASET, 'datasetProperties'), { token: reader });
    expect(absent.status).toBe(404);
    expect(absent.json.error.code).toBe('NOT_FOUND');
    const noEntity = await call(t.url, 'GET', entityPath('dataset', 'urn:li:dataset:(urn:li:dataPlatform:hive,none,PROD)'), {
      token: reader,
    });
    expect(noEntity.status).toBe(404);
  });

  it('an address whose parts disagree is 400 naming each part', async () => {
    const mismatch = await call(t.url, 'GET', entityPath('chart', DATASET, 'datasetProperties'), { token: reader });
    expect(mismatch.status).toBe(400);
    expect(mismatch.json.error.details.map((d: { path: string }) => d.path)).toEqual(['urn', 'aspectName']);
    const badUrn = await call(t.url, 'GET', entityPath('dataset', 'not-a-urn'), { token: reader });
    expect(badUrn.status).toBe(400);
    expect(badUrn.json.error.details[0].path).toBe('urn');
    const invalidAspect = await call(t.url, 'POST', entityPath('dataset', DATASET_2, 'datasetProperties'), {
      token: editor,
      body: { name: 42 },
    });
    expect(invalidAspect.status).toBe(400);
    expect(invalidAspect.json.error.details).toEqual([{ path: '/aspects/datasetProperties/name', message: 'must be string' }]);
  });

  it('a write without EDIT_ENTITY is 403', async () => {
    const r = await call(t.url, 'POST', entityPath('dataset', DATASET_2, 'datasetProperties'), { token: reader, body: { name: 'x' } });
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('FORBIDDEN');
  });

  it('GET /openapi/v2/entity/{entityName} lists entities a page at a time with scrollId', async () => {
    const seen: string[] = [];
    let scrollId: string | undefined;
    for (let page = 0; page < 5; page++) {
      const r = await call(t.url, 'GET', `/openapi/v2/entity/dataset?count=1${scrollId ? `&scrollId=${scrollId}` : ''}`, { token: reader });
      expect(r.status).toBe(200);
      seen.push(...r.json.entities.map((e: { urn: string }) => e.urn));
      scrollId = r.json.scrollId;
      if (!scrollId) break;
    }
    expect(seen).toEqual([DATASET_2, DATASET].sort());
    const bad = await call(t.url, 'GET', '/openapi/v2/entity/dataset?count=abc&scrollId=zzz', { token: reader });
    expect(bad.status).toBe(400);
  });

  it('DELETE an aspect, then the entity; deleting again is 404', async () => {
    const aspect = await call(t.url, 'DELETE', entityPath('dataset', DATASET_2, 'datasetProperties'), { token: editor });
    expect(aspect.status).toBe(200);
    expect((await call(t.url, 'DELETE', entityPath('dataset', DATASET_2, 'datasetProperties'), { token: editor })).status).toBe(404);
    await call(t.url, 'POST', entityPath('dataset', DATASET_2, 'datasetProperties'), { token: editor, body: { name: 'again' } });
    const refused = await call(t.url, 'DELETE', entityPath('dataset', DATASET_2), { token: reader });
    expect(refused.status).toBe(403);
    const deleted = await call(t.url, 'DELETE', entityPath('dataset', DATASET_2), { token: editor });
    expect(deleted.status).toBe(200);
    expect(deleted.json).toEqual({ urn: DATASET_2, entityType: 'dataset', mode: 'hard', dryRun: false, changed: true });
    expect((await call(t.url, 'GET', entityPath('dataset', DATASET_2), { token: reader })).status).toBe(404);
    expect((await call(t.url, 'DELETE', entityPath('dataset', DATASET_2), { token: editor })).status).toBe(404);
  });

  it('DELETE a structured property is a hard delete unless ?hard=false (as the platform means it)', async () => {
    const soft = await call(t.url, 'DELETE', `${entityPath('structuredProperty', TIER)}?hard=false`, { token: admin });
    expect(soft.status).toBe(200);
    const definition = await call(t.url, 'GET', entityPath('structuredProperty', TIER), { token: reader });
    expect(definition.json.aspects.status.value).toEqual({ removed: true });

    const badFlag = await call(t.url, 'DELETE', `${entityPath('structuredProperty', TIER)}?hard=yes`, { token: admin });
    expect(badFlag.status).toBe(400);
    expect(badFlag.json.error.details).toEqual([{ path: 'hard', message: 'must be true or false, got "yes"' }]);

    const hard = await call(t.url, 'DELETE', `/gms${entityPath('structuredProperty', TIER)}`, { token: admin });
    expect(hard.status).toBe(200);
    expect((await call(t.url, 'GET', entityPath('structuredProperty', TIER), { token: reader })).status).toBe(404);
    await t.catalog.settle();
    const values = await call(t.url, 'GET', entityPath('dataset', DATASET, 'structuredProperties'), { token: reader });
    expect(values.json.value.properties.map((p: { propertyUrn: string }) => p.propertyUrn)).toEqual([PROP]);
    expect((await call(t.url, 'DELETE', `${entityPath('structuredProperty', TIER)}?hard=true`, { token: admin })).status).toBe(404);
  });
});
