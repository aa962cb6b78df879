import type { JsonObject, StorageAdapter } from '../adapter/types';
import { createCatalog, type Catalog, type CatalogOptions } from '../catalog';
import type { ConformanceHarness, FaultInjector } from './types';
import { expectCode, expectRejects, faultAt, rejectionDetails, T0, URN } from './support';

export const ADMIN = 'urn:li:corpuser:admin';
export const EDITOR = 'urn:li:corpuser:editor';
export const READER = 'urn:li:corpuser:reader';

/** A clock the test moves by hand. */
export interface TestClock {
  now: number;
}

/** The catalog every end-to-end test uses: one super user, an editor, the test clock, jobs only in settle(). */
export function catalogOptions(adapter: StorageAdapter, clock: TestClock): CatalogOptions {
  return {
    adapter,
    superUsers: [ADMIN],
    policies: [{ name: 'editors', actors: [EDITOR], privileges: ['EDIT_ENTITY'] }],
    clock: () => clock.now,
    jobs: { background: false },
  };
}

/** End to end through `createCatalog`: the domain's writes land in the store atomically, stamped and validated. */
export function registerCatalogTests(harness: ConformanceHarness): void {
  const { describe, it, expect, inspect } = harness;

  async function withCatalog(
    test: (env: { catalog: Catalog; adapter: StorageAdapter; clock: TestClock }) => Promise<void>,
    faultInjector?: FaultInjector,
  ): Promise<void> {
    const adapter = await harness.createAdapter(faultInjector ? { faultInjector } : {});
    const clock: TestClock = { now: T0 };
    const catalog = createCatalog(catalogOptions(adapter, clock));
    try {
      await catalog.ready();
      await test({ catalog, adapter, clock });
    } finally {
      await catalog.close();
    }
  }

  /** Nothing in the store: through the adapter and, when the harness can, in the store itself. */
  async function expectEmpty(adapter: StorageAdapter): Promise<void> {
    expect(await adapter.scanEntities({ limit: 100 })).toEqual([]);
    if (inspect) expect(await inspect.countAspects(adapter)).toBe(0);
  }

  const properties = (name: string): JsonObject => ({ name, description: `${name} of the shop` });

  describe('through the catalog', () => {
    it("stamps the jobs it queues with the catalog's clock, not the adapter's", async () => {
      await withCatalog(async ({ catalog, adapter, clock }) => {
        await catalog.properties.create(ADMIN, { qualifiedName: 'conformance.clock', valueType: 'string', entityTypes: ['dataset'] });
        clock.now = T0 + 5_000;
        await catalog.properties.hardDelete(ADMIN, 'urn:li:structuredProperty:conformance.clock');
        const jobs = await adapter.listJobs();
        expect(jobs.length).toBeGreaterThan(0);
        for (const job of jobs)
          expect({ createdAt: job.createdAt, runAt: job.runAt }).toEqual({ createdAt: T0 + 5_000, runAt: T0 + 5_000 });
      });
    });

    it('upsertAspect stamps created and lastModified from the clock, keeps created on update and bumps versions', async () => {
      await withCatalog(async ({ catalog, adapter, clock }) => {
        const first = await catalog.entities.upsertAspect(ADMIN, URN.a, 'datasetProperties', properties('orders'));
        expect(first.aspects.datasetProperties).toEqual({
          value: properties('orders'),
          version: 1,
          created: { time: T0, actor: ADMIN },
          lastModified: { time: T0, actor: ADMIN },
        });

        clock.now = T0 + 60_000;
        await catalog.entities.upsertAspect(EDITOR, URN.a, 'datasetProperties', properties('orders v2'));
        const read = await catalog.entities.getAspect(READER, URN.a, 'datasetProperties');
        expect(read).toEqual({
          value: properties('orders v2'),
          version: 2,
          created: { time: T0, actor: ADMIN },
          lastModified: { time: T0 + 60_000, actor: EDITOR },
        });

        clock.now = T0 + 120_000;
        await catalog.entities.upsertAspect(EDITOR, URN.a, 'status', { removed: false });
        const [stored] = await adapter.readEntities([URN.a]);
        expect(stored?.version).toBe(3);
        expect([stored?.aspects.datasetProperties?.version, stored?.aspects.datasetProperties?.lastModified]).toEqual([
          2,
          { time: T0 + 60_000, actor: EDITOR },
        ]);
        expect([stored?.aspects.status?.version, stored?.aspects.status?.created]).toEqual([1, { time: T0 + 120_000, actor: EDITOR }]);
        if (inspect) expect(await inspect.countAspects(adapter)).toBe(2);
      });
    });

    it('upsertAspects writes several aspects in one commit', async () => {
      await withCatalog(async ({ catalog, adapter }) => {
        const view = await catalog.entities.upsertAspects(ADMIN, URN.a, {
          datasetProperties: properties('orders'),
          status: { removed: false },
        });
        expect(Object.keys(view.aspects).sort()).toEqual(['datasetProperties', 'status']);
        const [stored] = await adapter.readEntities([URN.a]);
        expect([stored?.version, stored?.aspects.datasetProperties?.version, stored?.aspects.status?.version]).toEqual([1, 1, 1]);
      });
    });

    it('writes nothing of a multi-aspect upsert when one aspect is invalid', async () => {
      await withCatalog(async ({ catalog, adapter }) => {
        const outcome = await rejectionDetails(
          catalog.entities.upsertAspects(ADMIN, URN.a, { datasetProperties: properties('orders'), status: { removed: 'yes' } as never }),
        );
        expect(outcome).toEqual({ code: 'INVALID_INPUT', paths: ['/aspects/status/removed'] });
        await expectEmpty(adapter);
      });
    });

    it('writes nothing of a multi-entity upsert when the adapter fails in the middle of the commit', async () => {
      const fault = faultAt(1);
      await withCatalog(async ({ catalog, adapter }) => {
        fault.arm();
        const items = [URN.a, URN.b, URN.c].map((urn) => ({ urn, aspects: { datasetProperties: properties(urn) } }));
        await expectRejects(expect, catalog.entities.upsertMany(ADMIN, items));
        expect(fault.steps.map((s) => s.entityIndex)).toEqual([0, 1]);
        await expectEmpty(adapter);
        fault.disarm();
        await catalog.entities.upsertMany(ADMIN, items);
        expect((await adapter.scanEntities({ limit: 10 })).map((e) => e.urn)).toEqual([URN.a, URN.b, URN.c]);
      }, fault.injector);
    });

    it('rejects invalid input with INVALID_INPUT naming where it is, and writes nothing', async () => {
      await withCatalog(async ({ catalog, adapter }) => {
        const cases: Array<{ urn: string; aspects: Record<string, JsonObject>; paths: string[] }> = [
          { urn: 'not-a-urn', aspects: { datasetProperties: properties('x') }, paths: ['/urn'] },
          { urn: 'urn:li:spaceship:enterprise', aspects: { datasetProperties: properties('x') }, paths: ['/urn'] },
          { urn: URN.a, aspects: { bogusAspect: { name: 'x' } }, paths: ['/aspects/bogusAspect'] },
          { urn: URN.a, aspects: { chartInfo: { name: 'x' } }, paths: ['/aspects/chartInfo'] },
          { urn: URN.a, aspects: { datasetProperties: { name: 42 } }, paths: ['/aspects/datasetProperties/name'] },
          {
            urn: URN.a,
            aspects: { datasetProperties: { name: 42, typo: 'x' } },
            paths: ['/aspects/datasetProperties/name', '/aspects/datasetProperties/typo'],
          },
        ];
        for (const { urn, aspects, paths } of cases) {
          const outcome = await rejectionDetails(catalog.entities.upsertAspects(ADMIN, urn, aspects));
          expect({ urn, code: outcome.code, paths: [...outcome.paths].sort() }).toEqual({ urn, code: 'INVALID_INPUT', paths });
        }
        // The single-aspect entry point refuses the same input.
        for (const [urn, name, value] of [
          ['not-a-urn', 'datasetProperties', properties('x')],
          ['urn:li:spaceship:enterprise', 'datasetProperties', properties('x')],
          [URN.a, 'bogusAspect', { name: 'x' }],
          [URN.a, 'datasetProperties', { name: 42 }],
        ] as const) {
          const outcome = await rejectionDetails(catalog.entities.upsertAspect(ADMIN, urn, name as never, value as never));
          expect(outcome.code).toBe('INVALID_INPUT');
          expect(outcome.paths.length).toBeGreaterThan(0);
        }
        await expectEmpty(adapter);
      });
    });

    it('refuses writes and deletes by an actor without EDIT_ENTITY with FORBIDDEN; reading needs no privilege', async () => {
      await withCatalog(async ({ catalog, adapter }) => {
        await expectCode(expect, catalog.entities.upsertAspect(READER, URN.a, 'datasetProperties', properties('x')), 'FORBIDDEN');
        await expectEmpty(adapter);
        await catalog.entities.upsertAspects(ADMIN, URN.a, { datasetProperties: properties('orders'), status: { removed: false } });
        await expectCode(expect, catalog.entities.deleteAspect(READER, URN.a, 'status'), 'FORBIDDEN');
        await expectCode(expect, catalog.entities.delete(READER, URN.a), 'FORBIDDEN');
        const read = await catalog.entities.get(READER, URN.a);
        expect(Object.keys(read?.aspects ?? {}).sort()).toEqual(['datasetProperties', 'status']);
      });
    });

    it('refuses every call without a valid actor with UNAUTHENTICATED', async () => {
      await withCatalog(async ({ catalog, adapter }) => {
        await expectCode(expect, catalog.entities.upsertAspect('', URN.a, 'datasetProperties', properties('x')), 'UNAUTHENTICATED');
        await expectCode(expect, catalog.entities.upsertAspect('admin', URN.a, 'datasetProperties', properties('x')), 'UNAUTHENTICATED');
        await expectCode(expect, catalog.entities.get('', URN.a), 'UNAUTHENTICATED');
        await expectCode(expect, catalog.entities.delete('', URN.a), 'UNAUTHENTICATED');
        await expectEmpty(adapter);
      });
    });

    it('deletes an entity with all its aspects; deleting it again reports false', async () => {
      await withCatalog(async ({ catalog, adapter }) => {
        await catalog.entities.upsertAspects(ADMIN, URN.a, { datasetProperties: properties('a'), status: { removed: false } });
        await catalog.entities.upsertAspect(ADMIN, URN.b, 'datasetProperties', properties('b'));
        expect(await catalog.entities.delete(EDITOR, URN.a)).toBe(true);
        expect(await catalog.entities.get(READER, URN.a)).toBeUndefined();
        expect((await adapter.scanEntities({ limit: 10 })).map((e) => e.urn)).toEqual([URN.b]);
        if (inspect) expect(await inspect.countAspects(adapter)).toBe(1);
        expect(await catalog.entities.delete(EDITOR, URN.a)).toBe(false);
      });
    });

    it('deleteAspect removes one aspect; deleting the last one deletes the entity', async () => {
      await withCatalog(async ({ catalog, adapter }) => {
        await catalog.entities.upsertAspects(ADMIN, URN.a, { datasetProperties: properties('a'), status: { removed: false } });
        expect(await catalog.entities.deleteAspect(EDITOR, URN.a, 'status')).toBe(true);
        expect(await catalog.entities.deleteAspect(EDITOR, URN.a, 'status')).toBe(false);
        const [left] = await adapter.readEntities([URN.a]);
        expect([left?.version, Object.keys(left?.aspects ?? {})]).toEqual([2, ['datasetProperties']]);
        expect(await catalog.entities.deleteAspect(EDITOR, URN.a, 'datasetProperties')).toBe(true);
        expect(await catalog.entities.get(READER, URN.a)).toBeUndefined();
        await expectEmpty(adapter);
      });
    });
  });
}
