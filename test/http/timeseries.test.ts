import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, DATASET, EDITOR, enc, READER, startTestServer, type TestServer } from './helpers';

const OTHER = 'urn:li:dataset:(urn:li:dataPlatform:hive,sales.customers,PROD)';
const T0 = 1_700_000_000_000;
const profile = (offset: number, rowCount: number) => ({ timestampMillis: T0 + offset, rowCount, columnCount: 3 });

let t: TestServer;
let admin: string;
let editor: string;
let reader: string;
const profilePath = (urn: string) => `/openapi/v2/entity/dataset/${enc(urn)}/datasetProfile`;

beforeAll(async () => {
  t = await startTestServer();
  admin = t.adminToken;
  editor = await t.tokenFor(EDITOR);
  reader = await t.tokenFor(READER);
});
afterAll(() => t.close());

describe('timeseries aspects over REST', () => {
  it('POST of a timeseries aspect appends a row (never overwrites); GET answers the newest', async () => {
    const first = await call(t.url, 'POST', profilePath(DATASET), { token: editor, body: profile(10, 100) });
    expect(first.status).toBe(200);
    expect(first.json).toEqual({ urn: DATASET, aspects: { datasetProfile: { value: profile(10, 100) } } });
    expect((await call(t.url, 'POST', `/gms${profilePath(DATASET)}`, { token: editor, body: profile(30, 300) })).status).toBe(200);
    const many = await call(t.url, 'POST', profilePath(DATASET), { token: editor, body: [profile(20, 200), profile(30, 301)] });
    expect(many.status).toBe(200);
    expect(many.json.aspects.datasetProfile.value).toEqual([profile(20, 200), profile(30, 301)]);
    expect((await call(t.url, 'POST', profilePath(OTHER), { token: editor, body: profile(40, 400) })).status).toBe(200);

    const newest = await call(t.url, 'GET', profilePath(DATASET), { token: reader });
    expect(newest.status).toBe(200);
    expect(newest.json).toEqual({ value: profile(30, 301) });
    const none = await call(t.url, 'GET', profilePath('urn:li:dataset:(urn:li:dataPlatform:hive,empty,PROD)'), { token: reader });
    expect(none.status).toBe(404);
  });

  it('a bad row is 400 listing each violation; appending without EDIT_ENTITY is 403', async () => {
    const bad = await call(t.url, 'POST', profilePath(DATASET), { token: editor, body: { rowCount: 'many' } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.details.map((d: { path: string }) => d.path)).toEqual(expect.arrayContaining(['/timestampMillis']));
    const refused = await call(t.url, 'POST', profilePath(DATASET), { token: reader, body: profile(50, 1) });
    expect(refused.status).toBe(403);
  });

  it('GET /openapi/v2/timeseries/{entityName}/{aspectName} pages newest first with scrollId', async () => {
    const seen: number[] = [];
    let scrollId: string | undefined;
    for (let page = 0; page < 10; page++) {
      const query = new URLSearchParams({ urn: DATASET, count: '2', ...(scrollId ? { scrollId } : {}) });
      const r = await call(t.url, 'GET', `/openapi/v2/timeseries/dataset/datasetProfile?${query}`, { token: reader });
      expect(r.status).toBe(200);
      seen.push(...r.json.results.map((row: { urn: string; value: { rowCount: number } }) => row.value.rowCount));
      scrollId = r.json.scrollId;
      if (!scrollId) break;
    }
    expect(seen).toEqual([301, 300, 200, 100]);

    const window = await call(
      t.url,
      'GET',
      `/gms/openapi/v2/timeseries/dataset/datasetProfile?startTimeMillis=${T0 + 15}&endTimeMillis=${T0 + 40}&count=10`,
      { token: reader },
    );
    expect(window.json.results.map((row: { urn: string; timestampMillis: number }) => [row.urn, row.timestampMillis - T0])).toEqual([
      [OTHER, 40],
      [DATASET, 30],
      [DATASET, 30],
      [DATASET, 20],
    ]);
    const badNumber = await call(t.url, 'GET', '/openapi/v2/timeseries/dataset/datasetProfile?startTimeMillis=yesterday', {
      token: reader,
    });
    expect(badNumber.status).toBe(400);
    expect(badNumber.json.error.details).toEqual([{ path: 'startTimeMillis', message: 'must be an integer, got "yesterday"' }]);
    const notTimeseries = await call(t.url, 'GET', '/openapi/v2/timeseries/dataset/datasetProperties', { token: reader });
    expect(notTimeseries.status).toBe(400);
  });
});

describe('POST /operations', () => {
  it('getIndexSizes answers { value: "<JSON text>" } with one record per timeseries index (root and /gms)', async () => {
    for (const path of ['/gms/operations?action=getIndexSizes', '/operations?action=getIndexSizes']) {
      const r = await call(t.url, 'POST', path, { token: admin });
      expect(r.status).toBe(200);
      expect(typeof r.json.value).toBe('string');
      const records = JSON.parse(r.json.value) as Array<{ aspectName: string; sizeMb: number; indexName: string; entityName: string }>;
      const profileIndex = records.find((x) => x.aspectName === 'datasetprofile')!;
      expect(profileIndex).toMatchObject({ entityName: 'dataset', indexName: 'dataset_datasetprofileaspect_v1' });
      expect(profileIndex.sizeMb).toBeGreaterThan(0);
      for (const record of records) expect(Object.keys(record).sort()).toEqual(['aspectName', 'entityName', 'indexName', 'sizeMb']);
    }
  });

  it('getIndexSizes without GET_TIMESERIES_INDEX_SIZES is 403, without credentials 401', async () => {
    const refused = await call(t.url, 'POST', '/gms/operations?action=getIndexSizes', { token: reader });
    expect(refused.status).toBe(403);
    expect(refused.json.error.message).toContain('GET_TIMESERIES_INDEX_SIZES');
    const anonymous = await call(t.url, 'POST', '/gms/operations?action=getIndexSizes');
    expect(anonymous.status).toBe(401);
  });

  it('truncateTimeseriesAspect: a dry run counts, a real run removes in the background', async () => {
    const body = { entityType: 'dataset', aspect: 'datasetProfile', endTimeMillis: T0 + 20 };
    const dry = await call(t.url, 'POST', '/gms/operations?action=truncateTimeseriesAspect', { token: admin, body });
    expect(dry.status).toBe(200);
    expect(dry.json.value).toMatch(/^Delete 2 out of 5 rows \(40(\.0+)?%\)\. /);
    const real = await call(t.url, 'POST', '/gms/operations?action=truncateTimeseriesAspect', {
      token: admin,
      body: { ...body, dryRun: false },
    });
    expect(real.status).toBe(200);
    // A real run answers the task id alone; getEsTaskStatus reads its state back.
    expect(real.json.value).toMatch(/^[\w-]+$/);
    await t.catalog.settle();
    const status = await call(t.url, 'POST', '/gms/operations?action=getEsTaskStatus', { token: admin, body: { task: real.json.value } });
    expect(status.status).toBe(200);
    expect(JSON.parse(status.json.value)).toMatchObject({
      completed: true,
      taskId: real.json.value,
      status: { state: 'completed', rowsDeleted: 2 },
    });
    await t.catalog.settle();
    const left = await call(t.url, 'GET', `/openapi/v2/timeseries/dataset/datasetProfile?count=10`, { token: admin });
    expect(left.json.results).toHaveLength(3);
  });

  it('truncateTimeseriesAspect refusals: privilege 403, no body 400, bad body 400, wrong content type 415', async () => {
    const body = { entityType: 'dataset', aspect: 'datasetProfile', endTimeMillis: T0 };
    expect((await call(t.url, 'POST', '/gms/operations?action=truncateTimeseriesAspect', { token: editor, body })).status).toBe(403);
    const noBody = await call(t.url, 'POST', '/gms/operations?action=truncateTimeseriesAspect', { token: admin });
    expect(noBody.status).toBe(400);
    const bad = await call(t.url, 'POST', '/gms/operations?action=truncateTimeseriesAspect', {
      token: admin,
      body: { entityType: 'dataset', aspect: 'nope' },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('INVALID_INPUT');
    const form = await call(t.url, 'POST', '/gms/operations?action=truncateTimeseriesAspect', {
      token: admin,
      rawBody: 'a=b',
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(form.status).toBe(415);
  });

  it('an unknown or missing action is 400 naming the actions; GET is 405', async () => {
    const unknown = await call(t.url, 'POST', '/gms/operations?action=restoreIndices', { token: admin });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error.message).toContain('getIndexSizes, truncateTimeseriesAspect, getEsTaskStatus');
    expect((await call(t.url, 'POST', '/gms/operations?action=toString', { token: admin })).status).toBe(400);
    expect((await call(t.url, 'POST', '/gms/operations', { token: admin })).status).toBe(400);
    const get = await call(t.url, 'GET', '/gms/operations?action=getIndexSizes', { token: admin });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });
});
