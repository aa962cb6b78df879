import type { StorageAdapter, TimeseriesIndexRef, TimeseriesQuery, TimeseriesRow } from '../adapter/types';
import type { ConformanceHarness } from './types';
import { OPERATION_INDEX, PROFILE_INDEX, T0, URN, withAdapter } from './support';

function row(urn: string, offset: number, extra: Record<string, string | number> = {}): TimeseriesRow {
  return { urn, timestampMillis: T0 + offset, value: { timestampMillis: T0 + offset, rowCount: offset, ...extra } };
}

/** A label per row so orders read well in failures: `<urn letter>@<offset>[#tag]`. */
function label(r: TimeseriesRow): string {
  const tag = typeof r.value.tag === 'string' ? `#${r.value.tag}` : '';
  return `${r.urn === URN.a ? 'a' : r.urn === URN.b ? 'b' : r.urn}@${r.timestampMillis - T0}${tag}`;
}

async function queryAll(adapter: StorageAdapter, query: Omit<TimeseriesQuery, 'cursor'>): Promise<{ labels: string[]; pages: number }> {
  const labels: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  // Bounded, so that a cursor that never ends fails the test instead of hanging it.
  for (let guard = 0; guard < 100; guard++) {
    const page = await adapter.queryTimeseries({ ...query, cursor });
    if (page.rows.length > query.limit) throw new Error(`a page of ${page.rows.length} rows exceeds the limit ${query.limit}`);
    if (page.rows.length > 0) pages++;
    labels.push(...page.rows.map(label));
    cursor = page.nextCursor;
    if (cursor === undefined || page.rows.length === 0) break;
  }
  return { labels, pages };
}

/** Timeseries: append-only rows, newest-first queries with cursors, counts, truncation and index sizes. */
export function registerTimeseriesTests(harness: ConformanceHarness): void {
  const { describe, it, expect } = harness;

  /** a@10 b@20 a@30 a@30#second b@40 a@50, appended in two calls, out of time order. */
  async function seed(adapter: StorageAdapter): Promise<void> {
    await adapter.appendTimeseries(PROFILE_INDEX, [row(URN.a, 30), row(URN.a, 10), row(URN.b, 40)]);
    await adapter.appendTimeseries(PROFILE_INDEX, [row(URN.b, 20), row(URN.a, 30, { tag: 'second' }), row(URN.a, 50)]);
  }

  describe('timeseries', () => {
    it('appends rows and returns them newest first, equal times newest appended first, values intact', async () => {
      await withAdapter(harness, async (adapter) => {
        await seed(adapter);
        const page = await adapter.queryTimeseries({ ...PROFILE_INDEX, limit: 100 });
        expect(page.rows.map(label)).toEqual(['a@50', 'b@40', 'a@30#second', 'a@30', 'b@20', 'a@10']);
        expect(page.nextCursor).toBeUndefined();
        expect(page.rows[2]).toEqual({
          urn: URN.a,
          timestampMillis: T0 + 30,
          value: { timestampMillis: T0 + 30, rowCount: 30, tag: 'second' },
        });
      });
    });

    it('filters by URN and by inclusive start and end times', async () => {
      await withAdapter(harness, async (adapter) => {
        await seed(adapter);
        const q = (extra: Partial<TimeseriesQuery>) =>
          adapter.queryTimeseries({ ...PROFILE_INDEX, limit: 100, ...extra }).then((p) => p.rows.map(label));
        expect(await q({ urn: URN.a })).toEqual(['a@50', 'a@30#second', 'a@30', 'a@10']);
        expect(await q({ startTimeMillis: T0 + 20, endTimeMillis: T0 + 40 })).toEqual(['b@40', 'a@30#second', 'a@30', 'b@20']);
        expect(await q({ urn: URN.b, startTimeMillis: T0 + 21 })).toEqual(['b@40']);
        expect(await q({ urn: URN.a, endTimeMillis: T0 + 10 })).toEqual(['a@10']);
        expect(await q({ urn: URN.unknown })).toEqual([]);
      });
    });

    it('pages with the cursor, also through rows with equal times, and with filters', async () => {
      await withAdapter(harness, async (adapter) => {
        await seed(adapter);
        await adapter.appendTimeseries(
          PROFILE_INDEX,
          ['x', 'y', 'z'].map((tag) => row(URN.a, 30, { tag })),
        );
        const everything = ['a@50', 'b@40', 'a@30#z', 'a@30#y', 'a@30#x', 'a@30#second', 'a@30', 'b@20', 'a@10'];
        for (const limit of [1, 2, 4]) {
          const { labels, pages } = await queryAll(adapter, { ...PROFILE_INDEX, limit });
          expect(labels).toEqual(everything);
          expect(pages).toBe(Math.ceil(everything.length / limit));
        }
        const filtered = await queryAll(adapter, {
          ...PROFILE_INDEX,
          urn: URN.a,
          startTimeMillis: T0 + 30,
          endTimeMillis: T0 + 30,
          limit: 2,
        });
        expect(filtered.labels).toEqual(['a@30#z', 'a@30#y', 'a@30#x', 'a@30#second', 'a@30']);
      });
    });

    it('keeps indexes apart; an index never written reads as empty', async () => {
      await withAdapter(harness, async (adapter) => {
        await seed(adapter);
        await adapter.appendTimeseries(OPERATION_INDEX, [row(URN.a, 99)]);
        expect((await adapter.queryTimeseries({ ...OPERATION_INDEX, limit: 100 })).rows.map(label)).toEqual(['a@99']);
        const never: TimeseriesIndexRef = {
          indexName: 'chart_chartusagestatisticsaspect_v1',
          entityType: 'chart',
          aspect: 'chartUsageStatistics',
        };
        expect((await adapter.queryTimeseries({ ...never, limit: 100 })).rows).toEqual([]);
        expect(await adapter.countTimeseries(never, T0 + 1_000)).toEqual({ total: 0, matching: 0 });
      });
    });

    it('counts rows in total and up to an inclusive end time', async () => {
      await withAdapter(harness, async (adapter) => {
        await seed(adapter);
        expect(await adapter.countTimeseries(PROFILE_INDEX, T0 + 30)).toEqual({ total: 6, matching: 4 });
        expect(await adapter.countTimeseries(PROFILE_INDEX, T0 + 9)).toEqual({ total: 6, matching: 0 });
        expect(await adapter.countTimeseries(PROFILE_INDEX, T0 + 50)).toEqual({ total: 6, matching: 6 });
      });
    });

    it('deleteTimeseriesBatch removes at most limit rows at or before the end time', async () => {
      await withAdapter(harness, async (adapter) => {
        await seed(adapter);
        expect(await adapter.deleteTimeseriesBatch(PROFILE_INDEX, T0 + 30, 3)).toBe(3);
        expect(await adapter.countTimeseries(PROFILE_INDEX, T0 + 30)).toEqual({ total: 3, matching: 1 });
        expect(await adapter.deleteTimeseriesBatch(PROFILE_INDEX, T0 + 30, 3)).toBe(1);
        expect(await adapter.deleteTimeseriesBatch(PROFILE_INDEX, T0 + 30, 3)).toBe(0);
        expect((await adapter.queryTimeseries({ ...PROFILE_INDEX, limit: 100 })).rows.map(label)).toEqual(['a@50', 'b@40']);
      });
    });

    it('rebuildTimeseriesIndex keeps only rows after the end time, in order, and the index stays writable', async () => {
      await withAdapter(harness, async (adapter) => {
        await seed(adapter);
        expect(await adapter.rebuildTimeseriesIndex(PROFILE_INDEX, T0 + 30)).toBe(4);
        expect((await adapter.queryTimeseries({ ...PROFILE_INDEX, limit: 100 })).rows.map(label)).toEqual(['a@50', 'b@40']);
        expect(await adapter.countTimeseries(PROFILE_INDEX, T0 + 100)).toEqual({ total: 2, matching: 2 });
        await adapter.appendTimeseries(PROFILE_INDEX, [row(URN.b, 50, { tag: 'after' })]);
        expect((await adapter.queryTimeseries({ ...PROFILE_INDEX, limit: 2 })).rows.map(label)).toEqual(['b@50#after', 'a@50']);
        expect(await adapter.rebuildTimeseriesIndex(PROFILE_INDEX, T0)).toBe(0);
        expect(await adapter.countTimeseries(PROFILE_INDEX, T0 + 100)).toEqual({ total: 3, matching: 3 });
      });
    });

    it('timeseriesIndexSizes lists each index with its rows and bytes, and bytes shrink after a rebuild that removed most rows', async () => {
      await withAdapter(harness, async (adapter) => {
        const padding = 'x'.repeat(200);
        const many = Array.from({ length: 2_000 }, (_, i) => row(i % 2 === 0 ? URN.a : URN.b, i, { padding }));
        await adapter.appendTimeseries(PROFILE_INDEX, many);
        await adapter.appendTimeseries(OPERATION_INDEX, [row(URN.a, 1), row(URN.a, 2)]);
        const sizes = await adapter.timeseriesIndexSizes();
        const byName = (name: string) => sizes.find((s) => s.indexName === name);
        expect(sizes.map((s) => s.indexName).sort()).toEqual([OPERATION_INDEX.indexName, PROFILE_INDEX.indexName].sort());
        const profile = byName(PROFILE_INDEX.indexName);
        const operation = byName(OPERATION_INDEX.indexName);
        expect([profile?.entityType, profile?.aspect, profile?.rows]).toEqual(['dataset', 'datasetProfile', 2_000]);
        expect([operation?.entityType, operation?.aspect, operation?.rows]).toEqual(['dataset', 'operation', 2]);
        expect(profile?.bytes ?? 0).toBeGreaterThan(0);
        expect(operation?.bytes ?? 0).toBeGreaterThan(0);
        // 2,000 rows of ~250 bytes of value each hold more than the 2 rows of the other index.
        expect(profile?.bytes ?? 0).toBeGreaterThan(operation?.bytes ?? 0);

        expect(await adapter.rebuildTimeseriesIndex(PROFILE_INDEX, T0 + 1_979)).toBe(1_980);
        const after = (await adapter.timeseriesIndexSizes()).find((s) => s.indexName === PROFILE_INDEX.indexName);
        expect(after?.rows).toBe(20);
        expect(after?.bytes ?? 0).toBeGreaterThan(0);
        expect(after?.bytes ?? Number.POSITIVE_INFINITY).toBeLessThan((profile?.bytes ?? 0) / 2);
      });
    });
  });
}
