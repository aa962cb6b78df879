import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADAPTERS, ADMIN, openHarness, type CompatHarness } from './harness';

const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,sales.orders,PROD)';
const CHART = 'urn:li:chart:(looker,sales)';
const DAY = 86_400_000;

describe.each(ADAPTERS)('DataHub timeseries operations (%s)', (kind) => {
  let h: CompatHarness;
  let now: number;
  beforeEach(async () => {
    h = await openHarness(kind);
    now = Date.now();
    // Ten usage rows a day apart, and one chart usage row: old rows for a truncation to find.
    await h.catalog.timeseries.append(
      ADMIN,
      DATASET,
      'datasetUsageStatistics',
      Array.from({ length: 10 }, (_, i) => ({ timestampMillis: now - i * DAY, uniqueUserCount: i })),
    );
    await h.catalog.timeseries.append(ADMIN, CHART, 'chartUsageStatistics', { timestampMillis: now - 40 * DAY, viewsCount: 1 });
  });
  afterEach(() => h.close());

  it('getIndexSizes reports names as docs/api/restli/get-index-sizes.md shows them', async () => {
    const answer = await h.request('POST', '/operations?action=getIndexSizes');
    expect(answer.status).toBe(200);
    const records = JSON.parse(answer.json.value as string) as Array<{
      aspectName: string;
      sizeMb: number;
      indexName: string;
      entityName: string;
    }>;
    // The record of the document's example, with its keys and lower-cased names.
    const usage = records.find((r) => r.indexName === 'dataset_datasetusagestatisticsaspect_v1')!;
    expect(Object.keys(usage).sort()).toEqual(['aspectName', 'entityName', 'indexName', 'sizeMb']);
    expect(usage).toMatchObject({
      aspectName: 'datasetusagestatistics',
      indexName: 'dataset_datasetusagestatisticsaspect_v1',
      entityName: 'dataset',
    });
    expect(usage.sizeMb).toBeGreaterThan(0);
    for (const record of records) {
      expect(record.aspectName).toBe(record.aspectName.toLowerCase());
      expect(record.entityName).toBe(record.entityName.toLowerCase());
    }
  });

  it('truncateTimeseriesAspect takes the names getIndexSizes reports; a real run answers its task id, which getEsTaskStatus reads back', async () => {
    // The dry-run body of docs/api/restli/truncate-time-series-aspect.md, with the aspect as getIndexSizes names it.
    const dry = await h.request('POST', '/operations?action=truncateTimeseriesAspect', {
      entityType: 'dataset',
      aspect: 'datasetusagestatistics',
      endTimeMillis: now - 5 * DAY,
    });
    expect(dry.status).toBe(200);
    expect(dry.json.value).toBe(
      'Delete 5 out of 10 rows (50.00%). Issuing a delete by query request. This was a dry run. Run with dryRun = false to execute.',
    );

    // The real-run body of the same page ("the output will be the Task ID of the asynchronous delete operation").
    const real = await h.request('POST', '/operations?action=truncateTimeseriesAspect', {
      entityType: 'dataset',
      aspect: 'datasetusagestatistics',
      endTimeMillis: now - 5 * DAY,
      dryRun: false,
      batchSize: 100,
      timeoutSeconds: 3600,
    });
    expect(real.status).toBe(200);
    const taskId = real.json.value as string;
    expect(taskId).toMatch(/^[A-Za-z0-9-]+$/);
    const before = JSON.parse((await h.request('POST', '/operations?action=getEsTaskStatus', { task: taskId })).json.value as string);
    expect(before).toMatchObject({ completed: false, taskId, status: { state: 'queued', rowsToDelete: 5 } });
    await h.catalog.settle();
    const after = JSON.parse((await h.request('POST', '/operations?action=getEsTaskStatus', { task: taskId })).json.value as string);
    expect(after).toMatchObject({
      completed: true,
      taskId,
      status: { state: 'completed', rowsDeleted: 5, aspect: 'datasetUsageStatistics' },
    });
    expect(after.runTimeNanos).toBeGreaterThanOrEqual(0);
    expect((await h.catalog.timeseries.query(ADMIN, { urn: DATASET, aspect: 'datasetUsageStatistics', count: 100 })).results).toHaveLength(
      5,
    );
    const unknown = await h.request('POST', '/operations?action=getEsTaskStatus', { task: 'no-such-task' });
    expect(JSON.parse(unknown.json.value as string)).toEqual({ error: 'no truncation has the task id no-such-task' });
  });

  it('the garbage-collection source (datahub_gc.py truncate_indices) runs its dry-run watch and its real runs', async () => {
    // truncate_indices: these (aspect, entity type) pairs, each truncate_timeseries_util(dry_run=False) then watched with dry_run=True.
    const pairs: Array<[string, string]> = [
      ['operation', 'dataset'],
      ['datasetusagestatistics', 'dataset'],
      ['chartUsageStatistics', 'chart'],
      ['dashboardUsageStatistics', 'dashboard'],
    ];
    const endTimeMillis = now - 30 * DAY; // truncate_index_older_than_days = 30
    for (const [aspect, entityType] of pairs) {
      const real = await h.request('POST', '/operations?action=truncateTimeseriesAspect', {
        entityType,
        aspect,
        endTimeMillis,
        dryRun: false,
      });
      expect(real.status, `${entityType}/${aspect}`).toBe(200);
      await h.catalog.settle();
      const watch = await h.request('POST', '/operations?action=truncateTimeseriesAspect', {
        entityType,
        aspect,
        endTimeMillis,
        dryRun: true,
      });
      const value = watch.json.value as string;
      // The watch loop reads the first two numbers of a dry run's answer.
      expect(value).toContain('This was a dry run');
      expect(value).toContain('out of');
      expect(Number(/\d+/.exec(value)![0])).toBe(0);
    }
    expect((await h.catalog.timeseries.query(ADMIN, { urn: CHART, aspect: 'chartUsageStatistics', count: 10 })).results).toEqual([]);
  });
});
