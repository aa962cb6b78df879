import type { ConformanceHarness } from './types';
import { expectCode, rejectionDetails, T0 } from './support';
import {
  ACTORS,
  appendProfiles,
  CHART,
  DATASET,
  offsetsOf,
  PROFILE_INDEX_NAME,
  profileRow,
  rowCounts,
  sizeMbOf,
  USAGE_INDEX_NAME,
  withTimeseriesCatalog,
} from './timeseries-operations-support';
import { registerTruncationOperationTests } from './timeseries-truncation-operations';

/** The (entity type, timeseries aspect) pairs of the built-in registry, as index names. */
const BUILT_IN_INDEXES = [
  'chart_chartusagestatisticsaspect_v1',
  'dashboard_dashboardusagestatisticsaspect_v1',
  'datajob_operationaspect_v1',
  'dataset_datasetprofileaspect_v1',
  'dataset_datasetusagestatisticsaspect_v1',
  'dataset_operationaspect_v1',
];

/**
 * `catalog.timeseries` over the adapter: appends, queries, index sizes, truncation, privileges and
 * bad input. Adapter-independent: each scenario runs on a catalog over a fresh adapter.
 */
export function registerTimeseriesOperationsTests(harness: ConformanceHarness): void {
  const { describe, it, expect } = harness;

  describe('timeseries operations: append and query', () => {
    it('appends rows (never overwriting, equal times kept) and reads them newest first', async () => {
      await withTimeseriesCatalog(harness, async ({ catalog }) => {
        const one = await catalog.timeseries.append(ACTORS.writer, DATASET.a, 'datasetProfile', profileRow(10));
        expect(one).toEqual({
          urn: DATASET.a,
          aspect: 'datasetProfile',
          indexName: PROFILE_INDEX_NAME,
          rows: [{ urn: DATASET.a, timestampMillis: T0 + 10, value: profileRow(10) }],
        });
        await catalog.timeseries.append(ACTORS.writer, DATASET.a, 'datasetProfile', [
          profileRow(30),
          profileRow(20),
          profileRow(10, { rowCount: 99 }),
        ]);
        await catalog.timeseries.append(ACTORS.writer, DATASET.b, 'datasetProfile', [profileRow(25)]);
        const page = await catalog.timeseries.query(ACTORS.reader, { urn: DATASET.a, aspect: 'datasetProfile', count: 100 });
        expect(page.results.map((r) => [r.timestampMillis - T0, r.value.rowCount])).toEqual([
          [30, 30],
          [20, 20],
          [10, 99],
          [10, 10],
        ]);
        expect(page.results[0]).toEqual({ urn: DATASET.a, timestampMillis: T0 + 30, value: profileRow(30) });
        expect(page.scrollId).toBeUndefined();
        const all = await catalog.timeseries.query(ACTORS.reader, { entityType: 'dataset', aspect: 'datasetProfile', count: 100 });
        expect(all.results.map((r) => r.timestampMillis - T0)).toEqual([30, 25, 20, 10, 10]);
        const byUrnType = await catalog.timeseries.query(ACTORS.reader, {
          entityType: 'urn:li:entityType:datahub.dataset',
          aspect: 'datasetProfile',
        });
        expect(byUrnType.results).toHaveLength(5);
      });
    });

    it('filters by inclusive time range and pages with scrollId', async () => {
      await withTimeseriesCatalog(harness, async ({ catalog }) => {
        await catalog.timeseries.append(
          ACTORS.writer,
          DATASET.a,
          'datasetProfile',
          [1, 2, 3, 4, 5, 6, 7].map((i) => profileRow(i * 10)),
        );
        const ranged = await catalog.timeseries.query(ACTORS.reader, {
          urn: DATASET.a,
          aspect: 'datasetProfile',
          startTimeMillis: T0 + 20,
          endTimeMillis: T0 + 50,
          count: 10,
        });
        expect(ranged.results.map((r) => r.timestampMillis - T0)).toEqual([50, 40, 30, 20]);
        expect(await offsetsOf(catalog, DATASET.a, 'datasetProfile', 3)).toEqual([70, 60, 50, 40, 30, 20, 10]);
        const first = await catalog.timeseries.query(ACTORS.reader, { urn: DATASET.a, aspect: 'datasetProfile', count: 2 });
        expect(first.results).toHaveLength(2);
        expect(typeof first.scrollId).toBe('string');
        const defaults = await catalog.timeseries.query(ACTORS.reader, { urn: DATASET.a, aspect: 'datasetProfile' });
        expect(defaults.results).toHaveLength(7);
        // A scroll id only continues the query it came from.
        await expectCode(
          expect,
          catalog.timeseries.query(ACTORS.reader, { urn: DATASET.b, aspect: 'datasetProfile', scrollId: first.scrollId }),
          'INVALID_INPUT',
        );
        await expectCode(
          expect,
          catalog.timeseries.query(ACTORS.reader, { urn: DATASET.a, aspect: 'datasetProfile', scrollId: 'garbage' }),
          'INVALID_INPUT',
        );
        expect(await catalog.timeseries.query(ACTORS.reader, { entityType: 'chart', aspect: 'chartUsageStatistics' })).toEqual({
          results: [],
        });
      });
    });

    it('refuses bad rows with every violation and its path, and stores none of them', async () => {
      await withTimeseriesCatalog(harness, async ({ catalog, adapter }) => {
        const bad = [
          profileRow(1),
          { rowCount: 3 },
          { timestampMillis: -5 },
          { timestampMillis: 1.5 },
          { timestampMillis: T0, rowCount: 'many' },
        ];
        const rejected = await rejectionDetails(catalog.timeseries.append(ACTORS.writer, DATASET.a, 'datasetProfile', bad));
        expect(rejected.code).toBe('INVALID_INPUT');
        expect(rejected.paths).toEqual(['/1/timestampMillis', '/2/timestampMillis', '/3/timestampMillis', '/4/rowCount']);
        expect(
          (await rejectionDetails(catalog.timeseries.append(ACTORS.writer, DATASET.a, 'datasetProfile', { rowCount: 1 }))).paths,
        ).toEqual(['/timestampMillis']);
        expect((await rejectionDetails(catalog.timeseries.append(ACTORS.writer, DATASET.a, 'datasetProfile', []))).paths).toEqual([
          '/rows',
        ]);
        expect(await rowCounts(adapter, T0 + 1_000)).toEqual({ total: 0, matching: 0 });
      });
    });

    it('refuses unknown and non-timeseries aspects, aspects of another entity type and bad URNs', async () => {
      await withTimeseriesCatalog(harness, async ({ catalog }) => {
        const paths = async (urn: string, aspect: string) =>
          rejectionDetails(catalog.timeseries.append(ACTORS.writer, urn, aspect, profileRow(1)));
        expect(await paths(DATASET.a, 'datasetProperties')).toEqual({ code: 'INVALID_INPUT', paths: ['/aspect'] });
        expect(await paths(DATASET.a, 'noSuchAspect')).toEqual({ code: 'INVALID_INPUT', paths: ['/aspect'] });
        expect(await paths(DATASET.a, 'chartUsageStatistics')).toEqual({ code: 'INVALID_INPUT', paths: ['/aspect'] });
        expect(await paths('urn:li:spaceship:x', 'datasetProfile')).toEqual({ code: 'INVALID_INPUT', paths: ['/urn'] });
        expect(await paths('not-a-urn', 'datasetProfile')).toEqual({ code: 'INVALID_INPUT', paths: ['/urn'] });
        await catalog.timeseries.append(ACTORS.writer, CHART, 'chartUsageStatistics', { timestampMillis: T0, viewsCount: 3 });
        const q = (input: Parameters<typeof catalog.timeseries.query>[1]) =>
          rejectionDetails(catalog.timeseries.query(ACTORS.reader, input));
        expect(await q({ aspect: 'datasetProfile' })).toEqual({ code: 'INVALID_INPUT', paths: ['/entityType'] });
        expect(await q({ urn: DATASET.a, entityType: 'chart', aspect: 'datasetProfile' })).toEqual({
          code: 'INVALID_INPUT',
          paths: ['/entityType'],
        });
        expect(await q({ urn: DATASET.a, entityType: 'spaceship', aspect: 'datasetProfile' })).toEqual({
          code: 'INVALID_INPUT',
          paths: ['/entityType'],
        });
        expect(await q({ entityType: 'spaceship', aspect: 'datasetProfile' })).toEqual({ code: 'INVALID_INPUT', paths: ['/entityType'] });
        expect(
          (await catalog.timeseries.query(ACTORS.reader, { urn: DATASET.a, entityType: 'dataset', aspect: 'datasetProfile' })).results,
        ).toEqual([]);
        expect(await q({ entityType: 'dataset', aspect: 'status' })).toEqual({ code: 'INVALID_INPUT', paths: ['/aspect'] });
        expect(await q({ entityType: 'dataset', aspect: 'datasetProfile', count: 0, startTimeMillis: -1 })).toEqual({
          code: 'INVALID_INPUT',
          paths: ['/startTimeMillis', '/count'],
        });
        expect(await q({ entityType: 'dataset', aspect: 'datasetProfile', startTimeMillis: 5, endTimeMillis: 4 })).toEqual({
          code: 'INVALID_INPUT',
          paths: ['/endTimeMillis'],
        });
      });
    });

    it('appendMany appends rows of many entities of one type at once, or none of them', async () => {
      await withTimeseriesCatalog(harness, async ({ catalog, adapter }) => {
        const result = await catalog.timeseries.appendMany(ACTORS.writer, 'datasetProfile', [
          { urn: DATASET.a, value: profileRow(1) },
          { urn: DATASET.b, value: profileRow(2) },
          { urn: DATASET.a, value: profileRow(3) },
        ]);
        expect(result).toEqual({ aspect: 'datasetProfile', indexName: PROFILE_INDEX_NAME, appended: 3 });
        expect(await offsetsOf(catalog, DATASET.a)).toEqual([3, 1]);
        expect(await offsetsOf(catalog, DATASET.b)).toEqual([2]);
        const refused = await rejectionDetails(
          catalog.timeseries.appendMany(ACTORS.writer, 'datasetProfile', [
            { urn: DATASET.a, value: { rowCount: 1 } },
            { urn: CHART, value: profileRow(5) },
            { urn: 'nope', value: profileRow(6) },
            { urn: DATASET.b, value: profileRow(7) },
          ]),
        );
        expect(refused).toEqual({ code: 'INVALID_INPUT', paths: ['/0/value/timestampMillis', '/1/urn', '/2/urn'] });
        expect((await rejectionDetails(catalog.timeseries.appendMany(ACTORS.writer, 'datasetProfile', []))).code).toBe('INVALID_INPUT');
        expect(
          (await rejectionDetails(catalog.timeseries.appendMany(ACTORS.writer, 'status', [{ urn: DATASET.a, value: profileRow(8) }])))
            .paths,
        ).toEqual(['/aspect']);
        await expectCode(
          expect,
          catalog.timeseries.appendMany(ACTORS.reader, 'datasetProfile', [{ urn: DATASET.a, value: profileRow(9) }]),
          'FORBIDDEN',
        );
        expect(await rowCounts(adapter, T0 + 1_000)).toEqual({ total: 3, matching: 3 });
      });
    });

    it('the generic entity write path appends a timeseries aspect as a row, checked as an append, never stored as an aspect', async () => {
      await withTimeseriesCatalog(harness, async ({ catalog }) => {
        const refused = await rejectionDetails(
          catalog.entities.upsertAspect(ACTORS.admin, DATASET.a, 'datasetProfile', { rowCount: 1 } as never),
        );
        expect(refused).toEqual({ code: 'INVALID_INPUT', paths: ['/timestampMillis'] });
        expect(await offsetsOf(catalog, DATASET.a)).toEqual([]);
        await catalog.entities.upsertAspect(ACTORS.admin, DATASET.a, 'datasetProfile', profileRow(1) as never);
        expect(await offsetsOf(catalog, DATASET.a)).toEqual([1]);
        expect((await catalog.entities.get(ACTORS.admin, DATASET.a))?.aspects.datasetProfile).toBeUndefined();
      });
    });

    it('needs EDIT_ENTITY to append and an authenticated actor to read', async () => {
      await withTimeseriesCatalog(harness, async ({ catalog }) => {
        for (const actor of [ACTORS.reader, ACTORS.sizer, ACTORS.truncater]) {
          await expectCode(expect, catalog.timeseries.append(actor, DATASET.a, 'datasetProfile', profileRow(1)), 'FORBIDDEN');
        }
        await expectCode(expect, catalog.timeseries.append('', DATASET.a, 'datasetProfile', profileRow(1)), 'UNAUTHENTICATED');
        await expectCode(expect, catalog.timeseries.query('', { urn: DATASET.a, aspect: 'datasetProfile' }), 'UNAUTHENTICATED');
        await catalog.timeseries.append(ACTORS.admin, DATASET.a, 'datasetProfile', profileRow(1));
        expect(await offsetsOf(catalog, DATASET.a)).toEqual([1]);
      });
    });
  });

  describe('timeseries operations: index sizes', () => {
    it('lists every timeseries index, empty ones at 0, with exactly the contract fields', async () => {
      await withTimeseriesCatalog(harness, async ({ catalog }) => {
        const sizes = await catalog.timeseries.getIndexSizes(ACTORS.sizer);
        expect(sizes.map((s) => s.indexName)).toEqual(BUILT_IN_INDEXES);
        // Names lower-cased as the established platform reads them from the index name.
        expect(sizes.find((s) => s.indexName === USAGE_INDEX_NAME)).toEqual({
          aspectName: 'datasetusagestatistics',
          sizeMb: 0,
          indexName: USAGE_INDEX_NAME,
          entityName: 'dataset',
        });
        expect(sizes.map((s) => Object.keys(s).sort())).toEqual(sizes.map(() => ['aspectName', 'entityName', 'indexName', 'sizeMb']));
      });
    });

    it('grows with ingest, by index, and reports bytes / 1,000,000', async () => {
      await withTimeseriesCatalog(harness, async ({ catalog, adapter }) => {
        await appendProfiles(catalog, 400);
        await catalog.timeseries.append(ACTORS.writer, CHART, 'chartUsageStatistics', { timestampMillis: T0, viewsCount: 1 });
        const sizes = await catalog.timeseries.getIndexSizes(ACTORS.sizer);
        const bytes = new Map((await adapter.timeseriesIndexSizes()).map((s) => [s.indexName, s.bytes]));
        const profile = sizes.find((s) => s.indexName === PROFILE_INDEX_NAME);
        const chart = sizes.find((s) => s.indexName === 'chart_chartusagestatisticsaspect_v1');
        expect(profile?.sizeMb).toBe((bytes.get(PROFILE_INDEX_NAME) ?? -1) / 1_000_000);
        expect(profile?.sizeMb ?? 0).toBeGreaterThan(0.1);
        expect(chart?.sizeMb ?? 0).toBeGreaterThan(0);
        expect(profile?.sizeMb ?? 0).toBeGreaterThan(chart?.sizeMb ?? 0);
        expect(sizes.find((s) => s.indexName === USAGE_INDEX_NAME)?.sizeMb).toBe(0);
        const before = profile?.sizeMb ?? 0;
        await appendProfiles(catalog, 400);
        expect(await sizeMbOf(catalog, PROFILE_INDEX_NAME)).toBeGreaterThan(before * 1.5);
      });
    });

    it('names the indices of host-registered timeseries aspects in lower case', async () => {
      await withTimeseriesCatalog(
        harness,
        async ({ catalog }) => {
          await catalog.timeseries.append(ACTORS.writer, 'urn:li:sensorBoard:b1', 'sensorReadings', { timestampMillis: T0, celsius: 21 });
          const record = (await catalog.timeseries.getIndexSizes(ACTORS.admin)).find((s) => s.entityName === 'sensorboard');
          expect(record?.indexName).toBe('sensorboard_sensorreadingsaspect_v1');
          expect(record?.aspectName).toBe('sensorreadings');
          // The names as reported are accepted by a truncation.
          const counted = await catalog.timeseries.truncate(ACTORS.admin, {
            entityType: record!.entityName,
            aspect: record!.aspectName,
            endTimeMillis: T0,
          });
          expect(counted.message.startsWith('Delete 1 out of 1 rows')).toBe(true);
          expect(record?.sizeMb ?? 0).toBeGreaterThan(0);
          const bad = await rejectionDetails(
            catalog.timeseries.append(ACTORS.writer, 'urn:li:sensorBoard:b1', 'sensorReadings', { timestampMillis: T0, celsius: 'warm' }),
          );
          expect(bad).toEqual({ code: 'INVALID_INPUT', paths: ['/celsius'] });
        },
        {
          aspects: [{ name: 'sensorReadings', timeseries: true, schema: { type: 'object', properties: { celsius: { type: 'number' } } } }],
          entityTypes: [{ name: 'sensorBoard', graphqlType: 'SENSOR_BOARD', aspects: ['status', 'sensorReadings'] }],
        },
      );
    });

    it('needs GET_TIMESERIES_INDEX_SIZES', async () => {
      await withTimeseriesCatalog(harness, async ({ catalog }) => {
        for (const actor of [ACTORS.reader, ACTORS.writer, ACTORS.truncater])
          await expectCode(expect, catalog.timeseries.getIndexSizes(actor), 'FORBIDDEN');
        await expectCode(expect, catalog.timeseries.getIndexSizes(''), 'UNAUTHENTICATED');
        expect(await catalog.timeseries.getIndexSizes(ACTORS.admin)).toHaveLength(BUILT_IN_INDEXES.length);
      });
    });

    it('shrinks when an entity and its rows are deleted', async () => {
      await withTimeseriesCatalog(harness, async ({ catalog }) => {
        await catalog.entities.upsertAspect(ACTORS.admin, DATASET.a, 'datasetProperties', { name: 'a' });
        await appendProfiles(catalog, 600);
        const before = await sizeMbOf(catalog, PROFILE_INDEX_NAME);
        expect(await catalog.entities.delete(ACTORS.admin, DATASET.a)).toBe(true);
        expect(await offsetsOf(catalog, DATASET.a)).toEqual([]);
        expect((await offsetsOf(catalog, DATASET.b)).length).toBe(300);
        const after = await sizeMbOf(catalog, PROFILE_INDEX_NAME);
        expect(after).toBeLessThan(before * 0.75);
        expect(after).toBeGreaterThan(0);
      });
    });
  });

  registerTruncationOperationTests(harness);
}
