import { describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../adapters/memory/index';
import { composeAdapter, type AdapterParts } from '../../src/adapter/compose-adapter';
import { createScanSearchIndex } from '../../src/adapter/scan-search-index';
import { SEARCH_DOCUMENT_ASPECT } from '../../src/adapter/store-records';
import type { AspectPut, EntityStore, NewChangeEvent, SearchDocument } from '../../src/adapter/types';
import { isCatalogError } from '../../src/errors';

const T0 = 1_700_000_000_000;
const A = 'urn:li:dataset:(urn:li:dataPlatform:hive,a,PROD)';
const B = 'urn:li:dataset:(urn:li:dataPlatform:hive,b,PROD)';

const aspect = (name: string, value: AspectPut['value']): AspectPut => ({
  name,
  value,
  version: 1,
  created: { time: T0, actor: 'urn:li:corpuser:x' },
  lastModified: { time: T0, actor: 'urn:li:corpuser:x' },
});
const document = (urn: string, name: string): SearchDocument => ({
  urn,
  entityType: 'dataset',
  removed: false,
  text: { name, urnKey: urn },
  fields: {},
  properties: [],
});
const event = (urn: string, aspectName: string): NewChangeEvent => ({
  entityUrn: urn,
  entityType: 'dataset',
  aspectName,
  changeType: 'UPSERT',
  aspect: { aspectName },
  previousAspectValue: null,
  created: { time: T0, actor: 'urn:li:corpuser:x' },
});

/** The refusal of composeAdapter(parts): its code and the paths it names. */
function refusal(parts: unknown): { code: string; paths: string[]; message: string } {
  try {
    composeAdapter(parts as AdapterParts);
  } catch (error) {
    if (!isCatalogError(error)) throw error;
    return { code: error.code, paths: error.details.map((d) => d.path), message: error.message };
  }
  return { code: 'accepted', paths: [], message: '' };
}

describe('composeAdapter refuses parts that are missing or not what they say, naming the part', () => {
  const store = (): EntityStore => createMemoryAdapter();

  it.each([
    ['no parts at all', undefined, '/parts'],
    ['no entity store', {}, '/entities'],
    ['an unknown part', { entities: store(), index: {} }, '/index'],
    ['an entity store without commit', { entities: { ...store(), commit: undefined } }, '/entities/commit'],
    ['an entity store that is not an object', { entities: 'sqlite' }, '/entities'],
    ['an entity store without a name', { entities: { ...store(), name: '' } }, '/entities/name'],
    [
      'a capability that is not a boolean',
      { entities: { ...store(), capabilities: { durable: 'yes', changeToken: false } } },
      '/entities/capabilities/durable',
    ],
    [
      'a change token declared but missing',
      { entities: { ...store(), capabilities: { durable: false, changeToken: true }, changeToken: undefined } },
      '/entities/changeToken',
    ],
    [
      'a search index without aggregate',
      { entities: store(), search: { ...createScanSearchIndex(store()), aggregate: 1 } },
      '/search/aggregate',
    ],
    ['a job queue that the store does not serve', { entities: store(), jobs: createMemoryAdapter() }, '/jobs'],
    ['a change log that the store does not serve', { entities: store(), changes: createMemoryAdapter() }, '/changes'],
    ['a timeseries store that the store does not serve', { entities: store(), timeseries: createMemoryAdapter() }, '/timeseries'],
  ])('%s', (_name, parts, path) => {
    const outcome = refusal(parts);
    expect([outcome.code, outcome.paths]).toEqual(['INVALID_INPUT', [path]]);
    expect(outcome.message).toContain(`composeAdapter: ${path.slice(1).replace(/\//g, '.')}`);
  });

  it('accepts an entity store alone, and a whole adapter as every part', () => {
    const memory = createMemoryAdapter();
    expect(refusal({ entities: store() }).code).toBe('accepted');
    expect(refusal({ entities: memory, search: memory, jobs: memory, timeseries: memory, changes: memory }).code).toBe('accepted');
  });
});

describe('composeAdapter over an entity store alone', () => {
  it('keeps search documents, jobs and events as records in the store, written by its commit, and never shows them', async () => {
    const store = createMemoryAdapter();
    const adapter = composeAdapter({ entities: store });
    await adapter.open();
    expect(adapter.capabilities).toEqual({ durable: false, changeToken: true, changeFeed: true, timeseriesInCommit: true });
    await adapter.commit({
      entities: [
        { urn: A, entityType: 'dataset', expectVersion: 0, put: [aspect('info', { name: 'a' })], searchDocument: document(A, 'orders') },
      ],
      jobs: [{ type: 'reindex', payload: {} }],
      events: [event(A, 'info')],
      now: T0,
    });
    // The store holds the records; the store's own job queue and change feed saw nothing.
    const raw = await store.scanEntities({ limit: 100 });
    expect(raw.map((e) => e.entityType).sort()).toEqual(['dataset', 'metacatalog.change', 'metacatalog.changes', 'metacatalog.jobs']);
    expect(Object.keys(raw.find((e) => e.urn === A)!.aspects).sort()).toEqual(['info', SEARCH_DOCUMENT_ASPECT]);
    expect(await store.listJobs()).toEqual([]);
    expect((await store.readChanges!({ limit: 10 })).events).toEqual([]);
    // The composed adapter answers from them and shows the domain's entities only.
    expect((await adapter.scanEntities({ limit: 100 })).map((e) => [e.urn, Object.keys(e.aspects)])).toEqual([[A, ['info']]]);
    expect(Object.keys((await adapter.readEntities([A]))[0]!.aspects)).toEqual(['info']);
    expect((await adapter.listJobs()).map((j) => [j.type, j.createdAt])).toEqual([['reindex', T0]]);
    expect((await adapter.readChanges!({ limit: 10 })).events.map((e) => [e.id, e.aspectName])).toEqual([['1', 'info']]);
    expect(
      (await adapter.search({ entityTypes: [], text: 'orders', filter: [], includeRemoved: false, order: 'urn', limit: 10 })).hits.map(
        (h) => h.urn,
      ),
    ).toEqual([A]);
    await adapter.close();
  });

  it("two composed adapters over one store both commit: a CONFLICT on the composer's own records is read again, not the domain's", async () => {
    const store = createMemoryAdapter();
    const first = composeAdapter({ entities: store });
    const second = composeAdapter({ entities: store });
    await first.open();
    await Promise.all(
      [first, second].map((adapter, i) =>
        adapter.commit({
          entities: [{ urn: i ? B : A, entityType: 'dataset', expectVersion: 0, put: [aspect('info', { i })] }],
          events: [event(i ? B : A, 'info'), event(i ? B : A, 'status')],
        }),
      ),
    );
    const { events } = await first.readChanges!({ limit: 10 });
    expect(events.map((e) => e.id)).toEqual(['1', '2', '3', '4']);
    // A commit's events are one block.
    expect(events[0]!.entityUrn).toBe(events[1]!.entityUrn);
    // A domain entity whose version moved is the caller's CONFLICT, and nothing of the batch is written.
    const stale = second.commit({
      entities: [{ urn: A, entityType: 'dataset', expectVersion: 0, put: [aspect('info', {})] }],
      events: [event(A, 'x')],
    });
    await expect(stale).rejects.toMatchObject({ code: 'CONFLICT' });
    expect((await first.readChanges!({ limit: 10 })).events).toHaveLength(4);
  });

  it('refuses a batch member it does not know, writing nothing, rather than dropping it', async () => {
    const store = createMemoryAdapter();
    const adapter = composeAdapter({ entities: store });
    await adapter.open();
    const batch = { entities: [{ urn: A, entityType: 'dataset', expectVersion: 0, put: [aspect('info', {})] }], rows: [{ urn: A }] };
    await expect(adapter.commit(batch)).rejects.toThrow('WriteBatch.rows is not handled by the composer');
    expect(await store.scanEntities({ limit: 10 })).toEqual([]);
  });

  it('passes each part the store serves itself straight through to it', async () => {
    const memory = createMemoryAdapter();
    const adapter = composeAdapter({ entities: memory, search: memory, jobs: memory, timeseries: memory, changes: memory });
    await adapter.open();
    await adapter.commit({
      entities: [{ urn: A, entityType: 'dataset', expectVersion: 0, put: [aspect('info', {})], searchDocument: document(A, 'orders') }],
      jobs: [{ type: 'native', payload: {} }],
      events: [event(A, 'info')],
    });
    expect((await memory.scanEntities({ limit: 10 })).map((e) => [e.urn, Object.keys(e.aspects)])).toEqual([[A, ['info']]]);
    expect((await memory.listJobs()).map((j) => j.type)).toEqual(['native']);
    expect((await memory.readChanges!({ limit: 10 })).events).toHaveLength(1);
    expect(adapter.capabilities).toEqual(memory.capabilities);
  });
});

describe('createScanSearchIndex', () => {
  async function storeWith(documents: SearchDocument[]): Promise<EntityStore> {
    const store = createMemoryAdapter();
    await store.open();
    await composeAdapter({ entities: store }).commit({
      entities: documents.map((d) => ({
        urn: d.urn,
        entityType: d.entityType,
        expectVersion: 0,
        put: [aspect('info', {})],
        searchDocument: d,
      })),
    });
    return store;
  }
  const scope = { entityTypes: [], filter: [], includeRemoved: false };
  const ds = (name: string): string => `urn:li:dataset:(urn:li:dataPlatform:hive,${name},PROD)`;

  it('reads every document through store scans of its page size, in URN order with keyset and offset paging', async () => {
    const names = ['e', 'a', 'c', 'b', 'd'];
    const index = createScanSearchIndex(await storeWith(names.map((n) => document(ds(n), n))), { pageSize: 2 });
    const page = await index.search({ ...scope, order: 'urn', afterUrn: ds('a'), offset: 1, limit: 2 });
    expect([page.total, page.hits.map((h) => h.urn)]).toEqual([5, [ds('c'), ds('d')]]);
  });

  it('ranks a match in the name above one in the description, then by URN', async () => {
    const index = createScanSearchIndex(
      await storeWith([
        { ...document(ds('a'), 'misc'), text: { name: 'misc', description: 'revenue figures', urnKey: 'a' } },
        { ...document(ds('z'), 'revenue'), text: { name: 'revenue', urnKey: 'z' } },
        { ...document(ds('b'), 'misc'), text: { name: 'misc', description: 'revenue', urnKey: 'b' } },
      ]),
    );
    const { hits } = await index.search({ ...scope, text: 'revenue', order: 'relevance', limit: 10 });
    expect(hits.map((h) => h.urn)).toEqual([ds('z'), ds('a'), ds('b')]);
    expect(hits[0]!.score! > hits[1]!.score!).toBe(true);
  });

  it('answers facets, and the property questions of the clean-up under definition keys', async () => {
    const withValues = (name: string, key: string, platform: string): SearchDocument => ({
      ...document(ds(name), name),
      fields: { platform: [platform] },
      properties: [{ propertyUrn: 'urn:li:structuredProperty:tier', definitionKey: key, values: ['gold'] }],
    });
    const store = await storeWith([withValues('a', 'k1', 'hive'), withValues('b', 'k2', 'hive'), withValues('c', 'k2', 'kafka')]);
    const index = createScanSearchIndex(store);
    const [facet] = await index.aggregate({ ...scope, facets: [{ kind: 'field', name: 'platform' }], maxValues: 10 });
    expect(facet!.buckets).toEqual([
      { value: 'hive', count: 2 },
      { value: 'kafka', count: 1 },
    ]);
    const tier = 'urn:li:structuredProperty:tier';
    expect(await index.findEntitiesWithPropertyValues({ propertyUrn: tier, keepDefinitionKey: 'k2', limit: 10 })).toEqual([ds('a')]);
    expect(await index.findEntitiesWithPropertyValues({ propertyUrn: tier, afterUrn: ds('a'), limit: 1 })).toEqual([ds('b')]);
    expect([await index.countEntitiesWithPropertyValues(tier), await index.countEntitiesWithPropertyValues(tier, 'k2')]).toEqual([3, 2]);
  });

  it("carries the store's change token on answers when the store declares one", async () => {
    const store = await storeWith([document(ds('a'), 'a')]);
    const answer = await createScanSearchIndex(store).search({ ...scope, order: 'urn', limit: 1 });
    expect(answer.changeToken).toBe(await store.changeToken!());
  });
});
