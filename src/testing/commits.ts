import type { StorageAdapter, WriteBatch } from '../adapter/types';
import type { ConformanceHarness } from './types';
import {
  aspect,
  createWrite,
  expectCode,
  expectRejects,
  faultAt,
  PROFILE_INDEX,
  seedEntities,
  T0,
  URN,
  urnsOf,
  withAdapter,
} from './support';

/** `commit` is all or nothing: version conflicts and faults inside the transaction leave no trace. */
export function registerCommitTests(harness: ConformanceHarness): void {
  const { describe, it, expect, inspect } = harness;

  /** What the store holds, through the adapter and (when the harness can) read directly. */
  async function snapshot(adapter: StorageAdapter): Promise<unknown> {
    return {
      entities: await adapter.scanEntities({ limit: 1000 }),
      jobs: (await adapter.listJobs({ includeDead: true })).map((j) => ({ type: j.type, payload: j.payload })),
      storedAspectRows: await inspect?.countAspects(adapter),
      storedJobRows: await inspect?.countJobs(adapter),
    };
  }

  /** Updates `a` (existing), creates `b` and `c`, queues a job. */
  const threeEntityBatch = (): WriteBatch => ({
    entities: [
      { urn: URN.a, entityType: 'dataset', expectVersion: 1, put: [aspect('info', { name: 'changed' }, 2)], delete: ['status'] },
      createWrite(URN.b, [aspect('info', { name: 'b' })]),
      createWrite(URN.c, [aspect('info', { name: 'c' })]),
    ],
    jobs: [{ type: 'conformance.batch', payload: { n: 1 }, runAt: T0 }],
  });

  describe('change token (capability changeToken)', () => {
    const changeTokenTest = harness.capabilities.changeToken ? it : harness.skip;
    changeTokenTest('stays while nothing is committed and moves with every commit, a failed one included', async () => {
      await withAdapter(harness, async (adapter) => {
        const changeToken = () => adapter.changeToken!();
        const first = await changeToken();
        expect(await changeToken()).toBe(first);
        await adapter.readEntities([URN.a]);
        expect(await changeToken()).toBe(first);
        await seedEntities(adapter, [URN.a], ['info']);
        const second = await changeToken();
        expect(second).not.toBe(first);
        // A conflicting batch changes nothing, but a token that moves anyway only costs a re-read.
        await expectCode(expect, adapter.commit({ entities: [createWrite(URN.a, [aspect('info', { name: 'again' })])] }), 'CONFLICT');
        const third = await changeToken();
        await adapter.commit({
          entities: [{ urn: URN.a, entityType: 'dataset', expectVersion: 1, put: [aspect('info', { name: 'v2' }, 2)] }],
        });
        expect(await changeToken()).not.toBe(third);
        expect(typeof first).toBe('string');
      });
    });

    changeTokenTest('a search answer carries the token of the state it read, when the adapter reports one', async () => {
      await withAdapter(harness, async (adapter) => {
        const request = { entityTypes: [], filter: [], includeRemoved: false, order: 'urn' as const, limit: 5 };
        await seedEntities(adapter, [URN.a], ['info']);
        const answer = await adapter.search(request);
        expect(answer.changeToken).toBe(await adapter.changeToken!());
        expect((await adapter.search(request)).changeToken).toBe(answer.changeToken);
        await adapter.commit({ entities: [createWrite(URN.b, [aspect('info', { name: 'b' })])] });
        const after = await adapter.search(request);
        expect(after.changeToken).not.toBe(answer.changeToken);
        expect(after.changeToken).toBe(await adapter.changeToken!());
      });
    });
  });

  describe('commit atomicity', () => {
    it('applies a whole batch: entities and jobs (checked in the store itself when the harness can)', async () => {
      await withAdapter(harness, async (adapter) => {
        await seedEntities(adapter, [URN.a], ['info', 'status']);
        await adapter.commit(threeEntityBatch());
        const entities = await adapter.readEntities([URN.a, URN.b, URN.c]);
        expect(entities.map((e) => [e.urn, e.version, e.aspects.info?.value, Object.keys(e.aspects).length])).toEqual([
          [URN.a, 2, { name: 'changed' }, 1],
          [URN.b, 1, { name: 'b' }, 1],
          [URN.c, 1, { name: 'c' }, 1],
        ]);
        expect((await adapter.listJobs()).map((j) => j.type)).toEqual(['conformance.batch']);
        if (inspect) {
          expect(await inspect.countAspects(adapter)).toBe(3);
          expect(await inspect.countJobs(adapter)).toBe(1);
        }
      });
    });

    it('rejects a wrong expectVersion with CONFLICT and applies nothing of the batch', async () => {
      await withAdapter(harness, async (adapter) => {
        await seedEntities(adapter, [URN.a], ['info', 'status']);
        const before = await snapshot(adapter);
        const batch = threeEntityBatch();
        batch.entities = [batch.entities![1]!, batch.entities![2]!, { ...batch.entities![0]!, expectVersion: 7 }];
        await expectCode(expect, adapter.commit(batch), 'CONFLICT');
        expect(await adapter.readEntities([URN.b, URN.c])).toEqual([]);
        expect(await snapshot(adapter)).toEqual(before);
      });
    });

    it('rejects expectVersion 0 for an entity that exists with CONFLICT', async () => {
      await withAdapter(harness, async (adapter) => {
        await seedEntities(adapter, [URN.a]);
        const before = await snapshot(adapter);
        await expectCode(
          expect,
          adapter.commit({
            entities: [createWrite(URN.b, [aspect('info', { name: 'b' })]), createWrite(URN.a, [aspect('info', { name: 'again' })])],
          }),
          'CONFLICT',
        );
        expect(await adapter.readEntities([URN.b])).toEqual([]);
        expect(await snapshot(adapter)).toEqual(before);
      });
    });

    it('rejects a non-zero expectVersion for an entity that does not exist with CONFLICT', async () => {
      await withAdapter(harness, async (adapter) => {
        await expectCode(
          expect,
          adapter.commit({ entities: [{ urn: URN.a, entityType: 'dataset', expectVersion: 1, put: [aspect('info', { name: 'a' })] }] }),
          'CONFLICT',
        );
        expect(await adapter.scanEntities({ limit: 10 })).toEqual([]);
      });
    });

    it('rejects completing a job the worker does not hold with CONFLICT and applies nothing of the batch', async () => {
      await withAdapter(harness, async (adapter) => {
        await adapter.commit({ jobs: [{ type: 'conformance.held', payload: {}, runAt: T0 }] });
        const [job] = await adapter.claimJobs({ workerId: 'worker-a', now: T0, leaseMs: 60_000, limit: 1 });
        const before = await snapshot(adapter);
        await expectCode(
          expect,
          adapter.commit({
            entities: [createWrite(URN.a, [aspect('info', { name: 'a' })])],
            jobs: [{ type: 'conformance.follow-up', payload: {}, runAt: T0 }],
            completeJobs: [{ id: job!.id, workerId: 'worker-b' }],
          }),
          'CONFLICT',
        );
        expect(await snapshot(adapter)).toEqual(before);
        expect((await adapter.listJobs())[0]?.lockedBy).toBe('worker-a');
      });
    });
  });

  describe('fault injection inside commit', () => {
    it('calls the injector after each entity with its index and URN', async () => {
      const fault = faultAt(99);
      await withAdapter(
        harness,
        async (adapter) => {
          fault.arm();
          await adapter.commit({
            entities: [createWrite(URN.a, [aspect('info', { name: 'a' })]), createWrite(URN.b, [aspect('info', { name: 'b' })])],
          });
          expect(fault.steps).toEqual([
            { entityIndex: 0, urn: URN.a },
            { entityIndex: 1, urn: URN.b },
          ]);
        },
        fault.injector,
      );
    });

    it('a fault at entity 1 of 3 leaves nothing: no entity, no change, no job — and the store stays usable', async () => {
      const fault = faultAt(1);
      await withAdapter(
        harness,
        async (adapter) => {
          await seedEntities(adapter, [URN.a], ['info', 'status']);
          const before = await snapshot(adapter);
          fault.arm();
          await expectRejects(expect, adapter.commit(threeEntityBatch()));
          expect(fault.steps.map((s) => s.entityIndex)).toEqual([0, 1]);
          expect(await adapter.readEntities([URN.b, URN.c])).toEqual([]);
          expect(await adapter.listJobs({ includeDead: true })).toEqual([]);
          const [a] = await adapter.readEntities([URN.a]);
          expect([a?.version, a?.aspects.info?.value, Object.keys(a?.aspects ?? {}).sort()]).toEqual([
            1,
            { name: `info of ${URN.a}` },
            ['info', 'status'],
          ]);
          expect(await snapshot(adapter)).toEqual(before);
          if (inspect) {
            expect(await inspect.countAspects(adapter)).toBe(2);
            expect(await inspect.countJobs(adapter)).toBe(0);
          }

          fault.disarm();
          await adapter.commit(threeEntityBatch());
          expect(urnsOf(await adapter.scanEntities({ limit: 10 }))).toEqual([URN.a, URN.b, URN.c]);
          expect(await adapter.listJobs()).toHaveLength(1);
        },
        fault.injector,
      );
    });

    it('a fault after a deleteEntity keeps the entity, its aspects and its timeseries rows', async () => {
      const fault = faultAt(1);
      await withAdapter(
        harness,
        async (adapter) => {
          await seedEntities(adapter, [URN.a], ['info', 'status']);
          await adapter.appendTimeseries(PROFILE_INDEX, [{ urn: URN.a, timestampMillis: T0, value: { timestampMillis: T0 } }]);
          const before = await snapshot(adapter);
          fault.arm();
          await expectRejects(
            expect,
            adapter.commit({
              entities: [
                { urn: URN.a, entityType: 'dataset', expectVersion: 1, deleteEntity: true, searchDocument: null },
                createWrite(URN.b, [aspect('info', { name: 'b' })]),
              ],
            }),
          );
          expect(await snapshot(adapter)).toEqual(before);
          expect((await adapter.queryTimeseries({ ...PROFILE_INDEX, urn: URN.a, limit: 10 })).rows).toHaveLength(1);
        },
        fault.injector,
      );
    });
  });
}
