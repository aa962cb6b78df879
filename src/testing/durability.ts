import type { PropertyValueIndex, StorageAdapter } from '../adapter/types';
import { createCatalog, type Catalog } from '../catalog';
import type { ConformanceHarness, FaultInjector } from './types';
import { ADMIN, catalogOptions, EDITOR, READER, type TestClock } from './catalog';
import { aspect, createWrite, expectRejects, faultAt, PROFILE_INDEX, searchDocument, T0, URN } from './support';

type Reopen = NonNullable<ConformanceHarness['reopen']>;

interface Env {
  catalog: Catalog;
  adapter: StorageAdapter;
  clock: TestClock;
}

/**
 * Durable adapters: what was committed before `close()` is there after reopening the store, exactly;
 * what failed is not. Registered only when the harness can reopen (adapters declaring `durable`).
 */
export function registerDurabilityTests(harness: ConformanceHarness, reopen: Reopen): void {
  const { describe, it, expect, inspect } = harness;

  /** Runs `before` on a catalog over a fresh adapter, closes it, reopens the store and runs `after` on a new catalog. */
  async function acrossReopen(
    before: (env: Env) => Promise<void>,
    after: (env: Env) => Promise<void>,
    faultInjector?: FaultInjector,
  ): Promise<void> {
    const clock: TestClock = { now: T0 };
    const first = await harness.createAdapter(faultInjector ? { faultInjector } : {});
    const firstCatalog = createCatalog(catalogOptions(first, clock));
    try {
      await firstCatalog.ready();
      await before({ catalog: firstCatalog, adapter: first, clock });
    } finally {
      await firstCatalog.close();
    }
    const second = await reopen(first);
    const secondCatalog = createCatalog(catalogOptions(second, clock));
    try {
      await secondCatalog.ready();
      await after({ catalog: secondCatalog, adapter: second, clock });
    } finally {
      await secondCatalog.close();
    }
  }

  async function storedCounts(adapter: StorageAdapter): Promise<unknown> {
    return inspect ? { aspects: await inspect.countAspects(adapter), jobs: await inspect.countJobs(adapter) } : undefined;
  }

  describe('durability (close and reopen)', () => {
    it('keeps aspects, audit stamps and versions; deleted entities stay deleted', async () => {
      const urns = [URN.a, URN.b, URN.c];
      let stored: unknown;
      let view: unknown;
      let counts: unknown;
      await acrossReopen(
        async ({ catalog, adapter, clock }) => {
          await catalog.entities.upsertAspects(ADMIN, URN.a, { datasetProperties: { name: 'orders' }, status: { removed: false } });
          clock.now = T0 + 1_000;
          await catalog.entities.upsertAspect(EDITOR, URN.a, 'datasetProperties', { name: 'orders', description: 'v2' });
          await catalog.entities.upsertAspect(EDITOR, URN.b, 'datasetProperties', { name: 'b' });
          await catalog.entities.upsertAspect(EDITOR, URN.c, 'datasetProperties', { name: 'c' });
          await catalog.entities.delete(ADMIN, URN.c);
          stored = await adapter.readEntities(urns);
          view = await catalog.entities.get(READER, URN.a);
          counts = await storedCounts(adapter);
        },
        async ({ catalog, adapter }) => {
          expect(await adapter.readEntities(urns)).toEqual(stored);
          expect((await adapter.readEntities(urns)).map((e) => [e.urn, e.version])).toEqual([
            [URN.a, 2],
            [URN.b, 1],
          ]);
          const reread = await catalog.entities.get(READER, URN.a);
          expect(reread).toEqual(view);
          expect(reread?.aspects.datasetProperties?.created).toEqual({ time: T0, actor: ADMIN });
          expect(reread?.aspects.datasetProperties?.lastModified).toEqual({ time: T0 + 1_000, actor: EDITOR });
          expect(await storedCounts(adapter)).toEqual(counts);
          // And the store keeps working: optimistic versions continue where they were.
          await catalog.entities.upsertAspect(EDITOR, URN.a, 'status', { removed: true });
          expect((await adapter.readEntities([URN.a]))[0]?.version).toBe(3);
        },
      );
    });

    it('keeps queued jobs with their state: pending, leased (lease still held), dead, and their dedupe keys', async () => {
      let jobs: unknown;
      await acrossReopen(
        async ({ adapter }) => {
          await adapter.commit({
            jobs: [
              { type: 'leased', payload: { n: 1 }, runAt: T0 },
              { type: 'dead', payload: { n: 2 }, runAt: T0 + 1 },
              { type: 'pending', payload: { n: 3, nested: { list: [1, 'two'] } }, runAt: T0 + 2, dedupeKey: 'conformance:k1' },
            ],
          });
          await adapter.claimJobs({ workerId: 'worker-a', now: T0, leaseMs: 60_000, limit: 1 });
          const [doomed] = await adapter.claimJobs({ workerId: 'worker-b', now: T0 + 1, leaseMs: 60_000, limit: 1 });
          await adapter.releaseJob(doomed!.id, 'worker-b', { error: 'gave up', retryAt: null });
          jobs = await adapter.listJobs({ includeDead: true });
        },
        async ({ adapter }) => {
          expect(await adapter.listJobs({ includeDead: true })).toEqual(jobs);
          if (inspect) expect(await inspect.countJobs(adapter)).toBe(3);
          await adapter.commit({ jobs: [{ type: 'pending', payload: {}, runAt: T0, dedupeKey: 'conformance:k1' }] });
          expect((await adapter.listJobs()).map((j) => j.type)).toEqual(['leased', 'pending']);
          const claimed = await adapter.claimJobs({ workerId: 'worker-c', now: T0 + 2, leaseMs: 60_000, limit: 10 });
          expect(claimed.map((j) => [j.type, j.attempts])).toEqual([['pending', 1]]);
        },
      );
    });

    it('keeps timeseries rows and search documents', async () => {
      const PROP = 'urn:li:structuredProperty:io.conformance.tier';
      await acrossReopen(
        async ({ adapter }) => {
          await adapter.commit({
            entities: [
              createWrite(URN.a, [aspect('info', { name: 'a' })], {
                searchDocument: searchDocument(URN.a, [{ propertyUrn: PROP, definitionKey: 'k', values: ['gold'] }]),
              }),
            ],
          });
          await adapter.appendTimeseries(PROFILE_INDEX, [
            { urn: URN.a, timestampMillis: T0 + 1, value: { timestampMillis: T0 + 1, rowCount: 1 } },
            { urn: URN.a, timestampMillis: T0 + 2, value: { timestampMillis: T0 + 2, rowCount: 2 } },
          ]);
        },
        async ({ adapter }) => {
          const page = await adapter.queryTimeseries({ ...PROFILE_INDEX, limit: 10 });
          expect(page.rows.map((r) => r.value.rowCount)).toEqual([2, 1]);
          const sizes = await adapter.timeseriesIndexSizes();
          expect(sizes.map((s) => [s.indexName, s.rows])).toEqual([[PROFILE_INDEX.indexName, 2]]);
          // The property-value index (an optional part) survives the reopen too.
          if (harness.capabilities.propertyValues) {
            const index = adapter as StorageAdapter & PropertyValueIndex;
            expect(await index.countEntitiesWithPropertyValues(PROP, 'k')).toBe(1);
            expect(await index.findEntitiesWithPropertyValues({ propertyUrn: PROP, limit: 10 })).toEqual([URN.a]);
          }
        },
      );
    });

    it('a batch that failed before the close is still absent after reopening', async () => {
      const fault = faultAt(1);
      let counts: unknown;
      await acrossReopen(
        async ({ adapter }) => {
          await adapter.commit({ entities: [createWrite(URN.a, [aspect('info', { name: 'a' })])] });
          counts = await storedCounts(adapter);
          fault.arm();
          await expectRejects(
            expect,
            adapter.commit({
              entities: [
                { urn: URN.a, entityType: 'dataset', expectVersion: 1, put: [aspect('info', { name: 'changed' }, 2)] },
                createWrite(URN.b, [aspect('info', { name: 'b' })]),
                createWrite(URN.c, [aspect('info', { name: 'c' })]),
              ],
              jobs: [{ type: 'conformance.batch', payload: {}, runAt: T0 }],
            }),
          );
        },
        async ({ adapter }) => {
          const entities = await adapter.scanEntities({ limit: 10 });
          expect(entities.map((e) => [e.urn, e.version, e.aspects.info?.value])).toEqual([[URN.a, 1, { name: 'a' }]]);
          expect(await adapter.listJobs({ includeDead: true })).toEqual([]);
          expect(await storedCounts(adapter)).toEqual(counts);
        },
        fault.injector,
      );
    });
  });
}
