import type { JsonObject, StorageAdapter } from '../adapter/types';
import { createCatalog, type Catalog, type CatalogOptions } from '../catalog';
import { timeseriesIndexRef } from '../adapter/timeseries-index';
import type { ConformanceHarness } from './types';
import { T0 } from './support';

/** Actors of the timeseries scenarios, each holding exactly the privilege its name says. */
export const ACTORS = {
  admin: 'urn:li:corpuser:ts-admin',
  writer: 'urn:li:corpuser:ts-writer',
  sizer: 'urn:li:corpuser:ts-sizer',
  truncater: 'urn:li:corpuser:ts-truncater',
  reader: 'urn:li:corpuser:ts-reader',
} as const;

export const DATASET = {
  a: 'urn:li:dataset:(urn:li:dataPlatform:hive,ts.a,PROD)',
  b: 'urn:li:dataset:(urn:li:dataPlatform:hive,ts.b,PROD)',
} as const;
export const CHART = 'urn:li:chart:(looker,ts.chart)';

export const PROFILE_INDEX_NAME = 'dataset_datasetprofileaspect_v1';
export const USAGE_INDEX_NAME = 'dataset_datasetusagestatisticsaspect_v1';

/** A catalog clock the test moves by hand. */
export interface ManualClock {
  now: number;
  readonly read: () => number;
}

export function manualClock(start = T0): ManualClock {
  const clock = {
    now: start,
    read: () => clock.now,
  };
  return clock;
}

export interface TimeseriesFixture {
  catalog: Catalog;
  adapter: StorageAdapter;
  clock: ManualClock;
}

/**
 * A catalog over a fresh adapter from the harness, with background jobs run only by `settle()`
 * (so that the test decides when work happens), the actors above, and a manual clock.
 */
export async function withTimeseriesCatalog(
  harness: ConformanceHarness,
  test: (fixture: TimeseriesFixture) => Promise<void>,
  options: Partial<CatalogOptions> = {},
  wrap: (adapter: StorageAdapter) => StorageAdapter = (a) => a,
): Promise<void> {
  const adapter = await harness.createAdapter({});
  const clock = manualClock();
  const catalog = createCatalog({
    adapter: wrap(adapter),
    clock: clock.read,
    superUsers: [ACTORS.admin],
    policies: [
      { actors: [ACTORS.writer], privileges: ['EDIT_ENTITY'] },
      { actors: [ACTORS.sizer], privileges: ['GET_TIMESERIES_INDEX_SIZES'] },
      { actors: [ACTORS.truncater], privileges: ['TRUNCATE_TIMESERIES_INDEX'] },
    ],
    jobs: { background: false },
    onError: () => undefined,
    ...options,
  });
  try {
    await catalog.ready();
    await test({ catalog, adapter, clock });
  } finally {
    await catalog.close();
  }
}

/** A `datasetProfile` row `offset` ms after T0, padded so that sizes are far above page granularity. */
export function profileRow(offset: number, extra: JsonObject = {}): JsonObject {
  return { timestampMillis: T0 + offset, rowCount: offset, columnCount: 7, ...extra };
}

const PADDING = 'p'.repeat(300);

/** Appends `count` padded profile rows at offsets 1..count, alternating two datasets, in chunks. */
export async function appendProfiles(catalog: Catalog, count: number, actor: string = ACTORS.writer): Promise<void> {
  for (let start = 1; start <= count; start += 500) {
    const end = Math.min(count, start + 499);
    for (const urn of [DATASET.a, DATASET.b]) {
      const rows: JsonObject[] = [];
      for (let i = start; i <= end; i++) if ((i % 2 === 1) === (urn === DATASET.a)) rows.push(profileRow(i, { padding: PADDING }));
      if (rows.length) await catalog.timeseries.append(actor, urn, 'datasetProfile', rows);
    }
  }
}

/** Rows of the `datasetProfile` index (or another) at or before an end time, and in total, read through the adapter. */
export async function rowCounts(
  adapter: StorageAdapter,
  endTimeMillis: number,
  entityType = 'dataset',
  aspect = 'datasetProfile',
): Promise<{ total: number; matching: number }> {
  return adapter.countTimeseries(timeseriesIndexRef(entityType, aspect), endTimeMillis);
}

/** Offsets (from T0) of every row of an aspect of one entity, newest first, read page by page. */
export async function offsetsOf(catalog: Catalog, urn: string, aspect = 'datasetProfile', count = 1_000): Promise<number[]> {
  const out: number[] = [];
  let scrollId: string | undefined;
  for (let guard = 0; guard < 10_000; guard++) {
    const page = await catalog.timeseries.query(ACTORS.reader, { urn, aspect, count, ...(scrollId ? { scrollId } : {}) });
    out.push(...page.results.map((r) => r.timestampMillis - T0));
    scrollId = page.scrollId;
    if (!scrollId) break;
  }
  return out;
}

export async function sizeMbOf(catalog: Catalog, indexName: string): Promise<number> {
  const record = (await catalog.timeseries.getIndexSizes(ACTORS.admin)).find((r) => r.indexName === indexName);
  if (!record) throw new Error(`no size record for ${indexName}`);
  return record.sizeMb;
}
