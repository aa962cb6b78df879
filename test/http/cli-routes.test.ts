import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, DATASET, EDITOR, enc, READER, startTestServer, type TestServer } from './helpers';

/** The routes the command line needs beyond the platform's REST family (docs/http.md, docs/cli.md). */

const RETENTION = 'urn:li:structuredProperty:io.acryl.privacy.retentionTime';
const ENTRIES = [
  {
    id: 'io.acryl.privacy.retentionTime',
    type: 'number',
    cardinality: 'MULTIPLE',
    entity_types: ['dataset'],
    allowed_values: [{ value: 30 }, { value: 90 }],
  },
  { urn: 'urn:li:structuredProperty:io.acryl.tier', qualified_name: 'io.acryl.tier', type: 'string', entity_types: ['dataset'] },
];

let t: TestServer;
let admin: string;
let editor: string;
let reader: string;
const entityPath = (type: string, urn: string) => `/openapi/v2/entity/${type}/${enc(urn)}`;

beforeAll(async () => {
  t = await startTestServer();
  admin = t.adminToken;
  editor = await t.tokenFor(EDITOR);
  reader = await t.tokenFor(READER);
});
afterAll(() => t.close());

describe('POST /operations?action=upsertStructuredPropertyDefinitions', () => {
  it('writes the entries of a definitions file at once and reports each outcome', async () => {
    const path = '/gms/operations?action=upsertStructuredPropertyDefinitions';
    const created = await call(t.url, 'POST', path, { token: admin, body: { entries: ENTRIES } });
    expect(created.status).toBe(200);
    expect(created.json).toEqual({
      value: [
        { urn: RETENTION, outcome: 'created' },
        { urn: 'urn:li:structuredProperty:io.acryl.tier', outcome: 'created' },
      ],
    });
    const again = await call(t.url, 'POST', path, {
      token: admin,
      body: { entries: [{ ...ENTRIES[0], display_name: 'Retention' }, ENTRIES[1]] },
    });
    expect(again.json.value.map((r: { outcome: string }) => r.outcome)).toEqual(['updated', 'unchanged']);
  });

  it('one bad entry: 400 listing every violation with the entry index, nothing written', async () => {
    const path = '/operations?action=upsertStructuredPropertyDefinitions';
    const bad = await call(t.url, 'POST', path, {
      token: admin,
      body: {
        entries: [
          { id: 'io.fresh', type: 'string', entity_types: ['dataset'] },
          { id: 'io.bad', type: 'numbr', entity_types: ['dataset'], colour: 1 },
        ],
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('INVALID_INPUT');
    expect(bad.json.error.details.map((d: { path: string }) => d.path)).toEqual(['/1/colour']);
    expect(
      (await call(t.url, 'GET', entityPath('structuredProperty', 'urn:li:structuredProperty:io.fresh'), { token: reader })).status,
    ).toBe(404);

    const shape = await call(t.url, 'POST', path, { token: admin, body: [ENTRIES[0]] });
    expect(shape.status).toBe(400);
    expect(shape.json.error.details).toEqual([
      { path: 'body', message: 'upsertStructuredPropertyDefinitions needs a JSON body { entries: [<definitions of the YAML file>] }' },
    ]);
    const refused = await call(t.url, 'POST', path, { token: editor, body: { entries: ENTRIES } });
    expect(refused.status).toBe(403);
    expect(refused.json.error.message).toContain('MANAGE_STRUCTURED_PROPERTIES');
  });
});

describe('DELETE /openapi/v2/entity/{entityName}/{urn} with a report', () => {
  it('?dryRun=true counts and changes nothing; hard=false soft-deletes any entity; the answer is the report', async () => {
    await call(t.url, 'POST', '/operations?action=upsertStructuredPropertyDefinitions', { token: admin, body: { entries: ENTRIES } });
    const values = await call(t.url, 'POST', `${entityPath('dataset', DATASET)}/structuredProperties`, {
      token: editor,
      body: { properties: [{ propertyUrn: RETENTION, values: [{ double: 30 }] }] },
    });
    expect(values.status).toBe(200);

    const dry = await call(t.url, 'DELETE', `/gms${entityPath('structuredProperty', RETENTION)}?hard=true&dryRun=true`, { token: admin });
    expect(dry.status).toBe(200);
    expect(dry.json).toEqual({
      urn: RETENTION,
      entityType: 'structuredProperty',
      mode: 'hard',
      dryRun: true,
      changed: true,
      entitiesWithValues: 1,
    });
    expect((await call(t.url, 'GET', entityPath('structuredProperty', RETENTION), { token: reader })).status).toBe(200);

    const soft = await call(t.url, 'DELETE', `${entityPath('structuredProperty', RETENTION)}?hard=false`, { token: admin });
    expect(soft.json).toEqual({
      urn: RETENTION,
      entityType: 'structuredProperty',
      mode: 'soft',
      dryRun: false,
      changed: true,
      entitiesWithValues: 1,
    });

    const dataset = await call(t.url, 'DELETE', `${entityPath('dataset', DATASET)}?hard=false`, { token: editor });
    expect(dataset.json).toEqual({ urn: DATASET, entityType: 'dataset', mode: 'soft', dryRun: false, changed: true });
    const status = await call(t.url, 'GET', `${entityPath('dataset', DATASET)}/status`, { token: reader });
    expect(status.json).toEqual({ value: { removed: true } });

    const badFlag = await call(t.url, 'DELETE', `${entityPath('dataset', DATASET)}?dryRun=maybe`, { token: editor });
    expect(badFlag.status).toBe(400);
    expect(badFlag.json.error.details).toEqual([{ path: 'dryRun', message: 'must be true or false, got "maybe"' }]);
    const refused = await call(t.url, 'DELETE', `${entityPath('structuredProperty', RETENTION)}?hard=true&dryRun=true`, { token: editor });
    expect(refused.status).toBe(403);
  });
});

describe('POST /operations?action=reindex', () => {
  it('rebuilds the search documents for a holder of MANAGE_SYSTEM_OPERATIONS', async () => {
    const done = await call(t.url, 'POST', '/gms/operations?action=reindex', { token: admin });
    expect(done.status).toBe(200);
    expect(done.json.value).toMatchObject({ skipped: 0, done: true });
    expect(done.json.value.processed).toBeGreaterThanOrEqual(3);
    const batched = await call(t.url, 'POST', '/operations?action=reindex', { token: admin, body: { batchSize: 1 } });
    expect(batched.json.value.processed).toBe(done.json.value.processed);
    const badBatch = await call(t.url, 'POST', '/operations?action=reindex', { token: admin, body: { batchSize: 0 } });
    expect(badBatch.status).toBe(400);
    const refused = await call(t.url, 'POST', '/operations?action=reindex', { token: editor });
    expect(refused.status).toBe(403);
    expect(refused.json.error.message).toContain('MANAGE_SYSTEM_OPERATIONS');
  });
});

describe('GET /openapi/v2/me', () => {
  it('answers whom the token acts as, and 401 without one', async () => {
    expect(await call(t.url, 'GET', '/gms/openapi/v2/me', { token: editor })).toMatchObject({ status: 200, json: { urn: EDITOR } });
    expect((await call(t.url, 'GET', '/openapi/v2/me', {})).status).toBe(401);
  });
});
