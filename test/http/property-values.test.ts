import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, call, DATASET, EDITOR, READER, startTestServer, type TestServer } from './helpers';

const PATH = '/gms/openapi/v3/structuredProperties/values/batch';
const TIER = 'urn:li:structuredProperty:http.tier';
const OTHER = 'urn:li:dataset:(urn:li:dataPlatform:hive,sales.returns,PROD)';

let t: TestServer;
let editor: string;
let reader: string;

beforeAll(async () => {
  t = await startTestServer();
  editor = await t.tokenFor(EDITOR);
  reader = await t.tokenFor(READER);
  await t.catalog.properties.create(ADMIN, {
    qualifiedName: 'http.tier',
    valueType: 'string',
    entityTypes: ['dataset'],
    allowedValues: [{ value: { string: 'gold' } }, { value: { string: 'silver' } }],
  });
  await t.catalog.entities.upsertMany(
    ADMIN,
    [DATASET, OTHER].map((urn) => ({ urn, aspects: { datasetProperties: { name: urn.slice(-12) } } })),
  );
});
afterAll(() => t.close());

const tierOf = async (urn: string) => (await t.catalog.properties.getValues(ADMIN, urn)).find((a) => a.propertyUrn === TIER)?.values;

describe('POST /openapi/v3/structuredProperties/values/batch', () => {
  it('a dry run counts and writes nothing; a real run writes and counts the same', async () => {
    const edits = [
      { urn: DATASET, set: [{ propertyUrn: TIER, values: [{ string: 'gold' }] }] },
      { urn: OTHER, remove: [TIER] },
    ];
    const dry = await call(t.url, 'POST', PATH, { token: editor, body: { edits, dryRun: true } });
    expect(dry.status).toBe(200);
    expect(dry.json).toEqual({ dryRun: true, entities: 2, changed: 1, unchanged: 1, set: 1, removed: 0 });
    expect(await tierOf(DATASET)).toBeUndefined();
    const real = await call(t.url, 'POST', PATH, { token: editor, body: { edits } });
    expect(real.json).toEqual({ ...dry.json, dryRun: false });
    expect(await tierOf(DATASET)).toEqual([{ string: 'gold' }]);
  });

  it('400 naming each violation under /edits, nothing written; 403 without EDIT_ENTITY_PROPERTIES', async () => {
    const bad = await call(t.url, 'POST', PATH, {
      token: editor,
      body: {
        edits: [
          { urn: OTHER, set: [{ propertyUrn: TIER, values: [{ string: 'silver' }] }] },
          { urn: DATASET, set: [{ propertyUrn: TIER, values: [{ string: 'bronze' }] }] },
        ],
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error.details).toEqual([{ path: '/edits/1/set/0/values/0', message: expect.stringContaining('should be one of') }]);
    expect(await tierOf(OTHER)).toBeUndefined();

    const shape = await call(t.url, 'POST', PATH, { token: editor, body: { edit: [] } });
    expect(shape.status).toBe(400);
    expect(shape.json.error.details.map((d: { path: string }) => d.path)).toEqual(['/edits', '/edit']);

    const forbidden = await call(t.url, 'POST', PATH, {
      token: reader,
      body: { edits: [{ urn: OTHER, set: [{ propertyUrn: TIER, values: [{ string: 'silver' }] }] }], dryRun: true },
    });
    expect(forbidden.status).toBe(403);
    expect(forbidden.json.error.message).toContain('EDIT_ENTITY_PROPERTIES');
  });
});
