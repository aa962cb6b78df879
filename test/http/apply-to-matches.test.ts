import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, call, EDITOR, READER, startTestServer, type TestServer } from './helpers';

const TIER = 'urn:li:structuredProperty:io.test.tier';
const PATH = '/openapi/v3/structuredProperties/applyToMatches';
const dataset = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,t${i},PROD)`;

let t: TestServer;
let editor: string;
let reader: string;
beforeAll(async () => {
  t = await startTestServer();
  editor = await t.tokenFor(EDITOR);
  reader = await t.tokenFor(READER);
  await t.catalog.properties.create(ADMIN, { qualifiedName: 'io.test.tier', valueType: 'string', entityTypes: ['dataset'] });
  await t.catalog.entities.upsertMany(
    ADMIN,
    [0, 1, 2, 3].map((i) => ({ urn: dataset(i), aspects: { datasetProperties: { name: `t${i}` } } })),
  );
});
afterAll(() => t.close());

describe('POST/GET/DELETE /openapi/v3/structuredProperties/applyToMatches', () => {
  const body = {
    types: ['dataset'],
    orFilters: [{ and: [{ field: 'platform', value: 'urn:li:dataPlatform:hive' }] }],
    set: [{ propertyUrn: TIER, values: [{ string: 'gold' }] }],
  };

  it('a dry run answers 200 with matched, sample and violations; nothing written', async () => {
    const r = await call(t.url, 'POST', PATH, { token: editor, body: { ...body, dryRun: true } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ matched: 4, violations: [] });
    expect((r.json as { sample: unknown[] }).sample).toHaveLength(4);
    expect(await t.catalog.properties.getValues(ADMIN, dataset(0))).toEqual([]);
  });

  it('a real run answers 202 with the job; GET reads its status, DELETE of a finished job says it finished', async () => {
    expect((await call(t.url, 'POST', PATH, { token: reader, body })).status).toBe(403);
    const r = await call(t.url, 'POST', PATH, { token: editor, body: { ...body, chunkSize: 3 } });
    expect(r.status).toBe(202);
    const { jobId } = r.json as { jobId: string };
    expect(r.json).toEqual({ jobId, matched: 4 });
    expect((await call(t.url, 'GET', `${PATH}/${jobId}`, { token: reader })).status).toBe(403);
    await t.catalog.settle();
    const status = await call(t.url, 'GET', `${PATH}/${jobId}`, { token: editor });
    expect(status.status).toBe(200);
    expect(status.json).toMatchObject({ jobId, state: 'DONE', done: 4, total: 4, failed: 0, startedBy: EDITOR });
    const cancel = await call(t.url, 'DELETE', `${PATH}/${jobId}`, { token: editor });
    expect(cancel.status).toBe(200);
    expect(cancel.json).toMatchObject({ jobId, cancelled: false, state: 'DONE' });
    expect((await call(t.url, 'GET', `${PATH}/nope`, { token: editor })).status).toBe(404);
    expect((await t.catalog.properties.getValues(ADMIN, dataset(3)))[0]).toMatchObject({ values: [{ string: 'gold' }] });
  });

  it('bad input is 400 with the path of each problem', async () => {
    const r = await call(t.url, 'POST', PATH, {
      token: editor,
      body: { set: [{ propertyUrn: TIER, values: [{ nope: 1 }] }], dryRun: true },
    });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.json)).toContain('/set/0/values/0');
  });
});
