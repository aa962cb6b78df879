import type { StorageAdapter, TimeseriesIndexRef } from '../adapter/types';
import { createCatalog, type Catalog } from '../catalog';
import type { TruncateInput } from '../index';
import type { TruncationStatus } from '../index';
import type { ConformanceHarness } from './types';
import { expectCode, rejectionDetails, T0 } from './support';
import {
  ACTORS,
  appendProfiles,
  manualClock,
  offsetsOf,
  PROFILE_INDEX_NAME,
  rowCounts,
  sizeMbOf,
  withTimeseriesCatalog,
} from './timeseries-operations-support';

const DRY = 'This was a dry run. Run with dryRun = false to execute.';
const REINDEX = 'Reindexing the aspect without the deleted records. ';
const BY_QUERY = 'Issuing a delete by query request. ';

function profileTruncation(endOffset: number, extra: Partial<TruncateInput> = {}): TruncateInput {
  return { entityType: 'dataset', aspect: 'datasetProfile', endTimeMillis: T0 + endOffset, ...extra };
}

/** Offsets from `high` down to `low`, the newest-first order of a query. */
function descending(high: number, low: number): number[] {
  return Array.from({ length: high - low + 1 }, (_, i) => high - i);
}

/** The adapter with one member replaced (a Proxy, so class-based adapters keep their methods). */
function replacing<K extends keyof StorageAdapter>(adapter: StorageAdapter, key: K, value: StorageAdapter[K]): StorageAdapter {
  return new Proxy(adapter, {
    get(target, prop) {
      if (prop === key) return value;
      const member: unknown = Reflect.get(target, prop, target);
      return typeof member === 'function' ? (member as (...args: unknown[]) => unknown).bind(target) : member;
    },
  });
}

async function status(catalog: Catalog, taskId: string | undefined): Promise<TruncationStatus | undefined> {
  if (taskId === undefined) throw new Error('the real run gave no task id');
  return catalog.timeseries.getTruncation(ACTORS.truncater, taskId);
}

export function registerTruncationOperationTests(harness: ConformanceHarness): void {
  const { describe, it, expect } = harness;

  describe('timeseries operations: truncation answers, dry runs and refusals', () => {
    it('answers a dry run with the share and the method, and changes nothing', async () => {
      await withTimeseriesCatalog(harness, async ({ catalog, adapter }) => {
        await appendProfiles(catalog, 10);
        const answer = async (endOffset: number, extra: Partial<TruncateInput> = {}) =>
          (await catalog.timeseries.truncate(ACTORS.truncater, profileTruncation(endOffset, extra))).message;
        expect(await answer(4)).toBe(`Delete 4 out of 10 rows (40.00%). ${BY_QUERY}${DRY}`);
        expect(await answer(5, { dryRun: true })).toBe(`Delete 5 out of 10 rows (50.00%). ${BY_QUERY}${DRY}`);
        expect(await answer(6)).toBe(`Delete 6 out of 10 rows (60.00%). ${REINDEX}${DRY}`);
        expect(await answer(10, { dryRun: null })).toBe(`Delete 10 out of 10 rows (100.00%). ${REINDEX}${DRY}`);
        expect(await answer(4, { forceReindex: true })).toBe(`Delete 4 out of 10 rows (40.00%). ${REINDEX}${DRY}`);
        expect(await answer(6, { forceDeleteByQuery: true, forceReindex: false })).toBe(
          `Delete 6 out of 10 rows (60.00%). ${BY_QUERY}${DRY}`,
        );
        expect(await answer(6, { forceReindex: false })).toBe(`Delete 6 out of 10 rows (60.00%). ${REINDEX}${DRY}`);
        expect(await answer(0)).toBe(`Delete 0 out of 10 rows (0.00%). ${BY_QUERY}${DRY}`);
        const result = await catalog.timeseries.truncate(ACTORS.truncater, profileTruncation(7));
        expect(result).toEqual({
          message: `Delete 7 out of 10 rows (70.00%). ${REINDEX}${DRY}`,
          dryRun: true,
          method: 'reindex',
          indexName: PROFILE_INDEX_NAME,
          totalRows: 10,
          rowsToDelete: 7,
          endTimeMillis: profileTruncation(7).endTimeMillis,
        });
        await catalog.timeseries.append(ACTORS.writer, 'urn:li:dataset:(urn:li:dataPlatform:hive,ts.c,PROD)', 'datasetUsageStatistics', [
          { timestampMillis: T0 + 1 },
          { timestampMillis: T0 + 2 },
          { timestampMillis: T0 + 3 },
        ]);
        const usage = async (endOffset: number) =>
          (
            await catalog.timeseries.truncate(ACTORS.truncater, {
              entityType: 'dataset',
              aspect: 'datasetUsageStatistics',
              endTimeMillis: T0 + endOffset,
            })
          ).message;
        expect(await usage(1)).toBe(`Delete 1 out of 3 rows (33.33%). ${BY_QUERY}${DRY}`);
        expect(await usage(2)).toBe(`Delete 2 out of 3 rows (66.67%). ${REINDEX}${DRY}`);
        const empty = await catalog.timeseries.truncate(ACTORS.truncater, {
          entityType: 'dataJob',
          aspect: 'operation',
          endTimeMillis: T0,
        });
        expect(empty.message).toBe(`Delete 0 out of 0 rows (0.00%). ${BY_QUERY}${DRY}`);
        expect(await rowCounts(adapter, T0 + 100)).toEqual({ total: 10, matching: 10 });
        expect(await catalog.listJobs({ includeDead: true })).toEqual([]);
      });
    });

    it('refuses both force flags set to the same value, and accepts one or neither', async () => {
      await withTimeseriesCatalog(harness, async ({ catalog, adapter }) => {
        await appendProfiles(catalog, 10);
        for (const value of [true, false]) {
          const refused = await rejectionDetails(
            catalog.timeseries.truncate(
              ACTORS.truncater,
              profileTruncation(6, { dryRun: false, forceReindex: value, forceDeleteByQuery: value }),
            ),
          );
          expect(refused).toEqual({ code: 'INVALID_INPUT', paths: ['/forceReindex'] });
        }
        const method = async (extra: Partial<TruncateInput>) =>
          (await catalog.timeseries.truncate(ACTORS.truncater, profileTruncation(6, extra))).method;
        expect(await method({ forceReindex: true, forceDeleteByQuery: false })).toBe('reindex');
        expect(await method({ forceReindex: false, forceDeleteByQuery: true })).toBe('deleteByQuery');
        expect(await method({ forceReindex: null, forceDeleteByQuery: true })).toBe('deleteByQuery');
        expect(await method({})).toBe('reindex');
        expect(await rowCounts(adapter, T0 + 100)).toEqual({ total: 10, matching: 10 });
        expect(await catalog.listJobs()).toEqual([]);
      });
    });

    it('refuses bad input with every violation at its path, deleting nothing even when dryRun is false', async () => {
      await withTimeseriesCatalog(harness, async ({ catalog, adapter }) => {
        await appendProfiles(catalog, 10);
        const paths = async (input: Record<string, unknown>) =>
          rejectionDetails(
            catalog.timeseries.truncate(ACTORS.truncater, { ...profileTruncation(6), dryRun: false, ...input } as unknown as TruncateInput),
          );
        const cases: Array<[Record<string, unknown>, string[]]> = [
          [{ entityType: 'spaceship' }, ['/entityType']],
          [{ aspect: 'noSuchAspect' }, ['/aspect']],
          [{ aspect: 'datasetProperties' }, ['/aspect']],
          [{ aspect: 'chartUsageStatistics' }, ['/aspect']],
          [{ endTimeMillis: -1 }, ['/endTimeMillis']],
          [{ endTimeMillis: T0 + 0.5 }, ['/endTimeMillis']],
          [{ endTimeMillis: String(T0 + 6) }, ['/endTimeMillis']],
          [{ endTimeMillis: undefined }, ['/endTimeMillis']],
          [{ batchSize: 0 }, ['/batchSize']],
          [{ timeoutSeconds: -3 }, ['/timeoutSeconds']],
          [{ dryRun: 'no' }, ['/dryRun']],
          [{ dryrun: false }, ['/dryrun']],
          [{ entityType: 'spaceship', aspect: 'noSuchAspect', endTimeMillis: -1 }, ['/endTimeMillis', '/entityType', '/aspect']],
        ];
        for (const [input, expected] of cases)
          expect([JSON.stringify(input), await paths(input)]).toEqual([JSON.stringify(input), { code: 'INVALID_INPUT', paths: expected }]);
        await expectCode(expect, catalog.timeseries.truncate(ACTORS.truncater, null as unknown as TruncateInput), 'INVALID_INPUT');
        expect(await rowCounts(adapter, T0 + 100)).toEqual({ total: 10, matching: 10 });
        expect(await catalog.listJobs({ includeDead: true })).toEqual([]);
      });
    });

    it('needs TRUNCATE_TIMESERIES_INDEX, also for a dry run and to read a truncation', async () => {
      await withTimeseriesCatalog(harness, async ({ catalog, adapter }) => {
        await appendProfiles(catalog, 10);
        for (const actor of [ACTORS.reader, ACTORS.writer, ACTORS.sizer]) {
          await expectCode(expect, catalog.timeseries.truncate(actor, profileTruncation(6)), 'FORBIDDEN');
          await expectCode(expect, catalog.timeseries.truncate(actor, profileTruncation(6, { dryRun: false })), 'FORBIDDEN');
        }
        await expectCode(expect, catalog.timeseries.truncate('', profileTruncation(6, { dryRun: false })), 'UNAUTHENTICATED');
        expect(await rowCounts(adapter, T0 + 100)).toEqual({ total: 10, matching: 10 });
        expect(await catalog.listJobs()).toEqual([]);
        const started = await catalog.timeseries.truncate(ACTORS.admin, profileTruncation(6, { dryRun: false }));
        await expectCode(expect, catalog.timeseries.getTruncation(ACTORS.sizer, started.taskId ?? ''), 'FORBIDDEN');
        expect((await status(catalog, started.taskId))?.state).toBe('queued');
        expect(await catalog.timeseries.getTruncation(ACTORS.truncater, '00000000-0000-0000-0000-000000000000')).toBeUndefined();
        await expectCode(expect, catalog.timeseries.getTruncation(ACTORS.truncater, 'not a task id!'), 'INVALID_INPUT');
      });
    });
  });

  describe('timeseries operations: real truncations', () => {
    it('reindexes when more than half goes: a background task, rows gone, the index smaller', async () => {
      await withTimeseriesCatalog(harness, async ({ catalog, adapter }) => {
        await appendProfiles(catalog, 1_000);
        const sizeBefore = await sizeMbOf(catalog, PROFILE_INDEX_NAME);
        const started = await catalog.timeseries.truncate(ACTORS.truncater, profileTruncation(700, { dryRun: false }));
        expect(started.message).toBe(`Delete 700 out of 1000 rows (70.00%). ${REINDEX}Task id: ${started.taskId}.`);
        expect([started.dryRun, started.method, started.rowsToDelete, started.totalRows]).toEqual([false, 'reindex', 700, 1_000]);
        const queued = await status(catalog, started.taskId);
        expect([queued?.state, queued?.rowsDeleted, queued?.requestedBy, queued?.sizeMbBefore]).toEqual([
          'queued',
          0,
          ACTORS.truncater,
          sizeBefore,
        ]);
        expect(await rowCounts(adapter, T0 + 700)).toEqual({ total: 1_000, matching: 700 });

        await catalog.settle();
        const done = await status(catalog, started.taskId);
        expect([done?.state, done?.method, done?.rowsDeleted, done?.batches, done?.error]).toEqual(['completed', 'reindex', 700, 1, null]);
        expect(await rowCounts(adapter, T0 + 1_000)).toEqual({ total: 300, matching: 300 });
        expect(
          [
            ...(await offsetsOf(catalog, 'urn:li:dataset:(urn:li:dataPlatform:hive,ts.a,PROD)')),
            ...(await offsetsOf(catalog, 'urn:li:dataset:(urn:li:dataPlatform:hive,ts.b,PROD)')),
          ].sort((x, y) => y - x),
        ).toEqual(descending(1_000, 701));
        const sizeAfter = await sizeMbOf(catalog, PROFILE_INDEX_NAME);
        expect(sizeAfter).toBeLessThan(sizeBefore * 0.5);
        expect(sizeAfter).toBeGreaterThan(0);
        expect(done?.sizeMbAfter).toBe(sizeAfter);
        expect(await catalog.listJobs({ includeDead: true })).toEqual([]);
        await catalog.timeseries.append(ACTORS.writer, 'urn:li:dataset:(urn:li:dataPlatform:hive,ts.a,PROD)', 'datasetProfile', {
          timestampMillis: T0 + 5_000,
        });
        expect(await rowCounts(adapter, T0 + 10_000)).toEqual({ total: 301, matching: 301 });
      });
    });

    it('deletes in batches when at most half goes, reporting progress after every batch', async () => {
      await withTimeseriesCatalog(harness, async ({ catalog, adapter }) => {
        await appendProfiles(catalog, 1_000);
        const sizeBefore = await sizeMbOf(catalog, PROFILE_INDEX_NAME);
        const seen: Array<[string, number, number]> = [];
        const started = await catalog.timeseries.truncate(ACTORS.truncater, profileTruncation(400, { dryRun: false, batchSize: 100 }), {
          onProgress: (s) => {
            seen.push([s.state, s.rowsDeleted, s.batches]);
          },
        });
        expect(started.message).toBe(`Delete 400 out of 1000 rows (40.00%). ${BY_QUERY}Task id: ${started.taskId}.`);
        await catalog.settle();
        expect(seen).toEqual([
          ['running', 0, 0],
          ['running', 100, 1],
          ['running', 200, 2],
          ['running', 300, 3],
          ['running', 400, 4],
          ['completed', 400, 5],
        ]);
        const done = await status(catalog, started.taskId);
        expect([done?.state, done?.method, done?.rowsDeleted, done?.rowsToDelete, done?.totalRows]).toEqual([
          'completed',
          'deleteByQuery',
          400,
          400,
          1_000,
        ]);
        expect(await rowCounts(adapter, T0 + 1_000)).toEqual({ total: 600, matching: 600 });
        const sizeAfter = await sizeMbOf(catalog, PROFILE_INDEX_NAME);
        expect(sizeAfter).toBeLessThan(sizeBefore * 0.8);
        expect(done?.sizeMbAfter).toBe(sizeAfter);
        expect(await catalog.listJobs({ includeDead: true })).toEqual([]);
      });
    });

    it('follows the force flags: batches for most rows, a reindex for few', async () => {
      await withTimeseriesCatalog(harness, async ({ catalog, adapter }) => {
        await appendProfiles(catalog, 100);
        const batched = await catalog.timeseries.truncate(
          ACTORS.truncater,
          profileTruncation(80, { dryRun: false, batchSize: 30, forceDeleteByQuery: true }),
        );
        await catalog.settle();
        const first = await status(catalog, batched.taskId);
        expect([first?.method, first?.state, first?.rowsDeleted, first?.batches]).toEqual(['deleteByQuery', 'completed', 80, 3]);
        const reindexed = await catalog.timeseries.truncate(ACTORS.truncater, profileTruncation(82, { dryRun: false, forceReindex: true }));
        expect(reindexed.message).toBe(`Delete 2 out of 20 rows (10.00%). ${REINDEX}Task id: ${reindexed.taskId}.`);
        await catalog.settle();
        const second = await status(catalog, reindexed.taskId);
        expect([second?.method, second?.state, second?.rowsDeleted, second?.batches]).toEqual(['reindex', 'completed', 2, 1]);
        expect(await rowCounts(adapter, T0 + 100)).toEqual({ total: 18, matching: 18 });
      });
    });

    it('stops after the batch in progress once timeoutSeconds have passed, reporting how far it got', async () => {
      await withTimeseriesCatalog(harness, async ({ catalog, adapter, clock }) => {
        await appendProfiles(catalog, 1_000);
        const seen: Array<[string, number]> = [];
        const started = await catalog.timeseries.truncate(
          ACTORS.truncater,
          profileTruncation(800, { dryRun: false, batchSize: 100, timeoutSeconds: 3, forceDeleteByQuery: true }),
          {
            onProgress: (s) => {
              seen.push([s.state, s.rowsDeleted]);
              clock.now += 1_000; // every step "takes" a second
            },
          },
        );
        await catalog.settle();
        const stopped = await status(catalog, started.taskId);
        expect([stopped?.state, stopped?.rowsDeleted, stopped?.batches, stopped?.rowsToDelete]).toEqual(['timedOut', 200, 2, 800]);
        expect(seen).toEqual([
          ['running', 0],
          ['running', 100],
          ['running', 200],
          ['timedOut', 200],
        ]);
        expect(await rowCounts(adapter, T0 + 800)).toEqual({ total: 800, matching: 600 });
        expect(await catalog.listJobs({ includeDead: true })).toEqual([]);
        expect(stopped?.finishedAt).toBe((stopped?.startedAt ?? 0) + 3_000);
      });
    });

    it('reads as failed, with the error, when its background job gives up', async () => {
      const broken = (adapter: StorageAdapter) =>
        replacing(adapter, 'rebuildTimeseriesIndex', async () => {
          throw new Error('disk on fire');
        });
      await withTimeseriesCatalog(
        harness,
        async ({ catalog, adapter }) => {
          await appendProfiles(catalog, 10);
          const started = await catalog.timeseries.truncate(ACTORS.truncater, profileTruncation(8, { dryRun: false }));
          const report = await catalog.settle();
          expect(report.failed.map((f) => f.error)).toEqual(['disk on fire']);
          const failed = await status(catalog, started.taskId);
          expect([failed?.state, failed?.error]).toEqual(['failed', 'disk on fire']);
          expect(await rowCounts(adapter, T0 + 100)).toEqual({ total: 10, matching: 10 });
        },
        { jobs: { background: false, maxAttempts: 1 } },
        broken,
      );
    });

    const restartTitle = harness.reopen
      ? 'is finished after a crash mid-batch by the next process to open the store'
      : 'is finished by another worker when the one running it dies mid-batch';
    it(restartTitle, async () => {
      const adapter = await harness.createAdapter({});
      let calls = 0;
      let reachStuck: () => void = () => undefined;
      const stuck = new Promise<void>((resolve) => {
        reachStuck = resolve;
      });
      // The first worker's process "dies" during its third batch: the call never returns.
      const dying = replacing(adapter, 'deleteTimeseriesBatch', (ref: TimeseriesIndexRef, end: number, limit: number) => {
        calls++;
        if (calls === 3) {
          reachStuck();
          return new Promise<number>(() => undefined);
        }
        return adapter.deleteTimeseriesBatch(ref, end, limit);
      });
      const common = { superUsers: [ACTORS.admin], onError: () => undefined };
      const clockA = manualClock();
      const first = createCatalog({ ...common, adapter: dying, clock: clockA.read, jobs: { background: false, leaseMs: 60_000 } });
      await appendProfiles(first, 1_000, ACTORS.admin);
      const started = await first.timeseries.truncate(
        ACTORS.admin,
        profileTruncation(500, { dryRun: false, batchSize: 100, forceDeleteByQuery: true }),
      );
      void first.settle();
      await stuck;
      expect(await rowCounts(adapter, T0 + 500)).toEqual({ total: 800, matching: 300 });

      let second: StorageAdapter = adapter;
      if (harness.reopen) {
        await adapter.close();
        second = await harness.reopen(adapter);
      }
      // Later than the first worker's lease: its job is claimable again.
      const clockB = manualClock(T0 + 3_600_000);
      const next = createCatalog({ ...common, adapter: second, clock: clockB.read, jobs: { background: false } });
      try {
        const midway = await next.timeseries.getTruncation(ACTORS.admin, started.taskId ?? '');
        expect([midway?.state, midway?.rowsDeleted]).toEqual(['running', 200]);
        await next.settle();
        const done = await next.timeseries.getTruncation(ACTORS.admin, started.taskId ?? '');
        expect([done?.state, done?.rowsDeleted, done?.rowsToDelete]).toEqual(['completed', 500, 500]);
        expect(await rowCounts(second, T0 + 1_000)).toEqual({ total: 500, matching: 500 });
        expect(await rowCounts(second, T0 + 500)).toEqual({ total: 500, matching: 0 });
        expect(await next.listJobs({ includeDead: true })).toEqual([]);
      } finally {
        await next.close();
      }
    });
  });
}
