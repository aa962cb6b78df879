import { Buffer } from 'node:buffer';
import { describe, it, expect } from 'vitest';
import { createMemoryAdapter } from '../../../adapters/memory';
import type {
  AspectPut,
  EntityWrite,
  JsonObject,
  SearchDocument,
  SearchDocumentProperty,
  StorageAdapter,
  TimeseriesIndexRef,
  TimeseriesRow,
} from '../../../src/adapter/types';
import { CatalogError } from '../../../src/errors';

const ACTOR = 'urn:li:corpuser:tester';
const datasetUrn = (name: string): string => `urn:li:dataset:(urn:li:dataPlatform:hive,${name},PROD)`;
/** One URN per name, typed as a tuple of the same length. */
const datasetUrns = <const Names extends readonly string[]>(...names: Names) => names.map(datasetUrn) as { [K in keyof Names]: string };

function aspect(name: string, value: JsonObject, version = 1, systemMetadata?: JsonObject): AspectPut {
  return {
    name,
    value,
    version,
    created: { time: 1_000, actor: ACTOR },
    lastModified: { time: 2_000 + version, actor: ACTOR },
    ...(systemMetadata ? { systemMetadata } : {}),
  };
}

function searchDocument(urn: string, properties: SearchDocumentProperty[] = [], removed = false): SearchDocument {
  return { urn, entityType: 'dataset', removed, text: { urnKey: urn }, fields: {}, properties };
}

/** A write that creates a dataset with one aspect. */
function create(urn: string, value: JsonObject = { name: urn }, entityType = 'dataset'): EntityWrite {
  return { urn, entityType, expectVersion: 0, put: [aspect('datasetProperties', value)] };
}

async function opened(options: Parameters<typeof createMemoryAdapter>[0] = {}): Promise<ReturnType<typeof createMemoryAdapter>> {
  const adapter = createMemoryAdapter(options);
  await adapter.open();
  return adapter;
}

/** Resolves to the CatalogError code the promise rejects with. */
async function rejectionCode(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof CatalogError) return error.code;
    throw error;
  }
  throw new Error('expected a rejection');
}

const PROFILE: TimeseriesIndexRef = { indexName: 'dataset_datasetprofileaspect_v1', entityType: 'dataset', aspect: 'datasetProfile' };
const USAGE: TimeseriesIndexRef = {
  indexName: 'dataset_datasetusagestatistics_v1',
  entityType: 'dataset',
  aspect: 'datasetUsageStatistics',
};
const CHART_USAGE: TimeseriesIndexRef = { indexName: 'chart_chartusagestatistics_v1', entityType: 'chart', aspect: 'chartUsageStatistics' };

function row(urn: string, timestampMillis: number, value: JsonObject = { timestampMillis }): TimeseriesRow {
  return { urn, timestampMillis, value };
}

/** Every row of an index, newest first. */
async function allRows(adapter: StorageAdapter, index: TimeseriesIndexRef): Promise<TimeseriesRow[]> {
  return (await adapter.queryTimeseries({ ...index, limit: 1_000_000 })).rows;
}

describe('memory adapter: lifecycle', () => {
  it('declares its name and capabilities', () => {
    const adapter = createMemoryAdapter();
    expect(adapter.name).toBe('memory');
    expect(adapter.capabilities).toEqual({
      durable: false,
      changeToken: true,
      changeFeed: true,
      timeseriesInCommit: true,
      propertyValues: true,
    });
  });

  it('opens idempotently and keeps data across a second open', async () => {
    const adapter = await opened();
    await adapter.commit({ entities: [create(datasetUrn('a'))] });
    await adapter.open();
    expect((await adapter.readEntities([datasetUrn('a')])).map((e) => e.urn)).toEqual([datasetUrn('a')]);
  });

  it('rejects every call after close', async () => {
    const adapter = await opened();
    await adapter.close();
    const calls: Array<() => Promise<unknown>> = [
      () => adapter.open(),
      () => adapter.readEntities([datasetUrn('a')]),
      () => adapter.scanEntities({ limit: 10 }),
      () => adapter.commit({ entities: [create(datasetUrn('a'))] }),
      () => adapter.search({ entityTypes: [], filter: [], includeRemoved: false, order: 'urn', limit: 10 }),
      () => adapter.aggregate({ entityTypes: [], filter: [], includeRemoved: false, facets: [], maxValues: 10 }),
      () => adapter.findEntitiesWithPropertyValues({ propertyUrn: 'urn:li:structuredProperty:p', limit: 10 }),
      () => adapter.countEntitiesWithPropertyValues('urn:li:structuredProperty:p'),
      () => adapter.claimJobs({ workerId: 'w', now: 0, leaseMs: 10, limit: 1 }),
      () => adapter.releaseJob('1', 'w', { error: 'x', retryAt: null }),
      () => adapter.renewJobLease('1', 'w', 10),
      () => adapter.listJobs(),
      () => adapter.appendTimeseries(PROFILE, []),
      () => adapter.queryTimeseries({ ...PROFILE, limit: 10 }),
      () => adapter.timeseriesIndexSizes(),
      () => adapter.countTimeseries(PROFILE, 0),
      () => adapter.deleteTimeseriesBatch(PROFILE, 0, 10),
      () => adapter.rebuildTimeseriesIndex(PROFILE, 0),
    ];
    for (const call of calls) await expect(call()).rejects.toThrow('adapter is closed');
  });
});

describe('memory adapter: entities', () => {
  it('stores exactly what the domain stamped and bumps the entity version on every commit', async () => {
    const adapter = await opened();
    const urn = datasetUrn('orders');
    await adapter.commit({
      entities: [
        {
          urn,
          entityType: 'dataset',
          expectVersion: 0,
          put: [aspect('datasetProperties', { name: 'orders' }, 1, { runId: 'r1' }), aspect('status', { removed: false })],
        },
      ],
    });
    const [first] = await adapter.readEntities([urn]);
    expect(first).toEqual({
      urn,
      entityType: 'dataset',
      version: 1,
      aspects: {
        datasetProperties: {
          name: 'datasetProperties',
          value: { name: 'orders' },
          version: 1,
          created: { time: 1_000, actor: ACTOR },
          lastModified: { time: 2_001, actor: ACTOR },
          systemMetadata: { runId: 'r1' },
        },
        status: {
          name: 'status',
          value: { removed: false },
          version: 1,
          created: { time: 1_000, actor: ACTOR },
          lastModified: { time: 2_001, actor: ACTOR },
        },
      },
    });

    await adapter.commit({
      entities: [
        {
          urn,
          entityType: 'dataset',
          expectVersion: 1,
          put: [aspect('datasetProperties', { name: 'orders v2' }, 2)],
          delete: ['status', 'absent'],
        },
      ],
    });
    const [second] = await adapter.readEntities([urn]);
    expect(second?.version).toBe(2);
    expect(Object.keys(second?.aspects ?? {})).toEqual(['datasetProperties']);
    expect(second?.aspects.datasetProperties?.value).toEqual({ name: 'orders v2' });
    expect(second?.aspects.datasetProperties?.version).toBe(2);
    expect(second?.aspects.datasetProperties?.systemMetadata).toBeUndefined();
  });

  it('stores the system metadata one object holds at each commit, when entities of a commit share the object', async () => {
    const adapter = await opened();
    const [a, b, c, d, e] = datasetUrns('shared-a', 'shared-b', 'shared-c', 'shared-d', 'shared-e');
    // One object per set of properties for the entities of a write, as the domain hands them over;
    // changed in place before the next commit.
    const shared: JsonObject = { runId: 'r1', properties: { k: 'v' } };
    const other: JsonObject = { runId: 'o1' };
    const withMetadata = (urn: string, metadata: JsonObject): EntityWrite => ({
      ...create(urn),
      put: [aspect('datasetProperties', { name: urn }, 1, metadata)],
    });
    await adapter.commit({ entities: [withMetadata(a, shared), withMetadata(b, other), withMetadata(c, shared)] });
    shared.runId = 'r2';
    (shared.properties as JsonObject).k = 'changed';
    other.runId = 'o2';
    await adapter.commit({ entities: [withMetadata(d, shared), withMetadata(e, other)] });
    const read = await adapter.readEntities([a, b, c, d, e]);
    expect(read.map((entity) => entity.aspects.datasetProperties?.systemMetadata)).toEqual([
      { runId: 'r1', properties: { k: 'v' } },
      { runId: 'o1' },
      { runId: 'r1', properties: { k: 'v' } },
      { runId: 'r2', properties: { k: 'changed' } },
      { runId: 'o2' },
    ]);
  });

  it('reads in the order asked, once per URN, leaving unknown URNs out and limiting aspects', async () => {
    const adapter = await opened();
    const [a, b, c] = [datasetUrn('a'), datasetUrn('b'), datasetUrn('c')];
    await adapter.commit({ entities: [create(a), create(b), { ...create(c), put: [aspect('status', { removed: true })] }] });

    const read = await adapter.readEntities([c, datasetUrn('unknown'), a, c, b, a]);
    expect(read.map((e) => e.urn)).toEqual([c, a, b]);

    const limited = await adapter.readEntities([a, c], ['status']);
    expect(limited.map((e) => [e.urn, Object.keys(e.aspects)])).toEqual([
      [a, []],
      [c, ['status']],
    ]);
    expect(await adapter.readEntities([])).toEqual([]);
  });

  it('keeps an aspect named like an Object.prototype member an ordinary key', async () => {
    const adapter = await opened();
    const urn = datasetUrn('proto');
    await adapter.commit({ entities: [{ urn, entityType: 'dataset', expectVersion: 0, put: [aspect('__proto__', { evil: true })] }] });
    const [entity] = await adapter.readEntities([urn]);
    expect(Object.keys(entity?.aspects ?? {})).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(entity?.aspects)).toBe(Object.prototype);
  });

  it('refuses values JSON cannot hold with INVALID_INPUT and stores nothing of the batch', async () => {
    const adapter = await opened();
    const [a, b] = [datasetUrn('a'), datasetUrn('b')];
    for (const bad of [{ when: new Date(0) }, { n: Number.NaN }, { list: [1, () => 2] }] as unknown as JsonObject[]) {
      expect(await rejectionCode(adapter.commit({ entities: [create(a), create(b, bad)] }))).toBe('INVALID_INPUT');
    }
    expect(await adapter.scanEntities({ limit: 10 })).toEqual([]);
    expect(await rejectionCode(adapter.appendTimeseries(PROFILE, [row(a, 1), row(a, 2, { n: Number.POSITIVE_INFINITY })]))).toBe(
      'INVALID_INPUT',
    );
    expect(await adapter.countTimeseries(PROFILE, 10)).toEqual({ total: 0, matching: 0 });
  });

  it('keeps JSON keys such as __proto__ as ordinary keys and drops undefined properties', async () => {
    const adapter = await opened();
    const urn = datasetUrn('keys');
    const value = JSON.parse('{"__proto__": {"polluted": true}, "nested": [{"__proto__": 1}]}') as JsonObject;
    await adapter.commit({
      entities: [
        { urn, entityType: 'dataset', expectVersion: 0, put: [aspect('custom', { ...value, gone: undefined } as unknown as JsonObject)] },
      ],
    });
    const stored = (await adapter.readEntities([urn]))[0]?.aspects.custom?.value;
    expect(JSON.stringify(stored)).toBe('{"__proto__":{"polluted":true},"nested":[{"__proto__":1}]}');
    expect(Object.getPrototypeOf(stored)).toBe(Object.prototype);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('deletes an entity with its aspects; it can be created again from version 0', async () => {
    const adapter = await opened();
    const urn = datasetUrn('gone');
    await adapter.commit({ entities: [create(urn)] });
    await adapter.commit({ entities: [{ urn, entityType: 'dataset', expectVersion: 1, deleteEntity: true, searchDocument: null }] });
    expect(await adapter.readEntities([urn])).toEqual([]);
    expect(await adapter.scanEntities({ limit: 10 })).toEqual([]);
    await adapter.commit({ entities: [create(urn, { name: 'again' })] });
    const [entity] = await adapter.readEntities([urn]);
    expect(entity?.version).toBe(1);
    expect(entity?.aspects.datasetProperties?.value).toEqual({ name: 'again' });
  });
});

describe('memory adapter: scanEntities', () => {
  it('orders URNs by code units, not by locale', async () => {
    // Code units: 'B' (0x42) < 'a' (0x61); a surrogate pair (0xD83D…) sorts before U+FFFD. localeCompare disagrees on both.
    const urns = ['urn:li:tag:a', 'urn:li:tag:B', 'urn:li:tag:\uFFFD', 'urn:li:tag:\u{1F600}', 'urn:li:tag:_', 'urn:li:tag:Z'];
    const adapter = await opened();
    await adapter.commit({ entities: urns.map((urn) => create(urn, { name: urn }, 'tag')) });
    const scanned = (await adapter.scanEntities({ limit: 100 })).map((e) => e.urn);
    expect(scanned).toEqual(['urn:li:tag:B', 'urn:li:tag:Z', 'urn:li:tag:_', 'urn:li:tag:a', 'urn:li:tag:\u{1F600}', 'urn:li:tag:\uFFFD']);
  });

  it('pages with afterUrn and limit over inserts and deletes in any order', async () => {
    const adapter = await opened();
    const names = Array.from({ length: 600 }, (_, i) => `t${String((i * 7919) % 600).padStart(4, '0')}`);
    for (let start = 0; start < names.length; start += 100) {
      await adapter.commit({ entities: names.slice(start, start + 100).map((name) => create(datasetUrn(name))) });
    }
    // Delete every third one.
    const deleted = new Set(names.filter((_, i) => i % 3 === 0).map(datasetUrn));
    await adapter.commit({
      entities: [...deleted].map((urn) => ({ urn, entityType: 'dataset', expectVersion: 1, deleteEntity: true, searchDocument: null })),
    });

    const expected = names
      .map(datasetUrn)
      .filter((urn) => !deleted.has(urn))
      .sort();
    const seen: string[] = [];
    let afterUrn: string | undefined;
    for (;;) {
      const page = await adapter.scanEntities({ afterUrn, limit: 37 });
      expect(page.length).toBeLessThanOrEqual(37);
      if (page.length === 0) break;
      seen.push(...page.map((e) => e.urn));
      afterUrn = page[page.length - 1]?.urn;
    }
    expect(seen).toEqual(expected);

    // afterUrn need not exist: the page starts at the next URN.
    const between = await adapter.scanEntities({ afterUrn: `${expected[10]}\u0000`, limit: 2 });
    expect(between.map((e) => e.urn)).toEqual([expected[11], expected[12]]);
    expect(await adapter.scanEntities({ limit: 0 })).toEqual([]);
  });

  it('filters by entity type and required aspect, and limits the aspects returned', async () => {
    const adapter = await opened();
    await adapter.commit({
      entities: [
        create(datasetUrn('a')),
        { ...create(datasetUrn('b')), put: [aspect('datasetProperties', { name: 'b' }), aspect('ownership', { owners: [] })] },
        create('urn:li:chart:(looker,c)', { name: 'c' }, 'chart'),
        { urn: 'urn:li:chart:(looker,d)', entityType: 'chart', expectVersion: 0, put: [aspect('ownership', { owners: ['x'] })] },
      ],
    });
    const charts = await adapter.scanEntities({ entityType: 'chart', limit: 10 });
    expect(charts.map((e) => e.urn)).toEqual(['urn:li:chart:(looker,c)', 'urn:li:chart:(looker,d)']);

    const owned = await adapter.scanEntities({ requireAspect: 'ownership', aspectNames: ['ownership'], limit: 10 });
    expect(owned.map((e) => [e.urn, Object.keys(e.aspects)])).toEqual([
      ['urn:li:chart:(looker,d)', ['ownership']],
      [datasetUrn('b'), ['ownership']],
    ]);

    const ownedDatasets = await adapter.scanEntities({ entityType: 'dataset', requireAspect: 'ownership', limit: 10 });
    expect(ownedDatasets.map((e) => [e.urn, Object.keys(e.aspects).sort()])).toEqual([
      [datasetUrn('b'), ['datasetProperties', 'ownership']],
    ]);

    const limited = await adapter.scanEntities({ entityType: 'dataset', limit: 1 });
    expect(limited.map((e) => e.urn)).toEqual([datasetUrn('a')]);
    expect(await adapter.scanEntities({ entityType: 'unknown', limit: 10 })).toEqual([]);
  });
});

describe('memory adapter: commit conflicts', () => {
  it('rejects a stale version with CONFLICT and applies nothing of the batch', async () => {
    const adapter = await opened();
    const [a, b, c] = [datasetUrn('a'), datasetUrn('b'), datasetUrn('c')];
    const property = 'urn:li:structuredProperty:tier';
    await adapter.commit({ entities: [create(a)] });

    const code = await rejectionCode(
      adapter.commit({
        entities: [
          { ...create(b), searchDocument: searchDocument(b, [{ propertyUrn: property, definitionKey: 'k1', values: ['gold'] }]) },
          { urn: a, entityType: 'dataset', expectVersion: 2, put: [aspect('datasetProperties', { name: 'changed' }, 2)] },
        ],
        jobs: [{ type: 'reindex', payload: {} }],
      }),
    );
    expect(code).toBe('CONFLICT');
    expect((await adapter.readEntities([a, b])).map((e) => [e.urn, e.version, e.aspects.datasetProperties?.value])).toEqual([
      [a, 1, { name: a }],
    ]);
    expect(await adapter.countEntitiesWithPropertyValues(property)).toBe(0);
    expect(await adapter.listJobs()).toEqual([]);

    // expectVersion 0 means "must not exist".
    expect(await rejectionCode(adapter.commit({ entities: [create(c), create(a)] }))).toBe('CONFLICT');
    expect(await adapter.readEntities([c])).toEqual([]);
  });

  it('names the URN and both versions in the message', async () => {
    const adapter = await opened();
    const urn = datasetUrn('a');
    await adapter.commit({ entities: [create(urn)] });
    await expect(adapter.commit({ entities: [{ ...create(urn), expectVersion: 3 }] })).rejects.toThrow(
      `${urn}: expected version 3, found 1`,
    );
  });

  it('checks a URN written twice in one batch against its first write', async () => {
    const adapter = await opened();
    const urn = datasetUrn('twice');
    await adapter.commit({
      entities: [create(urn), { urn, entityType: 'dataset', expectVersion: 1, put: [aspect('status', { removed: false })] }],
    });
    const [entity] = await adapter.readEntities([urn]);
    expect(entity?.version).toBe(2);
    expect(Object.keys(entity?.aspects ?? {}).sort()).toEqual(['datasetProperties', 'status']);

    expect(
      await rejectionCode(
        adapter.commit({
          entities: [
            { ...create(urn), expectVersion: 2 },
            { ...create(urn), expectVersion: 2 },
          ],
        }),
      ),
    ).toBe('CONFLICT');
    expect((await adapter.readEntities([urn]))[0]?.version).toBe(2);
  });
});

describe('memory adapter: fault injection', () => {
  it('rolls back entities, search documents, timeseries rows and jobs when the injector throws mid-batch', async () => {
    const steps: Array<{ entityIndex: number; urn: string }> = [];
    let armed = false;
    const adapter = await opened({
      faultInjector: (step) => {
        if (!armed) return;
        steps.push(step);
        if (step.entityIndex === 3) throw new Error('injected fault');
      },
    });
    const property = 'urn:li:structuredProperty:tier';
    const [kept, updated, deleted, added, never] = datasetUrns('kept', 'updated', 'deleted', 'added', 'never');
    await adapter.commit({
      entities: [
        { ...create(kept), searchDocument: searchDocument(kept, [{ propertyUrn: property, definitionKey: 'k1', values: ['gold'] }]) },
        {
          ...create(updated),
          searchDocument: searchDocument(updated, [{ propertyUrn: property, definitionKey: 'k1', values: ['silver'] }]),
        },
        {
          ...create(deleted),
          searchDocument: searchDocument(deleted, [{ propertyUrn: property, definitionKey: 'k1', values: ['bronze'] }]),
        },
      ],
      jobs: [{ type: 'cleanup', payload: { n: 1 }, runAt: 0, dedupeKey: 'cleanup' }],
    });
    await adapter.appendTimeseries(PROFILE, [row(deleted, 10), row(kept, 11)]);
    const [claimed] = await adapter.claimJobs({ workerId: 'w1', now: 1, leaseMs: 1_000, limit: 1 });

    const before = {
      entities: await adapter.scanEntities({ limit: 100 }),
      found: await adapter.findEntitiesWithPropertyValues({ propertyUrn: property, limit: 100 }),
      jobs: await adapter.listJobs({ includeDead: true }),
      rows: await allRows(adapter, PROFILE),
      sizes: await adapter.timeseriesIndexSizes(),
    };

    armed = true;
    await expect(
      adapter.commit({
        entities: [
          {
            urn: updated,
            entityType: 'dataset',
            expectVersion: 1,
            put: [aspect('datasetProperties', { name: 'changed' }, 2)],
            delete: ['datasetProperties'],
            searchDocument: null,
          },
          { urn: deleted, entityType: 'dataset', expectVersion: 1, deleteEntity: true, searchDocument: null },
          { ...create(added), searchDocument: searchDocument(added, [{ propertyUrn: property, definitionKey: 'k2', values: ['gold'] }]) },
          {
            urn: kept,
            entityType: 'dataset',
            expectVersion: 1,
            put: [aspect('ownership', { owners: [] })],
            searchDocument: searchDocument(kept),
          },
          create(never),
        ],
        jobs: [
          { type: 'cleanup', payload: { n: 2 }, dedupeKey: 'cleanup' },
          { type: 'other', payload: {} },
        ],
        completeJobs: [{ id: claimed?.id ?? '', workerId: 'w1' }],
      }),
    ).rejects.toThrow('injected fault');

    expect(steps).toEqual([
      { entityIndex: 0, urn: updated },
      { entityIndex: 1, urn: deleted },
      { entityIndex: 2, urn: added },
      { entityIndex: 3, urn: kept },
    ]);
    expect(await adapter.scanEntities({ limit: 100 })).toEqual(before.entities);
    expect(await adapter.findEntitiesWithPropertyValues({ propertyUrn: property, limit: 100 })).toEqual(before.found);
    expect(await adapter.countEntitiesWithPropertyValues(property, 'k2')).toBe(0);
    expect(await adapter.countEntitiesWithPropertyValues(property)).toBe(3);
    expect(await adapter.listJobs({ includeDead: true })).toEqual(before.jobs);
    expect(await allRows(adapter, PROFILE)).toEqual(before.rows);
    expect(await adapter.timeseriesIndexSizes()).toEqual(before.sizes);

    // The store still works as before: the same batch without the fault goes through.
    armed = false;
    await adapter.commit({
      entities: [{ urn: deleted, entityType: 'dataset', expectVersion: 1, deleteEntity: true, searchDocument: null }],
      jobs: [{ type: 'other', payload: {} }],
    });
    expect((await adapter.scanEntities({ limit: 100 })).map((e) => e.urn)).toEqual([kept, updated]);
    const jobs = await adapter.listJobs();
    expect(jobs.map((j) => j.type)).toEqual(['cleanup', 'other']);
    expect(Number(jobs[1]?.id)).toBeGreaterThan(Number(jobs[0]?.id));
  });
  it('rolls back completed and inserted jobs when applying a later job fails', async () => {
    const adapter = await opened({ now: () => 0 });
    await adapter.commit({ jobs: [{ type: 'work', payload: {}, dedupeKey: 'work' }] });
    const [claimed] = await adapter.claimJobs({ workerId: 'w1', now: 0, leaseMs: 100, limit: 1 });
    const before = await adapter.listJobs({ includeDead: true });
    // A payload that cannot be copied fails the batch after the completion and the first insertion were applied.
    const uncopyable = { run: () => undefined } as unknown as JsonObject;
    await expect(
      adapter.commit({
        entities: [create(datasetUrn('a'))],
        completeJobs: [{ id: claimed?.id ?? '', workerId: 'w1' }],
        jobs: [
          { type: 'work', payload: { next: true }, dedupeKey: 'work' },
          { type: 'bad', payload: uncopyable },
        ],
      }),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect(await adapter.readEntities([datasetUrn('a')])).toEqual([]);
    expect(await adapter.listJobs({ includeDead: true })).toEqual(before);
    // The dedupe key still belongs to the claimed job.
    await adapter.commit({ jobs: [{ type: 'work', payload: { again: true }, dedupeKey: 'work' }] });
    expect(await adapter.listJobs()).toEqual(before);
  });
});

describe('memory adapter: deleteEntity', () => {
  it('removes the search document and the timeseries rows in every index of its entity type', async () => {
    const adapter = await opened();
    const property = 'urn:li:structuredProperty:tier';
    const [a, b] = [datasetUrn('a'), datasetUrn('b')];
    const chart = 'urn:li:chart:(looker,a)';
    await adapter.commit({
      entities: [
        { ...create(a), searchDocument: searchDocument(a, [{ propertyUrn: property, definitionKey: 'k1', values: ['gold'] }]) },
        { ...create(b), searchDocument: searchDocument(b, [{ propertyUrn: property, definitionKey: 'k1', values: ['gold'] }]) },
      ],
    });
    await adapter.appendTimeseries(PROFILE, [row(a, 1), row(b, 2), row(a, 3)]);
    await adapter.appendTimeseries(USAGE, [row(a, 5), row(b, 6)]);
    await adapter.appendTimeseries(CHART_USAGE, [row(chart, 7)]);

    await adapter.commit({ entities: [{ urn: a, entityType: 'dataset', expectVersion: 1, deleteEntity: true, searchDocument: null }] });

    expect(await adapter.readEntities([a])).toEqual([]);
    expect(await adapter.findEntitiesWithPropertyValues({ propertyUrn: property, limit: 10 })).toEqual([b]);
    expect(await adapter.countEntitiesWithPropertyValues(property)).toBe(1);
    expect((await allRows(adapter, PROFILE)).map((r) => r.urn)).toEqual([b]);
    expect((await allRows(adapter, USAGE)).map((r) => r.urn)).toEqual([b]);
    expect((await allRows(adapter, CHART_USAGE)).map((r) => r.urn)).toEqual([chart]);
    const sizes = await adapter.timeseriesIndexSizes();
    expect(sizes.map((s) => [s.indexName, s.rows])).toEqual([
      [CHART_USAGE.indexName, 1],
      [PROFILE.indexName, 1],
      [USAGE.indexName, 1],
    ]);
  });
});

describe('memory adapter: search documents and property values', () => {
  const P = 'urn:li:structuredProperty:tier';
  const Q = 'urn:li:structuredProperty:owner';

  it('indexes, replaces, leaves and removes documents as the write says', async () => {
    const adapter = await opened();
    const [a, b, c, d] = datasetUrns('a', 'b', 'c', 'd');
    await adapter.commit({
      entities: [
        { ...create(a), searchDocument: searchDocument(a, [{ propertyUrn: P, definitionKey: 'v1', values: ['gold'] }]) },
        {
          ...create(b),
          searchDocument: searchDocument(
            b,
            [
              { propertyUrn: P, definitionKey: 'v2', values: [1, 2] },
              { propertyUrn: Q, definitionKey: 'q1', values: ['x'] },
            ],
            true,
          ),
        },
        {
          ...create(c),
          searchDocument: searchDocument(c, [
            { propertyUrn: P, definitionKey: 'v1', values: ['silver'] },
            { propertyUrn: P, definitionKey: 'v2', values: [3] },
          ]),
        },
        // No values: carries nothing.
        { ...create(d), searchDocument: searchDocument(d, [{ propertyUrn: P, definitionKey: 'v1', values: [] }]) },
      ],
    });
    expect(await adapter.countEntitiesWithPropertyValues(P)).toBe(3);
    expect(await adapter.countEntitiesWithPropertyValues(P, 'v1')).toBe(2);
    expect(await adapter.countEntitiesWithPropertyValues(P, 'v2')).toBe(2);
    expect(await adapter.countEntitiesWithPropertyValues(P, 'v3')).toBe(0);
    expect(await adapter.countEntitiesWithPropertyValues('urn:li:structuredProperty:none')).toBe(0);
    // Removed (soft-deleted) entities are included.
    expect(await adapter.findEntitiesWithPropertyValues({ propertyUrn: P, limit: 10 })).toEqual([a, b, c]);
    expect(await adapter.findEntitiesWithPropertyValues({ propertyUrn: P, keepDefinitionKey: 'v2', limit: 10 })).toEqual([a, c]);
    expect(await adapter.findEntitiesWithPropertyValues({ propertyUrn: P, keepDefinitionKey: 'v1', limit: 10 })).toEqual([b, c]);
    expect(await adapter.findEntitiesWithPropertyValues({ propertyUrn: P, afterUrn: a, limit: 1 })).toEqual([b]);
    expect(await adapter.findEntitiesWithPropertyValues({ propertyUrn: P, afterUrn: b, limit: 10 })).toEqual([c]);

    // searchDocument undefined leaves the document; an object replaces it; null removes it.
    await adapter.commit({
      entities: [
        { urn: a, entityType: 'dataset', expectVersion: 1, put: [aspect('status', { removed: false })] },
        {
          urn: b,
          entityType: 'dataset',
          expectVersion: 1,
          put: [aspect('status', { removed: false })],
          searchDocument: searchDocument(b, [{ propertyUrn: Q, definitionKey: 'q1', values: ['y'] }]),
        },
        { urn: c, entityType: 'dataset', expectVersion: 1, put: [aspect('status', { removed: false })], searchDocument: null },
      ],
    });
    expect(await adapter.findEntitiesWithPropertyValues({ propertyUrn: P, limit: 10 })).toEqual([a]);
    expect(await adapter.countEntitiesWithPropertyValues(P, 'v2')).toBe(0);
    expect(await adapter.countEntitiesWithPropertyValues(Q)).toBe(1);
    // The entities themselves stay.
    expect((await adapter.readEntities([a, b, c])).map((e) => e.version)).toEqual([2, 2, 2]);
  });

  it('pages through many entities in URN order', async () => {
    const adapter = await opened();
    const urns = Array.from({ length: 250 }, (_, i) => datasetUrn(`n${(i * 101) % 250}`));
    await adapter.commit({
      entities: urns.map((urn, i) => ({
        ...create(urn),
        searchDocument: searchDocument(urn, [{ propertyUrn: P, definitionKey: i % 2 ? 'old' : 'new', values: [i] }]),
      })),
    });
    const found: string[] = [];
    let afterUrn: string | undefined;
    for (;;) {
      const page = await adapter.findEntitiesWithPropertyValues({ propertyUrn: P, keepDefinitionKey: 'new', afterUrn, limit: 20 });
      if (page.length === 0) break;
      found.push(...page);
      afterUrn = page[page.length - 1];
    }
    expect(found).toEqual(urns.filter((_, i) => i % 2).sort());
  });

  it('searches its own copy: changing a committed document or a returned hit afterwards changes nothing', async () => {
    const adapter = await opened();
    const a = datasetUrn('a');
    const document = searchDocument(a, [{ propertyUrn: P, definitionKey: 'v1', values: ['gold'] }]);
    document.text.name = 'revenue';
    await adapter.commit({ entities: [{ ...create(a), searchDocument: document }] });
    document.properties[0]!.values[0] = 'silver';
    document.text.name = 'costs';
    document.removed = true;
    const gold = { kind: 'property', propertyUrn: P, definitionKey: 'v1', valueKind: 'string' } as const;
    const scope = { entityTypes: [] as string[], includeRemoved: false };
    const found = await adapter.search({
      ...scope,
      filter: [[{ field: gold, operator: 'EQUAL', values: ['gold'], negated: false }]],
      text: 'revenue',
      order: 'urn',
      limit: 10,
    });
    expect(found.hits.map((h) => h.urn)).toEqual([a]);
    found.hits[0]!.urn = 'changed';
    const [facet] = await adapter.aggregate({ ...scope, filter: [], facets: [gold], maxValues: 10 });
    expect(facet!.buckets).toEqual([{ value: 'gold', count: 1 }]);
    expect((await adapter.search({ ...scope, filter: [], order: 'urn', limit: 10 })).hits.map((h) => h.urn)).toEqual([a]);
  });
});

describe('memory adapter: jobs', () => {
  it('gives increasing string ids, stamps createdAt and the default runAt with its clock', async () => {
    let now = 500;
    const adapter = await opened({ now: () => now });
    await adapter.commit({ jobs: [{ type: 'a', payload: { x: 1 } }] });
    now = 600;
    await adapter.commit({ jobs: [{ type: 'b', payload: {}, runAt: 10_000 }] });
    const jobs = await adapter.listJobs();
    expect(jobs).toEqual([
      {
        id: jobs[0]?.id,
        type: 'a',
        payload: { x: 1 },
        attempts: 0,
        runAt: 500,
        createdAt: 500,
        lockedBy: null,
        lockedUntil: null,
        lastError: null,
        state: 'pending',
      },
      {
        id: jobs[1]?.id,
        type: 'b',
        payload: {},
        attempts: 0,
        runAt: 10_000,
        createdAt: 600,
        lockedBy: null,
        lockedUntil: null,
        lastError: null,
        state: 'pending',
      },
    ]);
    expect(typeof jobs[0]?.id).toBe('string');
    expect(Number(jobs[1]?.id)).toBeGreaterThan(Number(jobs[0]?.id));
    expect(await adapter.listJobs({ limit: 1 })).toHaveLength(1);
  });

  it('claims due jobs oldest runAt first, then by id, honouring runAt unless ignoreRunAt', async () => {
    const adapter = await opened({ now: () => 0 });
    await adapter.commit({
      jobs: [
        { type: 'late', payload: {}, runAt: 300 },
        { type: 'first', payload: {}, runAt: 100 },
        { type: 'second', payload: {}, runAt: 200 },
        { type: 'tie', payload: {}, runAt: 100 },
      ],
    });
    const claimed = await adapter.claimJobs({ workerId: 'w1', now: 250, leaseMs: 1_000, limit: 10 });
    expect(claimed.map((j) => j.type)).toEqual(['first', 'tie', 'second']);
    expect(claimed.every((j) => j.lockedBy === 'w1' && j.lockedUntil === 1_250 && j.attempts === 1)).toBe(true);

    expect(await adapter.claimJobs({ workerId: 'w2', now: 250, leaseMs: 1_000, limit: 10 })).toEqual([]);
    const early = await adapter.claimJobs({ workerId: 'w2', now: 250, leaseMs: 1_000, limit: 10, ignoreRunAt: true });
    expect(early.map((j) => j.type)).toEqual(['late']);
  });

  it('lets another worker claim a job once its lease expired, and only the holder renew, release or complete it', async () => {
    const adapter = await opened({ now: () => 0 });
    await adapter.commit({ jobs: [{ type: 'work', payload: { batch: 1 } }] });
    const [job] = await adapter.claimJobs({ workerId: 'w1', now: 10, leaseMs: 100, limit: 5 });
    expect(job?.attempts).toBe(1);
    const id = job?.id ?? '';

    expect(await adapter.claimJobs({ workerId: 'w2', now: 109, leaseMs: 100, limit: 5 })).toEqual([]);
    expect(await adapter.renewJobLease(id, 'w1', 200)).toBe(true);
    expect(await adapter.claimJobs({ workerId: 'w2', now: 150, leaseMs: 100, limit: 5 })).toEqual([]);
    expect(await adapter.renewJobLease(id, 'w2', 500)).toBe(false);
    expect(await adapter.renewJobLease('999', 'w1', 500)).toBe(false);

    // lockedUntil <= now: expired.
    const [stolen] = await adapter.claimJobs({ workerId: 'w2', now: 200, leaseMs: 100, limit: 5 });
    expect(stolen).toMatchObject({ id, lockedBy: 'w2', lockedUntil: 300, attempts: 2 });

    // The first worker no longer holds it.
    expect(await adapter.renewJobLease(id, 'w1', 1_000)).toBe(false);
    await adapter.releaseJob(id, 'w1', { error: 'late', retryAt: 5 });
    expect((await adapter.listJobs())[0]).toMatchObject({ lockedBy: 'w2', lastError: null, runAt: 0 });
    expect(await rejectionCode(adapter.commit({ completeJobs: [{ id, workerId: 'w1' }] }))).toBe('CONFLICT');
    expect(await adapter.listJobs()).toHaveLength(1);

    await adapter.commit({ completeJobs: [{ id, workerId: 'w2' }] });
    expect(await adapter.listJobs({ includeDead: true })).toEqual([]);
    expect(await rejectionCode(adapter.commit({ completeJobs: [{ id, workerId: 'w2' }] }))).toBe('CONFLICT');
  });

  it('rejects a batch completing a job it does not hold with CONFLICT and applies nothing', async () => {
    const adapter = await opened({ now: () => 0 });
    await adapter.commit({ jobs: [{ type: 'work', payload: {} }] });
    const [job] = await adapter.claimJobs({ workerId: 'w1', now: 0, leaseMs: 100, limit: 1 });
    const urn = datasetUrn('a');
    const code = await rejectionCode(
      adapter.commit({
        entities: [create(urn)],
        jobs: [{ type: 'next', payload: {} }],
        completeJobs: [{ id: job?.id ?? '', workerId: 'intruder' }],
      }),
    );
    expect(code).toBe('CONFLICT');
    expect(await adapter.readEntities([urn])).toEqual([]);
    expect((await adapter.listJobs()).map((j) => [j.type, j.lockedBy])).toEqual([['work', 'w1']]);
  });

  it('releases for a retry, or marks dead when there is no retry', async () => {
    const adapter = await opened({ now: () => 0 });
    await adapter.commit({ jobs: [{ type: 'flaky', payload: {} }] });
    const [job] = await adapter.claimJobs({ workerId: 'w1', now: 10, leaseMs: 100, limit: 1 });
    const id = job?.id ?? '';

    await adapter.releaseJob(id, 'w1', { error: 'boom', retryAt: 1_000 });
    expect((await adapter.listJobs())[0]).toMatchObject({
      id,
      state: 'pending',
      lockedBy: null,
      lockedUntil: null,
      lastError: 'boom',
      runAt: 1_000,
      attempts: 1,
    });
    expect(await adapter.claimJobs({ workerId: 'w1', now: 999, leaseMs: 100, limit: 1 })).toEqual([]);

    const [again] = await adapter.claimJobs({ workerId: 'w1', now: 1_000, leaseMs: 100, limit: 1 });
    expect(again).toMatchObject({ id, attempts: 2, lastError: 'boom' });
    await adapter.releaseJob(id, 'w1', { error: 'gave up', retryAt: null });

    expect(await adapter.listJobs()).toEqual([]);
    const dead = await adapter.listJobs({ includeDead: true });
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({ id, state: 'dead', lockedBy: null, lockedUntil: null, lastError: 'gave up', attempts: 2 });
    expect(await adapter.claimJobs({ workerId: 'w1', now: 1e12, leaseMs: 100, limit: 1, ignoreRunAt: true })).toEqual([]);
    // A dead job is not held by anyone.
    expect(await adapter.renewJobLease(id, 'w1', 2_000)).toBe(false);
    expect(await rejectionCode(adapter.commit({ completeJobs: [{ id, workerId: 'w1' }] }))).toBe('CONFLICT');
  });

  it('skips a new job while a pending job has its dedupe key', async () => {
    const adapter = await opened({ now: () => 0 });
    await adapter.commit({
      jobs: [
        { type: 'cleanup', payload: { n: 1 }, dedupeKey: 'cleanup:p' },
        { type: 'cleanup', payload: { n: 2 }, dedupeKey: 'cleanup:p' },
        { type: 'cleanup', payload: { n: 3 }, dedupeKey: 'cleanup:q' },
        { type: 'plain', payload: {} },
        { type: 'plain', payload: {} },
      ],
    });
    expect((await adapter.listJobs()).map((j) => j.payload)).toEqual([{ n: 1 }, { n: 3 }, {}, {}]);

    // Leased jobs are still pending.
    const [claimed] = await adapter.claimJobs({ workerId: 'w1', now: 0, leaseMs: 100, limit: 1 });
    expect(claimed?.payload).toEqual({ n: 1 });
    await adapter.commit({ jobs: [{ type: 'cleanup', payload: { n: 4 }, dedupeKey: 'cleanup:p' }] });
    expect(await adapter.listJobs()).toHaveLength(4);

    // A job completing itself may queue its follow-up under the same key in the same batch.
    await adapter.commit({
      completeJobs: [{ id: claimed?.id ?? '', workerId: 'w1' }],
      jobs: [{ type: 'cleanup', payload: { n: 5 }, dedupeKey: 'cleanup:p' }],
    });
    expect((await adapter.listJobs()).map((j) => j.payload)).toEqual([{ n: 3 }, {}, {}, { n: 5 }]);

    // A dead job does not block its key.
    const [q] = await adapter.claimJobs({ workerId: 'w1', now: 0, leaseMs: 100, limit: 1 });
    expect(q?.payload).toEqual({ n: 3 });
    await adapter.releaseJob(q?.id ?? '', 'w1', { error: 'no', retryAt: null });
    await adapter.commit({ jobs: [{ type: 'cleanup', payload: { n: 6 }, dedupeKey: 'cleanup:q' }] });
    expect((await adapter.listJobs()).map((j) => j.payload)).toEqual([{}, {}, { n: 5 }, { n: 6 }]);
  });
});

describe('memory adapter: timeseries', () => {
  const [a, b] = [datasetUrn('a'), datasetUrn('b')];

  it('returns rows newest first, ties newest inserted first, filtered by URN and inclusive bounds', async () => {
    const adapter = await opened();
    await adapter.appendTimeseries(PROFILE, [row(a, 300, { n: 1 }), row(a, 100, { n: 2 }), row(b, 200, { n: 3 })]);
    // Out of order and a tie with an existing row.
    await adapter.appendTimeseries(PROFILE, [row(b, 300, { n: 4 }), row(a, 150, { n: 5 })]);

    expect((await allRows(adapter, PROFILE)).map((r) => r.value.n)).toEqual([4, 1, 3, 5, 2]);
    expect((await adapter.queryTimeseries({ ...PROFILE, urn: a, limit: 10 })).rows.map((r) => r.value.n)).toEqual([1, 5, 2]);
    expect(
      (await adapter.queryTimeseries({ ...PROFILE, startTimeMillis: 150, endTimeMillis: 200, limit: 10 })).rows.map((r) => r.value.n),
    ).toEqual([3, 5]);
    expect((await adapter.queryTimeseries({ ...PROFILE, urn: b, endTimeMillis: 299, limit: 10 })).rows).toEqual([
      { urn: b, timestampMillis: 200, value: { n: 3 } },
    ]);
    expect(await adapter.queryTimeseries({ ...USAGE, limit: 10 })).toEqual({ rows: [] });
  });

  it('pages with an opaque cursor, with no cursor after the last page', async () => {
    const adapter = await opened();
    const rows = Array.from({ length: 23 }, (_, i) => row(i % 2 ? a : b, Math.floor(i / 3) * 10, { i }));
    await adapter.appendTimeseries(PROFILE, rows);
    const all = (await allRows(adapter, PROFILE)).map((r) => r.value.i);

    const paged: unknown[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await adapter.queryTimeseries({ ...PROFILE, limit: 5, cursor });
      paged.push(...page.rows.map((r) => r.value.i));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(paged).toEqual(all);
    expect(pages).toBe(5);

    // With filters: only a's rows up to time 50, three at a time.
    const expected = (await adapter.queryTimeseries({ ...PROFILE, urn: a, endTimeMillis: 50, limit: 100 })).rows;
    const filtered: TimeseriesRow[] = [];
    cursor = undefined;
    do {
      const page = await adapter.queryTimeseries({ ...PROFILE, urn: a, endTimeMillis: 50, limit: 3, cursor });
      filtered.push(...page.rows);
      cursor = page.nextCursor;
    } while (cursor);
    expect(filtered).toEqual(expected);

    // An exactly full last page has no cursor.
    const exact = await adapter.queryTimeseries({ ...PROFILE, limit: 23 });
    expect(exact.rows).toHaveLength(23);
    expect(exact.nextCursor).toBeUndefined();
  });

  it('rejects a malformed cursor with INVALID_INPUT', async () => {
    const adapter = await opened();
    await adapter.appendTimeseries(PROFILE, [row(a, 1)]);
    const wrongShape = Buffer.from(JSON.stringify({ t: 'x', s: 1 })).toString('base64url');
    for (const cursor of ['not a cursor', wrongShape, Buffer.from('[]').toString('base64url')]) {
      expect(await rejectionCode(adapter.queryTimeseries({ ...PROFILE, limit: 1, cursor }))).toBe('INVALID_INPUT');
    }
  });

  it('reports one size per index with estimated bytes, and counts', async () => {
    const adapter = await opened();
    expect(await adapter.timeseriesIndexSizes()).toEqual([]);
    const profileRows = [row(a, 10, { rowCount: 5 }), row(b, 20, { name: 'é' }), row(a, 30, { rowCount: 7 })];
    await adapter.appendTimeseries(PROFILE, profileRows);
    await adapter.appendTimeseries(USAGE, []);
    const bytes = profileRows.reduce((sum, r) => sum + Buffer.byteLength(JSON.stringify(r.value)) + Buffer.byteLength(r.urn) + 16, 0);
    expect(await adapter.timeseriesIndexSizes()).toEqual([
      { ...PROFILE, rows: 3, bytes },
      { ...USAGE, rows: 0, bytes: 0 },
    ]);
    expect(await adapter.countTimeseries(PROFILE, 20)).toEqual({ total: 3, matching: 2 });
    expect(await adapter.countTimeseries(PROFILE, 9)).toEqual({ total: 3, matching: 0 });
    expect(await adapter.countTimeseries(CHART_USAGE, 100)).toEqual({ total: 0, matching: 0 });
  });

  it('deletes the oldest rows in batches and rebuilds an index with only the newer rows', async () => {
    const adapter = await opened();
    await adapter.appendTimeseries(PROFILE, [row(a, 40), row(a, 10), row(b, 20), row(b, 10), row(a, 30), row(b, 50)]);

    expect(await adapter.deleteTimeseriesBatch(PROFILE, 30, 2)).toBe(2);
    expect((await allRows(adapter, PROFILE)).map((r) => r.timestampMillis)).toEqual([50, 40, 30, 20]);
    expect(await adapter.deleteTimeseriesBatch(PROFILE, 30, 10)).toBe(2);
    expect(await adapter.deleteTimeseriesBatch(PROFILE, 30, 10)).toBe(0);
    expect((await allRows(adapter, PROFILE)).map((r) => r.timestampMillis)).toEqual([50, 40]);

    expect(await adapter.rebuildTimeseriesIndex(PROFILE, 45)).toBe(1);
    expect(await allRows(adapter, PROFILE)).toEqual([row(b, 50)]);
    const [size] = await adapter.timeseriesIndexSizes();
    expect(size).toMatchObject({
      indexName: PROFILE.indexName,
      rows: 1,
      bytes: Buffer.byteLength(JSON.stringify({ timestampMillis: 50 })) + Buffer.byteLength(b) + 16,
    });
    expect(await adapter.rebuildTimeseriesIndex(PROFILE, 0)).toBe(0);
    expect(await adapter.rebuildTimeseriesIndex(USAGE, 100)).toBe(0);
    expect(await adapter.deleteTimeseriesBatch(USAGE, 100, 10)).toBe(0);
  });
});

describe('memory adapter: stored state cannot be changed from outside', () => {
  it('copies entities, search documents, jobs and timeseries values going in and coming out', async () => {
    const adapter = await opened({ now: () => 0 });
    const urn = datasetUrn('a');
    const property = 'urn:li:structuredProperty:tier';
    const value: JsonObject = { name: 'original', tags: ['x'] };
    const systemMetadata: JsonObject = { runId: 'r1' };
    const put = aspect('datasetProperties', value, 1, systemMetadata);
    const document = searchDocument(urn, [{ propertyUrn: property, definitionKey: 'k1', values: ['gold'] }]);
    const payload: JsonObject = { list: [1] };
    const tsValue: JsonObject = { nested: { count: 1 } };
    await adapter.commit({
      entities: [{ urn, entityType: 'dataset', expectVersion: 0, put: [put], searchDocument: document }],
      jobs: [{ type: 'j', payload }],
    });
    await adapter.appendTimeseries(PROFILE, [{ urn, timestampMillis: 1, value: tsValue }]);

    // Mutate what went in.
    value.name = 'mutated';
    (value.tags as string[]).push('y');
    systemMetadata.runId = 'r2';
    put.created.actor = 'someone else';
    const [property0] = document.properties;
    if (property0) property0.definitionKey = 'k2';
    document.properties.push({ propertyUrn: 'urn:li:structuredProperty:other', definitionKey: 'k', values: ['v'] });
    (payload.list as number[]).push(2);
    (tsValue.nested as JsonObject).count = 2;

    // Mutate what came out.
    const [read] = await adapter.readEntities([urn]);
    const readAspect = read?.aspects.datasetProperties;
    if (readAspect) {
      readAspect.value.name = 'mutated';
      readAspect.created.time = -1;
    }
    if (read) delete read.aspects.datasetProperties;
    const [scanned] = await adapter.scanEntities({ limit: 1 });
    if (scanned) scanned.version = 99;
    const [listed] = await adapter.listJobs();
    if (listed) {
      listed.payload.list = [];
      listed.lockedBy = 'thief';
    }
    const [claimed] = await adapter.claimJobs({ workerId: 'w1', now: 0, leaseMs: 100, limit: 1 });
    if (claimed) claimed.lockedBy = 'thief';
    const [tsRow] = (await adapter.queryTimeseries({ ...PROFILE, limit: 1 })).rows;
    if (tsRow) (tsRow.value.nested as JsonObject).count = 3;

    const [stored] = await adapter.readEntities([urn]);
    expect(stored?.version).toBe(1);
    expect(stored?.aspects.datasetProperties).toEqual({
      name: 'datasetProperties',
      value: { name: 'original', tags: ['x'] },
      version: 1,
      created: { time: 1_000, actor: ACTOR },
      lastModified: { time: 2_001, actor: ACTOR },
      systemMetadata: { runId: 'r1' },
    });
    expect(await adapter.countEntitiesWithPropertyValues(property, 'k1')).toBe(1);
    expect(await adapter.countEntitiesWithPropertyValues(property, 'k2')).toBe(0);
    expect(await adapter.countEntitiesWithPropertyValues('urn:li:structuredProperty:other')).toBe(0);
    expect((await adapter.listJobs())[0]).toMatchObject({ payload: { list: [1] }, lockedBy: 'w1' });
    expect(await adapter.renewJobLease(claimed?.id ?? '', 'w1', 500)).toBe(true);
    expect((await allRows(adapter, PROFILE))[0]?.value).toEqual({ nested: { count: 1 } });
  });
});

describe('memory adapter: texts reused within a commit and across a bulk load', () => {
  it('an event carrying the very value object a write stored reads back as that value, and refuses what JSON cannot hold', async () => {
    const adapter = await opened();
    const urn = datasetUrn('shared');
    const value: JsonObject = { name: 'n', nested: { list: [1, 'x', null, true] } };
    const newEvent = (aspectValue: JsonObject) => ({
      entityUrn: urn,
      entityType: 'dataset',
      aspectName: 'datasetProperties',
      changeType: 'UPSERT' as const,
      aspect: aspectValue,
      previousAspectValue: null,
      created: { time: 5, actor: ACTOR },
      systemMetadata: { runId: 'r' },
    });
    await adapter.commit({
      entities: [{ urn, entityType: 'dataset', expectVersion: 0, put: [aspect('datasetProperties', value)] }],
      events: [newEvent(value)],
    });
    value.name = 'mutated';
    const page = await adapter.readChanges!({ limit: 10 });
    expect(page.events).toEqual([{ id: '1', ...newEvent({ name: 'n', nested: { list: [1, 'x', null, true] } }) }]);
    const bad = { when: new Date(0) } as unknown as JsonObject;
    const error = await adapter
      .commit({ entities: [create(datasetUrn('other'))], events: [{ ...newEvent(value), previousAspectValue: bad }] })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('/previousAspectValue') });
    expect((await adapter.readChanges!({ limit: 10 })).events).toHaveLength(1);
    expect(await adapter.readEntities([datasetUrn('other')])).toEqual([]);
  });

  it('stores the system metadata of each entity when a bulk repeats some, also after the caller changes the objects it gave', async () => {
    const adapter = await opened();
    const metadata = (i: number): JsonObject => ({
      keys: { a: 'k1', b: 'k2' },
      stamps: [{ time: 1, actor: ACTOR }],
      extra: i % 3 === 0 ? i : 'same',
    });
    const given = Array.from({ length: 30 }, (_, i) => metadata(i));
    await adapter.commit({
      entities: given.map((systemMetadata, i) => ({
        urn: datasetUrn(`m${i}`),
        entityType: 'dataset',
        expectVersion: 0,
        put: [aspect('structuredProperties', { i }, 1, systemMetadata)],
      })),
    });
    // The same objects, changed, written again: nothing remembered may stand for what they hold now.
    for (const object of given) (object.keys as JsonObject).a = 'changed';
    given[5]!.stamps = [{ time: 2, actor: ACTOR, more: [null] }];
    await adapter.commit({
      entities: given.map((systemMetadata, i) => ({
        urn: datasetUrn(`m${i}`),
        entityType: 'dataset',
        expectVersion: 1,
        put: [aspect('structuredProperties', { i }, 2, systemMetadata)],
      })),
    });
    const read = await adapter.readEntities(given.map((_, i) => datasetUrn(`m${i}`)));
    expect(read.map((entity) => entity.aspects.structuredProperties?.systemMetadata)).toEqual(
      given.map((_, i) => ({
        ...metadata(i),
        keys: { a: 'changed', b: 'k2' },
        ...(i === 5 ? { stamps: [{ time: 2, actor: ACTOR, more: [null] }] } : {}),
      })),
    );
  });
});

describe('memory adapter: entities with values of a structured property (the clean-up questions)', () => {
  it('pages URNs in order over every key but the kept one, soft-deleted included, and counts per key and over all keys', async () => {
    const adapter = await opened();
    const property = 'urn:li:structuredProperty:tier';
    const other = 'urn:li:structuredProperty:owner';
    const urns = Array.from({ length: 30 }, (_, i) => datasetUrn(`p${String((i * 7) % 30).padStart(2, '0')}`));
    // Written in a scrambled order; keys k1 (even), k2 (multiples of 3), both for multiples of 6; soft-deleted every 5th.
    await adapter.commit({
      entities: urns.map((urn, i) => ({
        ...create(urn),
        searchDocument: searchDocument(
          urn,
          [
            ...(i % 2 === 0 ? [{ propertyUrn: property, definitionKey: 'k1', values: ['gold'] }] : []),
            ...(i % 3 === 0 ? [{ propertyUrn: property, definitionKey: 'k2', values: [i] }] : []),
            { propertyUrn: other, definitionKey: 'o1', values: ['team'] },
            { propertyUrn: property, definitionKey: 'k3', values: [] },
          ],
          i % 5 === 0,
        ),
      })),
    });
    const carrying = (keys: string[]) =>
      urns.filter((_, i) => (keys.includes('k1') && i % 2 === 0) || (keys.includes('k2') && i % 3 === 0)).sort();
    expect(await adapter.countEntitiesWithPropertyValues(property, 'k1')).toBe(15);
    expect(await adapter.countEntitiesWithPropertyValues(property, 'k2')).toBe(10);
    expect(await adapter.countEntitiesWithPropertyValues(property, 'k3')).toBe(0);
    expect(await adapter.countEntitiesWithPropertyValues(property)).toBe(carrying(['k1', 'k2']).length);
    expect(await adapter.countEntitiesWithPropertyValues('urn:li:structuredProperty:none')).toBe(0);

    const pages = async (keep: string | undefined) => {
      const out: string[] = [];
      let afterUrn: string | undefined;
      for (;;) {
        const page = await adapter.findEntitiesWithPropertyValues({
          propertyUrn: property,
          ...(keep ? { keepDefinitionKey: keep } : {}),
          ...(afterUrn ? { afterUrn } : {}),
          limit: 4,
        });
        out.push(...page);
        if (page.length < 4) return out;
        afterUrn = page[page.length - 1];
      }
    };
    expect(await pages(undefined)).toEqual(carrying(['k1', 'k2']));
    expect(await pages('k1')).toEqual(carrying(['k2']));
    expect(await pages('k2')).toEqual(carrying(['k1']));
    // A cursor that is no stored URN starts after it all the same.
    expect(await adapter.findEntitiesWithPropertyValues({ propertyUrn: property, afterUrn: datasetUrn('p10x'), limit: 100 })).toEqual(
      carrying(['k1', 'k2']).filter((u) => u > datasetUrn('p10x')),
    );
    expect(await adapter.findEntitiesWithPropertyValues({ propertyUrn: property, limit: 0 })).toEqual([]);

    // Values moved off k1 (a clean-up), then an entity deleted: the answers follow.
    const k1Only = urns.filter((_, i) => i % 2 === 0 && i % 3 !== 0);
    await adapter.commit({
      entities: k1Only.map((urn) => ({
        urn,
        entityType: 'dataset',
        expectVersion: 1,
        put: [aspect('status', { removed: false })],
        searchDocument: searchDocument(urn),
      })),
    });
    await adapter.commit({
      entities: [{ urn: urns[0]!, entityType: 'dataset', expectVersion: 1, deleteEntity: true, searchDocument: null }],
    });
    const left = urns.filter((_, i) => i % 3 === 0 && i !== 0).sort();
    expect(await pages(undefined)).toEqual(left);
    expect(await adapter.countEntitiesWithPropertyValues(property, 'k1')).toBe(urns.filter((_, i) => i % 6 === 0 && i !== 0).length);
    expect(await adapter.countEntitiesWithPropertyValues(property)).toBe(left.length);
    expect(await adapter.countEntitiesWithPropertyValues(other)).toBe(urns.length - k1Only.length - 1); // their new documents name no property
  });
});

describe('memory adapter: the bounded change feed', () => {
  const event = (urn: string, i: number) => ({
    entityUrn: urn,
    entityType: 'dataset',
    aspectName: i % 2 === 0 ? 'datasetProperties' : 'status',
    changeType: 'UPSERT' as const,
    aspect: { n: i, nested: { list: [i, 'x', null, true] } },
    previousAspectValue: null,
    created: { time: 10_000 + i, actor: ACTOR },
  });

  it('keeps the newest maxChangeEvents events, in order, whatever the commits and prunes before', async () => {
    const adapter = await opened({ maxChangeEvents: 1_500 });
    const urn = datasetUrn('feed');
    let version = 0;
    // One event a commit, then batches: the oldest go first, across the list's compactions.
    for (let i = 1; i <= 4_000;) {
      const count = i <= 2_000 ? 1 : 250;
      await adapter.commit({
        entities: [{ urn, entityType: 'dataset', expectVersion: version, put: [aspect('datasetProperties', { n: i }, version + 1)] }],
        events: Array.from({ length: count }, (_, k) => event(urn, i + k)),
      });
      version += 1;
      i += count;
    }
    const all: number[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await adapter.readChanges!({ limit: 400, ...(after ? { after } : {}) });
      all.push(...page.events.map((e) => Number(e.id)));
      if (page.events.length < 400) {
        expect(page.oldestId).toBe('2501');
        expect(page.lastId).toBe('4000');
        break;
      }
      after = page.events[page.events.length - 1]!.id;
    }
    expect(all).toEqual(Array.from({ length: 1_500 }, (_, k) => 2_501 + k));
    const [first] = (await adapter.readChanges!({ limit: 1 })).events;
    expect(first).toEqual({ id: '2501', ...event(urn, 2_501) });
    // Filters and a prune by time still see only what is kept.
    expect(
      (await adapter.readChanges!({ limit: 5_000, aspects: ['status'] })).events.every(
        (e) => e.aspectName === 'status' && Number(e.id) > 2_500,
      ),
    ).toBe(true);
    expect(await adapter.pruneChanges!({ eventsBefore: 10_000 + 3_001, limit: 10_000 })).toEqual({ events: 500, versions: 0 });
    expect((await adapter.readChanges!({ limit: 1 })).events[0]?.id).toBe('3001');
  });
});
