import { afterEach, describe, expect, it } from 'vitest';
import { createCatalog, type Catalog, type StorageAdapter } from '../../../src/index';
import { reopenableStores, watchJobCommits, type ReopenableStore } from './apply-stores';

const ADMIN = 'urn:li:corpuser:admin';
const EDITOR = 'urn:li:corpuser:editor';
const READER = 'urn:li:corpuser:reader';
const TIER = 'urn:li:structuredProperty:io.test.tier';
const OWNER = 'urn:li:structuredProperty:io.test.owner';
const NOTE = 'urn:li:structuredProperty:io.test.note';
const s = (value: string) => ({ string: value });
const dataset = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,db.t${String(i).padStart(5, '0')},PROD)`;
const chart = (i: number) => `urn:li:chart:(looker,c${i})`;

const stores = await reopenableStores('test/core/stewardship/apply-to-matches.test.ts');

const disposers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const dispose of disposers.splice(0).reverse()) await dispose();
});

function open(adapter: StorageAdapter, background = false): Catalog {
  const catalog = createCatalog({
    adapter,
    superUsers: [ADMIN],
    policies: [{ actors: [EDITOR], privileges: ['EDIT_ENTITY_PROPERTIES', 'EDIT_ENTITY'] }],
    jobs: background ? { pollIntervalMs: 20 } : { background: false },
    onError: () => undefined,
  });
  disposers.push(() => catalog.close());
  return catalog;
}

async function seed(catalog: Catalog, datasets: number, charts = 0): Promise<void> {
  await catalog.properties.create(ADMIN, {
    qualifiedName: 'io.test.tier',
    valueType: 'string',
    entityTypes: ['dataset'],
    allowedValues: [{ value: { string: 'gold' } }, { value: { string: 'silver' } }],
  });
  await catalog.properties.create(ADMIN, {
    qualifiedName: 'io.test.owner',
    valueType: 'string',
    entityTypes: ['dataset', 'chart'],
    immutable: true,
  });
  await catalog.properties.create(ADMIN, { qualifiedName: 'io.test.note', valueType: 'string', entityTypes: ['dataset', 'chart'] });
  const items = [];
  for (let i = 0; i < datasets; i++) items.push({ urn: dataset(i), aspects: { datasetProperties: { name: `t${i}` } } });
  for (let i = 0; i < charts; i++) items.push({ urn: chart(i), aspects: { chartInfo: { title: `c${i}` } } });
  await catalog.entities.upsertMany(ADMIN, items);
}

async function everything(catalog: Catalog): Promise<unknown[]> {
  const records: unknown[] = [];
  // The header says when the export was made: everything else is the catalog's state.
  for await (const record of catalog.exportAll({ with: ['history', 'changes'] })) if (record.kind !== 'header') records.push(record);
  return records;
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'resolved',
    (error: { code?: string }) => error.code ?? String(error),
  );
}

/** Each entity's structuredProperties aspect version, read from the store itself. */
async function valueVersions(adapter: StorageAdapter, urns: readonly string[]): Promise<Map<string, number | undefined>> {
  const out = new Map<string, number | undefined>();
  for (let i = 0; i < urns.length; i += 1000) {
    const entities = await adapter.readEntities(urns.slice(i, i + 1000), ['structuredProperties']);
    for (const e of entities) out.set(e.urn, e.aspects.structuredProperties?.version);
  }
  return out;
}

describe.each(Object.keys(stores))('applyToMatches on %s', (kind) => {
  const store = (): ReopenableStore => {
    const made = stores[kind]!();
    disposers.push(() => made.dispose());
    return made;
  };

  it('a dry run answers matched, a sample and the violations by entity and property, and writes nothing', async () => {
    const catalog = open(store().open());
    await seed(catalog, 12, 2);
    await catalog.properties.upsertValues(EDITOR, dataset(3), { properties: [{ propertyUrn: OWNER, values: [s('alice')] }] });
    const before = await everything(catalog);
    const input = {
      types: ['dataset', 'chart'] as const,
      query: '*',
      set: [
        { propertyUrn: TIER, values: [s('bronze')] },
        { propertyUrn: OWNER, values: [s('bob')] },
      ],
    };
    const preview = await catalog.properties.applyToMatches(EDITOR, { ...input, types: [...input.types] }, { dryRun: true });
    expect(preview.matched).toBe(14);
    expect(preview.sample).toHaveLength(10);
    const third = preview.sample.find((x) => x.urn === dataset(3))!;
    expect(third.before.map((a) => a.propertyUrn)).toEqual([OWNER]);
    expect(third.after).toEqual([
      { propertyUrn: TIER, values: [s('bronze')] },
      { propertyUrn: OWNER, values: [s('bob')] },
    ]);
    const v = preview.violations;
    // An entity type the property does not allow, counted over every match.
    expect(v).toContainEqual(expect.objectContaining({ propertyUrn: TIER, entityType: 'chart', count: 2, urn: chart(0) }));
    // A value that is not allowed, found once for the definition.
    expect(v.filter((x) => x.propertyUrn === TIER && /bronze/.test(x.message))).toHaveLength(1);
    // The immutable value an entity holds already, named by entity.
    expect(v).toContainEqual(expect.objectContaining({ propertyUrn: OWNER, urn: dataset(3), message: expect.stringMatching(/immutable/) }));
    expect(v.filter((x) => /immutable/.test(x.message)).map((x) => x.urn)).toEqual([dataset(3)]);
    expect(await everything(catalog)).toEqual(before);
    // The real run is refused for the same reasons, before any job is queued.
    const refused = await catalog.properties.applyToMatches(EDITOR, { ...input, types: [...input.types] }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'INVALID_INPUT' });
    expect((refused as { details: Array<{ path: string; message: string }> }).details).toContainEqual(
      expect.objectContaining({ path: '/set/1', message: expect.stringContaining(dataset(3)) }),
    );
    expect(await catalog.listJobs()).toEqual([]);
    expect(await everything(catalog)).toEqual(before);
  });

  it('refuses a filter on an unknown or soft-deleted property as search does, and a soft-deleted property to set', async () => {
    const catalog = open(store().open());
    await seed(catalog, 2);
    const unknown = { orFilters: [{ and: [{ field: 'structuredProperties.io.test.nope', value: 'x' }] }] };
    await catalog.properties.softDelete(ADMIN, NOTE);
    const softDeleted = { orFilters: [{ and: [{ field: 'structuredProperties.io.test.note', value: 'x' }] }] };
    for (const scope of [unknown, softDeleted]) {
      const searched = await codeOf(catalog.search.scroll(EDITOR, scope));
      expect(
        await codeOf(
          catalog.properties.applyToMatches(EDITOR, { ...scope, set: [{ propertyUrn: TIER, values: [s('gold')] }] }, { dryRun: true }),
        ),
      ).toBe(searched === 'resolved' ? 'resolved' : searched);
    }
    expect(await codeOf(catalog.search.scroll(EDITOR, softDeleted))).toBe('INVALID_INPUT');
    const preview = await catalog.properties.applyToMatches(EDITOR, { set: [{ propertyUrn: NOTE, values: [s('x')] }] }, { dryRun: true });
    expect(preview.violations).toContainEqual(
      expect.objectContaining({ propertyUrn: NOTE, message: expect.stringMatching(/soft-deleted/) }),
    );
    expect(await codeOf(catalog.properties.applyToMatches(EDITOR, { set: [{ propertyUrn: NOTE, values: [s('x')] }] }))).toBe(
      'INVALID_INPUT',
    );
    expect(await codeOf(catalog.properties.applyToMatches(EDITOR, {}, { dryRun: true }))).toBe('INVALID_INPUT');
  });

  it('FORBIDDEN without EDIT_ENTITY_PROPERTIES; the status is for its starter or a holder of the privilege', async () => {
    const catalog = open(store().open());
    await seed(catalog, 3);
    const input = { types: ['dataset' as const], set: [{ propertyUrn: TIER, values: [s('gold')] }] };
    expect(await codeOf(catalog.properties.applyToMatches(READER, input, { dryRun: true }))).toBe('FORBIDDEN');
    expect(await codeOf(catalog.properties.applyToMatches(READER, input))).toBe('FORBIDDEN');
    const { jobId } = (await catalog.properties.applyToMatches(EDITOR, input)) as { jobId: string };
    expect(await codeOf(catalog.properties.applyStatus(READER, jobId))).toBe('FORBIDDEN');
    expect(await codeOf(catalog.properties.cancelApply(READER, jobId))).toBe('FORBIDDEN');
    expect((await catalog.properties.applyStatus(EDITOR, jobId)).state).toBe('PENDING');
    expect(await codeOf(catalog.properties.applyStatus(ADMIN, 'no-such-job'))).toBe('NOT_FOUND');
  });

  it('a job writes every match once as its starter, in chunks; a finished job cannot be cancelled', async () => {
    const adapter = store().open();
    const catalog = open(adapter);
    await seed(catalog, 9, 1);
    await catalog.properties.upsertValues(EDITOR, dataset(0), { properties: [{ propertyUrn: NOTE, values: [s('kept')] }] });
    const started = await catalog.properties.applyToMatches(
      EDITOR,
      { types: ['dataset'], set: [{ propertyUrn: TIER, values: [s('gold')] }] },
      { chunkSize: 4 },
    );
    expect(started).toMatchObject({ matched: 9, jobId: expect.any(String) });
    const { jobId } = started as { jobId: string };
    await catalog.settle();
    const status = await catalog.properties.applyStatus(EDITOR, jobId);
    expect(status).toMatchObject({ state: 'DONE', done: 9, total: 9, failed: 0, skipped: 0, startedBy: EDITOR });
    for (let i = 0; i < 9; i++) {
      const values = await catalog.properties.getValues(ADMIN, dataset(i));
      expect(values.find((a) => a.propertyUrn === TIER)).toMatchObject({ values: [s('gold')], lastModified: { actor: EDITOR } });
    }
    expect((await catalog.properties.getValues(ADMIN, dataset(0))).map((a) => a.propertyUrn).sort()).toEqual([NOTE, TIER].sort());
    expect(await catalog.properties.getValues(ADMIN, chart(0))).toEqual([]);
    const versions = await valueVersions(
      adapter,
      Array.from({ length: 9 }, (_, i) => dataset(i)),
    );
    expect([...versions.values()]).toEqual([2, 1, 1, 1, 1, 1, 1, 1, 1]);
    expect(await catalog.properties.cancelApply(EDITOR, jobId)).toMatchObject({ cancelled: false, state: 'DONE' });
    expect((await catalog.properties.applyStatus(EDITOR, jobId)).state).toBe('DONE');
  });

  it('applies to the matches of the start: an entity changed meanwhile keeps its other values, a deleted one is skipped, a new one is left alone', async () => {
    const ref: { catalog?: Catalog } = {};
    const adapter = watchJobCommits(store().open(), async (n) => {
      if (n !== 1) return;
      // Right after the snapshot, before any chunk.
      await ref.catalog!.properties.upsertValues(EDITOR, dataset(1), { properties: [{ propertyUrn: NOTE, values: [s('meanwhile')] }] });
      await ref.catalog!.entities.delete(ADMIN, dataset(4), { hard: true });
      await ref.catalog!.entities.upsertMany(ADMIN, [{ urn: dataset(100), aspects: { datasetProperties: { name: 'late' } } }]);
    });
    const catalog = (ref.catalog = open(adapter));
    await seed(catalog, 6);
    const started = await catalog.properties.applyToMatches(
      EDITOR,
      { types: ['dataset'], set: [{ propertyUrn: TIER, values: [s('silver')] }] },
      { chunkSize: 2 },
    );
    const { jobId } = started as { jobId: string };
    await catalog.settle();
    expect(await catalog.properties.applyStatus(EDITOR, jobId)).toMatchObject({ state: 'DONE', total: 6, done: 6, skipped: 1, failed: 0 });
    const values = await catalog.properties.getValues(ADMIN, dataset(1));
    expect(values.map((a) => [a.propertyUrn, a.values])).toEqual([
      [NOTE, [s('meanwhile')]],
      [TIER, [s('silver')]],
    ]);
    expect(await catalog.entities.exists(ADMIN, dataset(4))).toBe(false);
    expect(await catalog.properties.getValues(ADMIN, dataset(100))).toEqual([]);
  });

  it('cancel stops the job after its current chunk: nothing is written afterwards', async () => {
    const ref: { catalog?: Catalog } = {};
    let jobId = '';
    let feedAtCancel: unknown[] = [];
    const adapter = watchJobCommits(store().open(), async (n) => {
      // After the snapshot and the first chunk.
      if (n !== 2) return;
      expect(await ref.catalog!.properties.cancelApply(EDITOR, jobId)).toMatchObject({ cancelled: true, state: 'CANCELLED' });
      feedAtCancel = await everything(ref.catalog!);
    });
    const catalog = (ref.catalog = open(adapter));
    await seed(catalog, 10);
    jobId = (
      (await catalog.properties.applyToMatches(
        EDITOR,
        { types: ['dataset'], set: [{ propertyUrn: TIER, values: [s('gold')] }] },
        { chunkSize: 3 },
      )) as { jobId: string }
    ).jobId;
    await catalog.settle();
    const status = await catalog.properties.applyStatus(EDITOR, jobId);
    expect(status).toMatchObject({ state: 'CANCELLED', done: 3, total: 10 });
    expect(await catalog.listJobs()).toEqual([]);
    // The chunks queued before the cancel were completed without writing anything.
    const withoutJobs = (records: unknown[]) =>
      records.filter((r) => (r as { kind: string }).kind !== 'job' && (r as { kind: string }).kind !== 'end');
    expect(withoutJobs(await everything(catalog))).toEqual(withoutJobs(feedAtCancel));
    let holding = 0;
    for (let i = 0; i < 10; i++) if ((await catalog.properties.getValues(ADMIN, dataset(i))).length) holding++;
    expect(holding).toBe(3);
  });

  it('a privilege taken away mid-job fails the rest of it; the job record is written by the catalog only', async () => {
    const ref: { catalog?: Catalog } = {};
    let policy = '';
    const STEWARD = 'urn:li:corpuser:steward';
    const adapter = watchJobCommits(store().open(), async (n) => {
      // After the snapshot and the first chunk: the steward's policy goes.
      if (n === 2) await ref.catalog!.policies.remove(ADMIN, policy);
    });
    const catalog = (ref.catalog = open(adapter));
    await seed(catalog, 6);
    policy = (
      await catalog.policies.create(ADMIN, { name: 'stewards', actors: { users: [STEWARD] }, privileges: ['EDIT_ENTITY_PROPERTIES'] })
    ).urn;
    const { jobId } = (await catalog.properties.applyToMatches(
      STEWARD,
      { types: ['dataset'], set: [{ propertyUrn: TIER, values: [s('gold')] }] },
      { chunkSize: 2 },
    )) as {
      jobId: string;
    };
    await catalog.settle();
    const status = await catalog.properties.applyStatus(STEWARD, jobId);
    expect(status).toMatchObject({ state: 'FAILED', done: 2, total: 6 });
    expect(status.message).toMatch(/EDIT_ENTITY_PROPERTIES/);
    let holding = 0;
    for (let i = 0; i < 6; i++) if ((await catalog.properties.getValues(ADMIN, dataset(i))).length) holding++;
    expect(holding).toBe(2);
    const record = `urn:li:dataHubExecutionRequest:${jobId}`;
    expect(await codeOf(catalog.entities.upsertAspect(ADMIN, record, 'dataHubExecutionRequestResult', { status: 'DONE' }))).toBe(
      'INVALID_INPUT',
    );
    expect((await catalog.properties.applyStatus(ADMIN, jobId)).state).toBe('FAILED');
  });

  it('a job of 10,000 matches completes across a restart of the catalog, each entity written once; its status survives', async () => {
    const reopenable = store();
    let reached: () => void = () => undefined;
    const halfway = new Promise<void>((resolve) => (reached = resolve));
    // The first catalog runs its jobs in the background and is closed once the snapshot and three chunks
    // are committed (closing waits for the chunk in progress, as a stopping server does).
    const first = open(
      watchJobCommits(reopenable.open(), async (n) => {
        if (n === 4) reached();
      }),
      true,
    );
    await seed(first, 10_000);
    const { jobId } = (await first.properties.applyToMatches(
      EDITOR,
      { types: ['dataset'], set: [{ propertyUrn: TIER, values: [s('gold')] }] },
      { chunkSize: 1000 },
    )) as {
      jobId: string;
    };
    await halfway;
    await first.close();
    const adapter = reopenable.open();
    const second = open(adapter);
    const midway = await second.properties.applyStatus(EDITOR, jobId);
    expect(midway.state).toBe('RUNNING');
    expect(midway.total).toBe(10_000);
    expect(midway.done).toBeGreaterThanOrEqual(3000);
    expect(midway.done).toBeLessThan(10_000);
    await second.settle();
    expect(await second.properties.applyStatus(EDITOR, jobId)).toMatchObject({ state: 'DONE', done: 10_000, total: 10_000, failed: 0 });
    const versions = await valueVersions(
      adapter,
      Array.from({ length: 10_000 }, (_, i) => dataset(i)),
    );
    expect(versions.size).toBe(10_000);
    expect(new Set(versions.values())).toEqual(new Set([1]));
  }, 300_000);
});
