import type { ConformanceHarness } from './types';
import { aspect, byCodeUnits, createWrite, expectRejects, PROFILE_INDEX, seedEntities, T0, URN, urnsOf, withAdapter } from './support';

/** The adapter's identity and lifecycle, entity reads (`readEntities`, `scanEntities`) and `deleteEntity`. */
export function registerEntityTests(harness: ConformanceHarness): void {
  const { describe, it, expect } = harness;

  describe('adapter basics', () => {
    it('has a name and declares every capability as a boolean', async () => {
      await withAdapter(harness, async (adapter) => {
        expect(typeof adapter.name).toBe('string');
        expect(adapter.name.length).toBeGreaterThan(0);
        const { durable, changeToken, changeFeed } = adapter.capabilities;
        expect([durable, changeToken, changeFeed].map((flag) => typeof flag)).toEqual(['boolean', 'boolean', 'boolean']);
        expect(typeof adapter.readChanges).toBe(changeFeed ? 'function' : 'undefined');
        // The optional property-value index: declared exactly when its members are there.
        const propertyValues = adapter.capabilities.propertyValues === true;
        expect(
          [
            adapter.findEntitiesWithPropertyValues,
            adapter.countEntitiesWithPropertyValues,
            adapter.findEntitiesWithSeveralPropertyValues,
          ].map((member) => typeof member),
        ).toEqual(Array(3).fill(propertyValues ? 'function' : 'undefined'));
        expect(adapter.capabilities).toEqual(harness.capabilities);
        expect(typeof adapter.changeToken).toBe(changeToken ? 'function' : 'undefined');
      });
    });

    it('is durable exactly when the harness can reopen it (so the durability tests run)', async () => {
      await withAdapter(harness, async (adapter) => {
        expect(adapter.capabilities.durable).toBe(harness.reopen !== undefined);
        expect(harness.capabilities.durable).toBe(harness.reopen !== undefined);
      });
    });

    it('open() is idempotent and a fresh adapter is empty', async () => {
      await withAdapter(harness, async (adapter) => {
        await adapter.open();
        expect(await adapter.scanEntities({ limit: 100 })).toEqual([]);
        expect(await adapter.listJobs({ includeDead: true })).toEqual([]);
        expect(await adapter.timeseriesIndexSizes()).toEqual([]);
      });
    });

    it('rejects calls after close()', async () => {
      const adapter = await harness.createAdapter({});
      await adapter.open();
      await adapter.close();
      await expectRejects(expect, adapter.readEntities([URN.a]));
    });
  });

  describe('readEntities', () => {
    it('returns entities in the order asked, each once, leaving unknown URNs out', async () => {
      await withAdapter(harness, async (adapter) => {
        await seedEntities(adapter, [URN.a, URN.b, URN.c]);
        expect(urnsOf(await adapter.readEntities([URN.c, URN.a, URN.b]))).toEqual([URN.c, URN.a, URN.b]);
        expect(urnsOf(await adapter.readEntities([URN.b, URN.unknown, URN.a, URN.b, URN.a]))).toEqual([URN.b, URN.a]);
        expect(await adapter.readEntities([URN.unknown])).toEqual([]);
        expect(await adapter.readEntities([])).toEqual([]);
      });
    });

    it('returns what was stored: type, version, aspect values, versions, stamps and system metadata', async () => {
      await withAdapter(harness, async (adapter) => {
        const put = {
          ...aspect('datasetProperties', { name: 'orders', tags: ['a', 'b'], nested: { n: 1.5, flag: true, none: null } }, 3, T0 + 5),
          systemMetadata: { runId: 'run-1' },
        };
        await adapter.commit({ entities: [createWrite(URN.a, [put, aspect('status', { removed: false })])] });
        const [entity] = await adapter.readEntities([URN.a]);
        expect(entity).toEqual({
          urn: URN.a,
          entityType: 'dataset',
          version: 1,
          aspects: {
            datasetProperties: {
              name: 'datasetProperties',
              value: { name: 'orders', tags: ['a', 'b'], nested: { n: 1.5, flag: true, none: null } },
              version: 3,
              created: { time: T0, actor: put.created.actor },
              lastModified: { time: T0 + 5, actor: put.created.actor },
              systemMetadata: { runId: 'run-1' },
            },
            status: {
              name: 'status',
              value: { removed: false },
              version: 1,
              created: { time: T0, actor: put.created.actor },
              lastModified: { time: T0, actor: put.created.actor },
            },
          },
        });
      });
    });

    it('limits aspects to aspectNames and still returns an entity that has none of them', async () => {
      await withAdapter(harness, async (adapter) => {
        await seedEntities(adapter, [URN.a], ['info', 'status', 'ownership']);
        const [some] = await adapter.readEntities([URN.a], ['status', 'ownership', 'absent']);
        expect(Object.keys(some?.aspects ?? {}).sort()).toEqual(['ownership', 'status']);
        const [none] = await adapter.readEntities([URN.a], ['absent']);
        expect(none?.urn).toBe(URN.a);
        expect(none?.aspects).toEqual({});
        const [all] = await adapter.readEntities([URN.a]);
        expect(Object.keys(all?.aspects ?? {}).sort()).toEqual(['info', 'ownership', 'status']);
      });
    });

    it('bumps the entity version by one on every commit that touches it', async () => {
      await withAdapter(harness, async (adapter) => {
        await seedEntities(adapter, [URN.a, URN.b]);
        await adapter.commit({
          entities: [{ urn: URN.a, entityType: 'dataset', expectVersion: 1, put: [aspect('info', { name: 'v2' }, 2)] }],
        });
        await adapter.commit({
          entities: [
            { urn: URN.a, entityType: 'dataset', expectVersion: 2, delete: ['info', 'absent'], put: [aspect('status', { removed: true })] },
          ],
        });
        const [a, b] = await adapter.readEntities([URN.a, URN.b]);
        expect(a?.version).toBe(3);
        expect(Object.keys(a?.aspects ?? {})).toEqual(['status']);
        expect(b?.version).toBe(1);
      });
    });
  });

  describe('scanEntities', () => {
    const all = [URN.c, URN.alice, URN.a, URN.upperB, URN.bob, URN.b];

    it('lists entities in URN code-unit order with all their aspects', async () => {
      await withAdapter(harness, async (adapter) => {
        await seedEntities(adapter, all, ['info', 'status']);
        const scanned = await adapter.scanEntities({ limit: 100 });
        expect(urnsOf(scanned)).toEqual(byCodeUnits(all));
        expect(scanned.map((e) => Object.keys(e.aspects).sort())).toEqual(all.map(() => ['info', 'status']));
        const limited = await adapter.scanEntities({ limit: 100, aspectNames: ['status'] });
        expect(limited.map((e) => Object.keys(e.aspects))).toEqual(all.map(() => ['status']));
      });
    });

    it('pages with limit and afterUrn (also after a URN that does not exist)', async () => {
      await withAdapter(harness, async (adapter) => {
        await seedEntities(adapter, all);
        const seen: string[] = [];
        let afterUrn: string | undefined;
        for (let pages = 0; pages < 10; pages++) {
          const page = await adapter.scanEntities({ limit: 2, afterUrn });
          if (page.length === 0) break;
          expect(page.length).toBeLessThan(3);
          seen.push(...urnsOf(page));
          afterUrn = page[page.length - 1]?.urn;
        }
        expect(seen).toEqual(byCodeUnits(all));
        const between = 'urn:li:dataset:(urn:li:dataPlatform:hive,a,PROD)0';
        expect(urnsOf(await adapter.scanEntities({ limit: 100, afterUrn: between }))).toEqual(byCodeUnits(all).filter((u) => u > between));
      });
    });

    it('filters by entity type and by a required aspect', async () => {
      await withAdapter(harness, async (adapter) => {
        await seedEntities(adapter, [URN.a, URN.b, URN.alice], ['info']);
        await seedEntities(adapter, [URN.c, URN.bob], ['info', 'policy']);
        expect(urnsOf(await adapter.scanEntities({ entityType: 'corpuser', limit: 100 }))).toEqual([URN.alice, URN.bob]);
        expect(urnsOf(await adapter.scanEntities({ requireAspect: 'policy', limit: 100 }))).toEqual(byCodeUnits([URN.c, URN.bob]));
        expect(urnsOf(await adapter.scanEntities({ entityType: 'dataset', requireAspect: 'policy', limit: 100 }))).toEqual([URN.c]);
        expect(urnsOf(await adapter.scanEntities({ entityType: 'dataset', afterUrn: URN.a, limit: 1 }))).toEqual([URN.b]);
        const [onlyPolicy] = await adapter.scanEntities({
          entityType: 'corpuser',
          requireAspect: 'policy',
          aspectNames: ['policy'],
          limit: 100,
        });
        expect(Object.keys(onlyPolicy?.aspects ?? {})).toEqual(['policy']);
        expect(await adapter.scanEntities({ entityType: 'chart', limit: 100 })).toEqual([]);
      });
    });
  });

  describe('deleteEntity', () => {
    it('removes the entity with its aspects and its timeseries rows, and lets it be created again', async () => {
      await withAdapter(harness, async (adapter) => {
        await seedEntities(adapter, [URN.a, URN.b], ['info', 'status']);
        const row = (urn: string, t: number) => ({ urn, timestampMillis: t, value: { timestampMillis: t, rowCount: t - T0 } });
        await adapter.appendTimeseries(PROFILE_INDEX, [row(URN.a, T0 + 1), row(URN.b, T0 + 2), row(URN.a, T0 + 3)]);
        const before = await harness.inspect?.countAspects(adapter);

        await adapter.commit({
          entities: [{ urn: URN.a, entityType: 'dataset', expectVersion: 1, deleteEntity: true, searchDocument: null }],
        });

        expect(urnsOf(await adapter.readEntities([URN.a, URN.b]))).toEqual([URN.b]);
        expect(urnsOf(await adapter.scanEntities({ limit: 100 }))).toEqual([URN.b]);
        const rows = await adapter.queryTimeseries({ ...PROFILE_INDEX, limit: 100 });
        expect(rows.rows.map((r) => r.urn)).toEqual([URN.b]);
        expect(await adapter.countTimeseries(PROFILE_INDEX, T0 + 10)).toEqual({ total: 1, matching: 1 });
        if (harness.inspect && before !== undefined) expect(await harness.inspect.countAspects(adapter)).toBe(before - 2);

        await adapter.commit({ entities: [createWrite(URN.a, [aspect('info', { name: 'again' })])] });
        const [again] = await adapter.readEntities([URN.a]);
        expect(again?.version).toBe(1);
        expect(Object.keys(again?.aspects ?? {})).toEqual(['info']);
      });
    });
  });
}
