import type { StorageAdapter, TimeseriesRow } from '../adapter/types';
import type { ConformanceHarness } from './types';
import { aspect, createWrite, expectCode, expectRejects, faultAt, PROFILE_INDEX, seedEntities, T0, URN, withAdapter } from './support';

/**
 * `WriteBatch.timeseries` (capability `timeseriesInCommit`): the rows are appended by the commit itself,
 * so a commit that fails, whatever the cause, appends none of them.
 */
export function registerCommitTimeseriesTests(harness: ConformanceHarness): void {
  const { describe, expect } = harness;
  const it = harness.capabilities.timeseriesInCommit ? harness.it : harness.skip;

  const row = (urn: string, offset: number): TimeseriesRow => ({
    urn,
    timestampMillis: T0 + offset,
    value: { timestampMillis: T0 + offset, rowCount: offset },
  });
  const rowsOf = async (adapter: StorageAdapter, urn?: string) =>
    (await adapter.queryTimeseries({ ...PROFILE_INDEX, ...(urn ? { urn } : {}), limit: 100 })).rows.map((r) => r.value.rowCount);

  describe('timeseries rows in the commit (capability timeseriesInCommit)', () => {
    it('appends the batch rows with its entities, creating the index on first use', async () => {
      await withAdapter(harness, async (adapter) => {
        await adapter.commit({
          entities: [createWrite(URN.a, [aspect('info', { name: 'a' })])],
          timeseries: [{ index: PROFILE_INDEX, rows: [row(URN.a, 1), row(URN.a, 2)] }],
        });
        expect(await rowsOf(adapter, URN.a)).toEqual([2, 1]);
        expect((await adapter.timeseriesIndexSizes()).map((s) => [s.indexName, s.rows])).toEqual([[PROFILE_INDEX.indexName, 2]]);
        // Rows alone make a commit too.
        await adapter.commit({ timeseries: [{ index: PROFILE_INDEX, rows: [row(URN.b, 3)] }] });
        expect(await rowsOf(adapter)).toEqual([3, 2, 1]);
      });
    });

    it('a commit refused with CONFLICT appends no rows (not even a new index)', async () => {
      await withAdapter(harness, async (adapter) => {
        await seedEntities(adapter, [URN.a]);
        await expectCode(
          expect,
          adapter.commit({
            entities: [createWrite(URN.a, [aspect('info', { name: 'again' })])],
            timeseries: [{ index: PROFILE_INDEX, rows: [row(URN.a, 1)] }],
          }),
          'CONFLICT',
        );
        expect(await rowsOf(adapter)).toEqual([]);
        expect(await adapter.timeseriesIndexSizes()).toEqual([]);
      });
    });

    it('a commit that fails part-way appends no rows, and the next one appends its own', async () => {
      const fault = faultAt(1);
      await withAdapter(
        harness,
        async (adapter) => {
          await adapter.appendTimeseries(PROFILE_INDEX, [row(URN.a, 1)]);
          fault.arm();
          await expectRejects(
            expect,
            adapter.commit({
              entities: [createWrite(URN.b, [aspect('info', { name: 'b' })]), createWrite(URN.c, [aspect('info', { name: 'c' })])],
              timeseries: [{ index: PROFILE_INDEX, rows: [row(URN.b, 2), row(URN.c, 3)] }],
            }),
          );
          expect(await rowsOf(adapter)).toEqual([1]);
          expect(await adapter.readEntities([URN.b, URN.c])).toEqual([]);
          fault.disarm();
          await adapter.commit({
            entities: [createWrite(URN.b, [aspect('info', { name: 'b' })])],
            timeseries: [{ index: PROFILE_INDEX, rows: [row(URN.b, 4)] }],
          });
          expect(await rowsOf(adapter)).toEqual([4, 1]);
        },
        fault.injector,
      );
    });
  });
}
