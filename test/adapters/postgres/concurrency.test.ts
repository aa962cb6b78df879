import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../../adapters/postgres/schema';
import type { JsonObject, StorageAdapter } from '../../../src/adapter/types';
import { createCatalog, createCatalogContext, type Catalog } from '../../../src/catalog';
import { EntityService, WritePipeline } from '../../../src/core/entities';
import { EntityWriter } from '../../../src/core/entities/writer';
import { CLEANUP_BATCH_SIZE, CLEANUP_JOB_TYPE } from '../../../src/core/properties/cleanup';
import type { CatalogContext } from '../../../src/core/context';
import { CatalogError } from '../../../src/errors';
import { SchemaPool, withPostgresServer } from '../../support/postgres';

/**
 * Several processes on one database, played by several adapters (each with its own pool) and catalogs
 * in this one process, on one schema.
 */

const ADMIN = 'urn:li:corpuser:admin';
const T0 = 1_700_000_000_000;
const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,orders,PROD)';
const RETENTION = 'urn:li:structuredProperty:io.test.retention';
const TIER = 'urn:li:structuredProperty:io.test.tier';
const datasetUrn = (name: string) => `urn:li:dataset:(urn:li:dataPlatform:hive,${name},PROD)`;

interface Process {
  ctx: CatalogContext;
  adapter: StorageAdapter;
  clock: { now: number };
  close(): Promise<void>;
}

/**
 * An adapter whose process "dies" at its n-th commit that completes a job: that commit never reaches
 * the database and never returns, so the job stays claimed, as when a process is killed mid-job.
 */
function mortal(adapter: StorageAdapter): { adapter: StorageAdapter; died: Promise<void>; dieAtJobCompletion(n: number): void } {
  let dieAt = Number.POSITIVE_INFINITY;
  let completions = 0;
  let markDead: () => void = () => undefined;
  const died = new Promise<void>((resolve) => {
    markDead = resolve;
  });
  const wrapped: StorageAdapter = {
    ...adapter,
    async commit(batch) {
      if (batch.completeJobs?.length && ++completions >= dieAt) {
        markDead();
        return new Promise<void>(() => undefined);
      }
      return adapter.commit(batch);
    },
  };
  return { adapter: wrapped, died, dieAtJobCompletion: (n) => void (dieAt = n) };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'resolved';
  } catch (error) {
    return error instanceof CatalogError ? error.code : `not a CatalogError: ${String(error)}`;
  }
}

await withPostgresServer('test/adapters/postgres/concurrency.test.ts', 'postgres: several processes on one database', () => {
  const schemas = new SchemaPool();
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const p of open.splice(0)) await p.close();
    await schemas.dropAll();
  });
  afterAll(async () => {
    await schemas.end();
  });

  interface CatalogProcess {
    catalog: Catalog;
    adapter: StorageAdapter;
    clock: { now: number };
  }

  /** One "process" with the whole public catalog (structured properties included) on the shared schema. */
  async function startCatalog(schema: string, adapter: StorageAdapter = schemas.adapter({ schema })): Promise<CatalogProcess> {
    const clock = { now: T0 };
    const catalog = createCatalog({ adapter, superUsers: [ADMIN], clock: () => clock.now, jobs: { background: false } });
    await catalog.ready();
    open.push({ close: () => catalog.close() });
    return { catalog, adapter, clock };
  }

  /** One "process": its own adapter (own pool) and catalog context on the shared schema. */
  async function startProcess(schema: string, clock = { now: T0 }): Promise<Process> {
    const adapter = schemas.adapter({ schema });
    const { ctx, ready } = createCatalogContext({ adapter, superUsers: [ADMIN], clock: () => clock.now, jobs: { background: false } });
    await ready;
    await ctx.jobs.start();
    let closed = false;
    const process: Process = {
      ctx,
      adapter,
      clock,
      async close() {
        if (closed) return;
        closed = true;
        await ctx.jobs.stop();
        await adapter.close();
      },
    };
    open.push(process);
    return process;
  }

  describe('postgres: several processes on one database', () => {
    it('migrates a fresh schema once when four processes open it at the same moment', async () => {
      const schema = schemas.freshSchema();
      const adapters = Array.from({ length: 4 }, () => schemas.adapter({ schema }));
      try {
        const outcomes = await Promise.all(adapters.map((a) => codeOf(a.open())));
        expect(outcomes).toEqual(['resolved', 'resolved', 'resolved', 'resolved']);
        const versions = await schemas.query<{ version: number }>(`SELECT version FROM "${schema}".metacatalog_schema_version`);
        expect(versions).toEqual([{ version: SCHEMA_VERSION }]);
        // Every process works on the same tables.
        await adapters[0]!.commit({ entities: [{ urn: DATASET, entityType: 'dataset', expectVersion: 0, put: [] }] });
        for (const a of adapters) expect((await a.readEntities([DATASET])).map((e) => e.version)).toEqual([1]);
      } finally {
        for (const a of adapters) await a.close();
      }
    });

    it('refuses a schema migrated by a newer release', async () => {
      const schema = schemas.freshSchema();
      const first = schemas.adapter({ schema });
      await first.open();
      await first.close();
      await schemas.query(`UPDATE "${schema}".metacatalog_schema_version SET version = $1`, [SCHEMA_VERSION + 1]);
      const second = schemas.adapter({ schema });
      await expect(second.open()).rejects.toThrow(/newer than this release supports/);
      await second.close();
    });

    it('a structured property defined by one process is seen by the other at once, and values flow both ways', async () => {
      const schema = schemas.freshSchema();
      const [a, b] = [await startCatalog(schema), await startCatalog(schema)];
      const created = await a.catalog.properties.create(ADMIN, {
        qualifiedName: 'io.test.retention',
        valueType: 'number',
        entityTypes: ['dataset'],
      });
      expect(created.urn).toBe(RETENTION);
      const seen = await b.catalog.properties.get(ADMIN, RETENTION);
      expect(seen).toEqual(created);
      await b.catalog.properties.upsertValues(ADMIN, DATASET, { properties: [{ propertyUrn: RETENTION, values: [{ double: 30 }] }] });
      expect(await a.catalog.properties.getValues(ADMIN, DATASET)).toEqual(await b.catalog.properties.getValues(ADMIN, DATASET));
      expect((await a.catalog.properties.getValues(ADMIN, DATASET)).map((v) => [v.propertyUrn, v.values])).toEqual([
        [RETENTION, [{ double: 30 }]],
      ]);
      // A change of the definition by b is what a validates against next.
      await b.catalog.properties.softDelete(ADMIN, RETENTION);
      expect(
        await codeOf(
          a.catalog.properties.upsertValues(ADMIN, DATASET, { properties: [{ propertyUrn: RETENTION, values: [{ double: 31 }] }] }),
        ),
      ).toBe('INVALID_INPUT');
      expect(await a.catalog.properties.getValues(ADMIN, DATASET)).toEqual([]);
      await a.catalog.properties.restore(ADMIN, RETENTION);
      expect((await b.catalog.properties.getValues(ADMIN, DATASET)).map((v) => v.values)).toEqual([[{ double: 30 }]]);
    });

    it('two commits expecting the same version: exactly one wins, the other is a CONFLICT and leaves nothing', async () => {
      const schema = schemas.freshSchema();
      const a = await startProcess(schema);
      const b = await startProcess(schema);
      await new EntityService(a.ctx, new WritePipeline(a.ctx, [])).upsertAspect(ADMIN, DATASET, 'datasetProperties', { name: 'orders' });
      const put = (who: string) => ({
        name: 'datasetProperties',
        value: { name: who },
        version: 2,
        created: { time: T0, actor: ADMIN },
        lastModified: { time: T0, actor: ADMIN },
      });
      for (let round = 0; round < 10; round++) {
        const [version] = (await a.adapter.readEntities([DATASET])).map((e) => e.version);
        const outcomes = await Promise.all(
          [a, b].map((p, i) =>
            codeOf(
              p.adapter.commit({
                entities: [{ urn: DATASET, entityType: 'dataset', expectVersion: version!, put: [put(`p${i}`)] }],
                jobs: [{ type: 'noop', payload: { round, writer: i }, runAt: T0 }],
              }),
            ),
          ),
        );
        expect([...outcomes].sort()).toEqual(['CONFLICT', 'resolved']);
        const [after] = await b.adapter.readEntities([DATASET]);
        expect(after?.version).toBe(version! + 1);
        expect(after?.aspects.datasetProperties?.value).toEqual({ name: `p${outcomes.indexOf('resolved')}` });
        // Only the winner's job was queued.
        const jobs = (await a.adapter.listJobs()).filter((j) => j.payload.round === round);
        expect(jobs.map((j) => j.payload.writer)).toEqual([outcomes.indexOf('resolved')]);
      }
    });

    it('20 writers in two processes add keys to one map through the unit of work: no acknowledged key is lost', async () => {
      const schema = schemas.freshSchema();
      const a = await startProcess(schema);
      const b = await startProcess(schema);
      await new EntityService(a.ctx, new WritePipeline(a.ctx, [])).upsertAspect(ADMIN, DATASET, 'datasetProperties', {
        name: 'orders',
        customProperties: {},
      });
      const addKey = async (p: Process, key: string): Promise<string> => {
        // A client retries what the writer's own bounded retries could not place.
        for (let attempt = 0; attempt < 100; attempt++) {
          try {
            await new EntityWriter(p.ctx.adapter, p.ctx.registry, p.ctx.clock, () => p.ctx.jobs.kick()).write(
              ADMIN,
              [DATASET],
              (current) => {
                const value = current.get(DATASET)?.aspects.datasetProperties?.value ?? { name: 'orders' };
                const custom = (value.customProperties ?? {}) as JsonObject;
                return {
                  entities: [
                    { urn: DATASET, put: { datasetProperties: { value: { ...value, customProperties: { ...custom, [key]: 'yes' } } } } },
                  ],
                };
              },
            );
            return key;
          } catch (error) {
            if (!(error instanceof CatalogError) || error.code !== 'CONFLICT') throw error;
          }
        }
        throw new Error(`${key} was never acknowledged`);
      };
      const keys = Array.from({ length: 20 }, (_, i) => `writer_${String(i).padStart(2, '0')}`);
      const acknowledged = await Promise.all(keys.map((key, i) => addKey(i % 2 === 0 ? a : b, key)));
      expect(acknowledged).toEqual(keys);
      const [stored] = await b.adapter.readEntities([DATASET]);
      const custom = stored?.aspects.datasetProperties?.value.customProperties as JsonObject;
      expect(Object.keys(custom).sort()).toEqual(keys);
      // One version per acknowledged write, on top of the creation: no write was applied twice or lost.
      expect(stored?.version).toBe(21);
      expect(stored?.aspects.datasetProperties?.version).toBe(21);
    });

    it('a job claimed by a process that died is finished by the other once the lease expires', async () => {
      const schema = schemas.freshSchema();
      const a = await startProcess(schema);
      const b = await startProcess(schema);
      const runs: string[] = [];
      for (const p of [a, b]) {
        p.ctx.jobs.register('test.touch', async (job) => {
          runs.push(job.id);
          const urn = String(job.payload.urn);
          return {
            commit: {
              entities: [
                {
                  urn,
                  entityType: 'dataset',
                  expectVersion: 0,
                  put: [
                    {
                      name: 'status',
                      value: { removed: false },
                      version: 1,
                      created: { time: T0, actor: ADMIN },
                      lastModified: { time: T0, actor: ADMIN },
                    },
                  ],
                },
              ],
            },
          };
        });
      }
      await a.adapter.commit({ jobs: [{ type: 'test.touch', payload: { urn: DATASET }, runAt: T0 }] });
      // Process a claims it and dies (its claim is never completed nor released).
      const [claimed] = await a.adapter.claimJobs({ workerId: 'other-host:4242:dead', now: T0, leaseMs: 30_000, limit: 1 });
      expect(claimed?.attempts).toBe(1);
      await a.close();

      // While the lease holds, b cannot take it.
      expect(await b.adapter.claimJobs({ workerId: 'probe', now: T0 + 29_999, leaseMs: 1, limit: 1 })).toEqual([]);
      b.clock.now = T0 + 30_000;
      const report = await b.ctx.jobs.settle();
      expect(report).toEqual({ completed: 1, failed: [] });
      expect(runs).toEqual([claimed!.id]);
      expect(await b.adapter.listJobs({ includeDead: true })).toEqual([]);
      expect((await b.adapter.readEntities([DATASET])).map((e) => e.version)).toEqual([1]);
    });

    it('a hard-delete clean-up started by one process and interrupted is finished by the other, each batch once', async () => {
      const schema = schemas.freshSchema();
      const dying = mortal(schemas.adapter({ schema }));
      const a = await startCatalog(schema, dying.adapter);
      const b = await startCatalog(schema);
      await a.catalog.properties.create(ADMIN, { qualifiedName: 'io.test.retention', valueType: 'number', entityTypes: ['dataset'] });
      await a.catalog.properties.create(ADMIN, { qualifiedName: 'io.test.tier', valueType: 'string', entityTypes: ['dataset'] });
      // Three batches of the clean-up: CLEANUP_BATCH_SIZE, CLEANUP_BATCH_SIZE and 200 entities.
      const urns = Array.from({ length: 2 * CLEANUP_BATCH_SIZE + 200 }, (_, i) => datasetUrn(`t${String(i).padStart(5, '0')}`));
      await a.catalog.properties.upsertValuesMany(
        ADMIN,
        urns.map((urn, i) => ({
          urn,
          properties: [
            { propertyUrn: RETENTION, values: [{ double: i }] },
            { propertyUrn: TIER, values: [{ string: 'gold' }] },
          ],
        })),
      );
      expect(await b.adapter.countEntitiesWithPropertyValues!(RETENTION)).toBe(urns.length);

      expect(await a.catalog.properties.hardDelete(ADMIN, RETENTION)).toEqual({ urn: RETENTION, entitiesToClean: urns.length });
      // Gone for the other process at once: the definition, and the values from every read.
      expect(await b.catalog.properties.get(ADMIN, RETENTION)).toBeUndefined();
      expect((await b.catalog.properties.getValues(ADMIN, urns[0]!)).map((v) => v.propertyUrn)).toEqual([TIER]);

      // Process a runs the first batch, then dies inside the second, before its commit: its claim stays.
      dying.dieAtJobCompletion(2);
      void a.catalog.settle().catch(() => undefined);
      await dying.died;
      await dying.adapter.close();
      expect(await b.adapter.countEntitiesWithPropertyValues!(RETENTION)).toBe(urns.length - CLEANUP_BATCH_SIZE);
      const [held] = await b.adapter.listJobs({ includeDead: true });
      expect([held?.type, held?.lockedBy === null, held?.attempts]).toEqual([CLEANUP_JOB_TYPE, false, 1]);

      // Process b cannot take it while a's lease holds; once it expires, b finishes the clean-up.
      expect(await b.adapter.claimJobs({ workerId: 'probe', now: T0 + 1, leaseMs: 1, limit: 1 })).toEqual([]);
      b.clock.now = held!.lockedUntil!;
      const report = await b.catalog.settle();
      expect(report).toEqual({ completed: 2, failed: [] });
      expect(await b.adapter.countEntitiesWithPropertyValues!(RETENTION)).toBe(0);
      expect(await b.adapter.listJobs({ includeDead: true })).toEqual([]);
      const stored = await b.adapter.readEntities(urns, ['structuredProperties']);
      const propertyUrns = stored.map((e) =>
        (e.aspects.structuredProperties?.value.properties as Array<{ propertyUrn: string }>).map((p) => p.propertyUrn),
      );
      expect(propertyUrns.filter((list) => list.join() !== TIER)).toEqual([]);
      expect(stored).toHaveLength(urns.length);
    });

    it('a truncation by reindex in one process while the other appends loses no appended row', async () => {
      const schema = schemas.freshSchema();
      const a = await startProcess(schema);
      const b = await startProcess(schema);
      const index = { indexName: 'dataset_datasetprofileaspect_v1', entityType: 'dataset', aspect: 'datasetProfile' };
      const row = (t: number) => ({ urn: DATASET, timestampMillis: t, value: { timestampMillis: t } });
      // 100 old rows (to be truncated), then 40 batches of 5 new rows appended while b rebuilds 5 times.
      await a.adapter.appendTimeseries(
        index,
        Array.from({ length: 100 }, (_, i) => row(T0 + i)),
      );
      const appends = (async () => {
        for (let batch = 0; batch < 40; batch++) {
          await a.adapter.appendTimeseries(
            index,
            Array.from({ length: 5 }, (_, i) => row(T0 + 1_000 + batch * 5 + i)),
          );
        }
      })();
      const removed: number[] = [];
      for (let i = 0; i < 5; i++) removed.push(await b.adapter.rebuildTimeseriesIndex(index, T0 + 999));
      await appends;
      expect(removed.reduce((x, y) => x + y, 0)).toBe(100);
      expect(await b.adapter.countTimeseries(index, T0 + 999)).toEqual({ total: 200, matching: 0 });
      const page = await a.adapter.queryTimeseries({ ...index, limit: 1_000 });
      expect(page.rows.map((r) => r.timestampMillis)).toEqual(Array.from({ length: 200 }, (_, i) => T0 + 1_199 - i));
      const [size] = await b.adapter.timeseriesIndexSizes();
      expect([size?.indexName, size?.rows]).toEqual([index.indexName, 200]);
    });

    it('two processes draining one queue run every job exactly once', async () => {
      const schema = schemas.freshSchema();
      const a = await startProcess(schema);
      const b = await startProcess(schema);
      const runs = new Map<number, string[]>();
      for (const [p, by] of [
        [a, 'a'],
        [b, 'b'],
      ] as const) {
        p.ctx.jobs.register('test.count', async (job) => {
          const n = Number(job.payload.n);
          runs.set(n, [...(runs.get(n) ?? []), by]);
          return { commit: {} };
        });
      }
      await a.adapter.commit({ jobs: Array.from({ length: 60 }, (_, n) => ({ type: 'test.count', payload: { n }, runAt: T0 })) });
      const [ra, rb] = await Promise.all([a.ctx.jobs.settle(), b.ctx.jobs.settle()]);
      expect(ra.completed + rb.completed).toBe(60);
      expect([...runs.keys()].sort((x, y) => x - y)).toEqual(Array.from({ length: 60 }, (_, n) => n));
      expect([...runs.values()].filter((by) => by.length !== 1)).toEqual([]);
      expect(await a.adapter.listJobs({ includeDead: true })).toEqual([]);
    });
  });
});
