import type { PropertyValueIndex, StorageAdapter } from '../adapter/types';
import { createCatalog, type Catalog } from '../catalog';
import type { PropertyAssignment } from '../index';
import { outcomeCode } from './support';
import type { ConformanceHarness } from './types';

const ADMIN = 'urn:li:corpuser:admin';
const T0 = 1_700_000_000_000;
const P = 'urn:li:structuredProperty:io.conformance.retention';
const Q = 'urn:li:structuredProperty:io.conformance.tier';
const dataset = (name: string): string => `urn:li:dataset:(urn:li:dataPlatform:hive,${name},PROD)`;
const A = dataset('a');
const B = dataset('b');
const C = dataset('c');
const D = dataset('d');

interface Clock {
  now: number;
}

/** A catalog over a fresh adapter of the harness; background jobs off so that `settle()` is the only runner. */
async function withCatalog(
  harness: ConformanceHarness,
  test: (catalog: Catalog, adapter: StorageAdapter, clock: Clock) => Promise<void>,
): Promise<void> {
  const adapter = await harness.createAdapter({});
  const clock: Clock = { now: T0 };
  const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false }, clock: () => clock.now });
  try {
    await catalog.ready();
    await test(catalog, adapter, clock);
  } finally {
    await catalog.close();
  }
}

async function defineProperties(catalog: Catalog): Promise<void> {
  await catalog.properties.create(ADMIN, {
    qualifiedName: 'io.conformance.retention',
    valueType: 'number',
    cardinality: 'MULTIPLE',
    entityTypes: ['dataset'],
  });
  await catalog.properties.create(ADMIN, { qualifiedName: 'io.conformance.tier', valueType: 'string', entityTypes: ['dataset'] });
}

const values = (list: readonly PropertyAssignment[]): Array<[string, unknown[]]> => list.map((a) => [a.propertyUrn, a.values]);

/** Property URNs in the stored values aspect, read from the adapter itself (hidden ones included). */
async function storedPropertyUrns(adapter: StorageAdapter, urn: string): Promise<string[]> {
  const [entity] = await adapter.readEntities([urn], ['structuredProperties']);
  const list = (entity?.aspects.structuredProperties?.value.properties ?? []) as unknown as PropertyAssignment[];
  return list.map((a) => a.propertyUrn);
}

/**
 * Entities whose search document carries values of the property (under `definitionKey`, or any): the
 * adapter's own answer when it has the property-value index, else asked of its search index, entity by
 * entity under the definition key the domain recorded beside the stored values
 * (`systemMetadata.propertyKeys`), so that a document that is gone counts for nothing.
 */
async function countWithValues(adapter: StorageAdapter, propertyUrn: string, definitionKey?: string): Promise<number> {
  if (adapter.capabilities.propertyValues) {
    return (adapter as StorageAdapter & PropertyValueIndex).countEntitiesWithPropertyValues(propertyUrn, definitionKey);
  }
  const page = 500;
  /** `key \0 valueKind` → the URNs whose stored values of the property were written under that key. */
  const holders = new Map<string, string[]>();
  let afterUrn: string | undefined;
  for (;;) {
    const entities = await adapter.scanEntities({
      requireAspect: 'structuredProperties',
      aspectNames: ['structuredProperties'],
      afterUrn,
      limit: page,
    });
    for (const entity of entities) {
      const stored = entity.aspects.structuredProperties;
      const key = ((stored?.systemMetadata?.propertyKeys ?? {}) as Record<string, unknown>)[propertyUrn];
      const list = (stored?.value.properties ?? []) as unknown as PropertyAssignment[];
      const held = list.find((a) => a.propertyUrn === propertyUrn && a.values.length > 0);
      if (!held || typeof key !== 'string' || (definitionKey !== undefined && key !== definitionKey)) continue;
      const kind = typeof (held.values[0] as { double?: unknown }).double === 'number' ? 'number' : 'string';
      const group = `${key}\0${kind}`;
      holders.set(group, [...(holders.get(group) ?? []), entity.urn]);
    }
    if (entities.length < page) break;
    afterUrn = entities[entities.length - 1]!.urn;
  }
  let count = 0;
  for (const [group, urns] of holders) {
    const [key, kind] = group.split('\0') as [string, 'string' | 'number'];
    const { total } = await adapter.search({
      entityTypes: [],
      filter: [
        [
          { field: { kind: 'property', propertyUrn, definitionKey: key, valueKind: kind }, operator: 'EXISTS', values: [], negated: false },
          { field: { kind: 'urn' }, operator: 'IN', values: urns, negated: false },
        ],
      ],
      includeRemoved: true,
      order: 'urn',
      limit: 0,
    });
    count += total;
  }
  return count;
}

/**
 * The lifecycle of structured properties (soft delete, restore, hard delete with its durable
 * clean-up, version supersession, reindex) through a catalog over the adapter under test.
 */
export function registerStructuredPropertyTests(harness: ConformanceHarness): void {
  const { describe, it, expect } = harness;

  describe('structured property lifecycle', () => {
    it('soft delete hides values and refuses updates, assignments and filters; restore brings every value back', async () => {
      await withCatalog(harness, async (catalog, adapter) => {
        await defineProperties(catalog);
        for (const [urn, n] of [
          [A, 1],
          [B, 2],
          [C, 3],
        ] as const) {
          await catalog.properties.upsertValues(ADMIN, urn, {
            properties: [{ propertyUrn: P, values: [{ double: n }, { double: n * 10 }] }],
          });
        }
        await catalog.properties.upsertValues(ADMIN, A, {
          properties: [
            { propertyUrn: P, values: [{ double: 1 }, { double: 10 }] },
            { propertyUrn: Q, values: [{ string: 'gold' }] },
          ],
        });
        const before = await Promise.all([A, B, C].map((u) => catalog.properties.getValues(ADMIN, u)));

        await catalog.properties.softDelete(ADMIN, P);
        expect(values(await catalog.properties.getValues(ADMIN, A))).toEqual([[Q, [{ string: 'gold' }]]]);
        expect(await catalog.properties.getValues(ADMIN, B)).toEqual([]);
        const entity = await catalog.entities.get(ADMIN, C);
        expect(entity?.aspects.structuredProperties?.value.properties).toEqual([]);
        expect(await outcomeCode(catalog.properties.update(ADMIN, { urn: P, displayName: 'x' }))).toBe('INVALID_INPUT');
        expect(
          await outcomeCode(catalog.properties.upsertValues(ADMIN, D, { properties: [{ propertyUrn: P, values: [{ double: 4 }] }] })),
        ).toBe('INVALID_INPUT');
        expect(await outcomeCode(catalog.properties.resolveFilterField(ADMIN, 'io.conformance.retention'))).toBe('INVALID_INPUT');
        expect(await outcomeCode(catalog.properties.removeValues(ADMIN, B, [P]))).toBe('INVALID_INPUT');
        // Writing other properties keeps the hidden values; nothing is lost.
        await catalog.properties.upsertValues(ADMIN, A, { properties: [{ propertyUrn: Q, values: [{ string: 'silver' }] }] });
        expect(await countWithValues(adapter, P)).toBe(3);
        expect((await catalog.properties.get(ADMIN, P))?.removed).toBe(true);

        await catalog.properties.restore(ADMIN, P);
        const after = await Promise.all([A, B, C].map((u) => catalog.properties.getValues(ADMIN, u)));
        expect(values(after[0]!)).toEqual([
          [Q, [{ string: 'silver' }]],
          [P, [{ double: 1 }, { double: 10 }]],
        ]);
        expect(after.slice(1)).toEqual(before.slice(1));
        expect((await catalog.properties.resolveFilterField(ADMIN, 'io.conformance.retention')).propertyUrn).toBe(P);
      });
    });

    it('hard delete: the definition and its values go at once; the same name can be created again at once; the clean-up leaves no value behind', async () => {
      await withCatalog(harness, async (catalog, adapter) => {
        await defineProperties(catalog);
        for (const urn of [A, B, C])
          await catalog.properties.upsertValues(ADMIN, urn, {
            properties: [
              { propertyUrn: P, values: [{ double: 7 }] },
              { propertyUrn: Q, values: [{ string: 'x' }] },
            ],
          });
        // A soft-deleted entity is cleaned too.
        await catalog.entities.upsertAspect(ADMIN, C, 'status', { removed: true });
        const oldKey = (await catalog.properties.get(ADMIN, P))!.definitionKey;

        const result = await catalog.properties.hardDelete(ADMIN, P);
        expect(result).toEqual({ urn: P, entitiesToClean: 3 });
        expect(await catalog.properties.get(ADMIN, P)).toBeUndefined();
        expect(values(await catalog.properties.getValues(ADMIN, A))).toEqual([[Q, [{ string: 'x' }]]]);
        expect(await outcomeCode(catalog.properties.resolveFilterField(ADMIN, 'io.conformance.retention'))).toBe('INVALID_INPUT');
        expect(await catalog.listJobs()).toHaveLength(1);
        expect(await countWithValues(adapter, P, oldKey)).toBe(3);

        // Created again before the clean-up ran: no stale value resurfaces.
        const again = await catalog.properties.create(ADMIN, {
          qualifiedName: 'io.conformance.retention',
          valueType: 'string',
          entityTypes: ['dataset'],
        });
        expect(again.definitionKey).not.toBe(oldKey);
        expect(values(await catalog.properties.getValues(ADMIN, B))).toEqual([[Q, [{ string: 'x' }]]]);
        expect((await catalog.properties.resolveFilterField(ADMIN, 'io.conformance.retention')).definitionKey).toBe(again.definitionKey);
        await catalog.properties.upsertValues(ADMIN, D, { properties: [{ propertyUrn: P, values: [{ string: 'new' }] }] });

        const report = await catalog.settle();
        expect(report.failed).toEqual([]);
        expect(await catalog.listJobs()).toEqual([]);
        expect(await countWithValues(adapter, P, oldKey)).toBe(0);
        expect(await countWithValues(adapter, P)).toBe(1);
        for (const urn of [A, B, C]) expect(await storedPropertyUrns(adapter, urn)).toEqual([Q]);
        expect(values(await catalog.properties.getValues(ADMIN, D))).toEqual([[P, [{ string: 'new' }]]]);
      });
    });

    it('hard delete works from the soft-deleted state and is NOT_FOUND once gone', async () => {
      await withCatalog(harness, async (catalog, adapter) => {
        await defineProperties(catalog);
        await catalog.properties.upsertValues(ADMIN, A, { properties: [{ propertyUrn: P, values: [{ double: 1 }] }] });
        await catalog.properties.softDelete(ADMIN, P);
        expect((await catalog.properties.delete(ADMIN, P, { hard: true })).entitiesToClean).toBe(1);
        await catalog.settle();
        expect(await storedPropertyUrns(adapter, A)).toEqual([]);
        expect(await outcomeCode(catalog.properties.hardDelete(ADMIN, P))).toBe('NOT_FOUND');
        expect(await outcomeCode(catalog.properties.softDelete(ADMIN, P))).toBe('NOT_FOUND');
      });
    });

    it('a breaking change under a new version hides older values at once; the clean-up deletes them and keeps newer ones', async () => {
      await withCatalog(harness, async (catalog, adapter) => {
        await defineProperties(catalog);
        await catalog.properties.upsertValues(ADMIN, A, { properties: [{ propertyUrn: P, values: [{ double: 1 }, { double: 2 }] }] });
        await catalog.properties.upsertValues(ADMIN, B, {
          properties: [
            { propertyUrn: P, values: [{ double: 3 }] },
            { propertyUrn: Q, values: [{ string: 'kept' }] },
          ],
        });
        const oldKey = (await catalog.properties.get(ADMIN, P))!.definitionKey;
        const body = {
          qualifiedName: 'io.conformance.retention',
          valueType: 'number',
          cardinality: 'SINGLE' as const,
          entityTypes: ['dataset'],
        };
        expect(await outcomeCode(catalog.properties.upsert(ADMIN, body))).toBe('CONFLICT');
        const bumped = await catalog.properties.upsert(ADMIN, { ...body, version: '20240614080000' });
        expect(bumped.outcome).toBe('updated');
        expect(bumped.property.definitionKey).not.toBe(oldKey);

        expect(await catalog.properties.getValues(ADMIN, A)).toEqual([]);
        expect(values(await catalog.properties.getValues(ADMIN, B))).toEqual([[Q, [{ string: 'kept' }]]]);
        await catalog.properties.upsertValues(ADMIN, C, { properties: [{ propertyUrn: P, values: [{ double: 9 }] }] });
        expect(await countWithValues(adapter, P, oldKey)).toBe(2);

        await catalog.settle();
        expect(await countWithValues(adapter, P, oldKey)).toBe(0);
        expect(await countWithValues(adapter, P)).toBe(1);
        expect(await storedPropertyUrns(adapter, B)).toEqual([Q]);
        expect(values(await catalog.properties.getValues(ADMIN, C))).toEqual([[P, [{ double: 9 }]]]);
      });
    });

    it('the clean-up runs in batches of 500, each completing its job and queuing the next in one commit', async () => {
      await withCatalog(harness, async (catalog, adapter) => {
        await defineProperties(catalog);
        const items = Array.from({ length: 1001 }, (_, i) => ({
          urn: dataset(`bulk${String(i).padStart(4, '0')}`),
          properties: [{ propertyUrn: P, values: [{ double: i }] }],
        }));
        await catalog.properties.upsertValuesMany(ADMIN, items);
        expect((await catalog.properties.hardDelete(ADMIN, P)).entitiesToClean).toBe(1001);
        const report = await catalog.settle();
        // 500 + 500 + 1: three jobs, each the continuation of the one before.
        expect(report).toEqual({ completed: 3, failed: [] });
        expect(await countWithValues(adapter, P)).toBe(0);
        expect(await storedPropertyUrns(adapter, items[1000]!.urn)).toEqual([]);
      });
    });

    it('a clean-up job held by a worker that died is taken over once its lease expires, and finished', async () => {
      await withCatalog(harness, async (catalog, adapter, clock) => {
        await defineProperties(catalog);
        await catalog.properties.upsertValues(ADMIN, A, { properties: [{ propertyUrn: P, values: [{ double: 1 }] }] });
        await catalog.properties.hardDelete(ADMIN, P);
        const [held] = await adapter.claimJobs({ workerId: 'elsewhere:999999:dead', now: clock.now, leaseMs: 60_000, limit: 1 });
        expect(held?.type).toBe('structuredProperty.removeStaleValues');
        clock.now += 60_001;
        const report = await catalog.settle();
        expect(report.failed).toEqual([]);
        expect(await countWithValues(adapter, P)).toBe(0);
        expect(await catalog.listJobs({ includeDead: true })).toEqual([]);
      });
    });

    it('reindex rebuilds the search documents from the stored aspects, in batches, with progress', async () => {
      await withCatalog(harness, async (catalog, adapter) => {
        await defineProperties(catalog);
        const urns = Array.from({ length: 7 }, (_, i) => dataset(`r${i}`));
        for (const urn of urns)
          await catalog.properties.upsertValues(ADMIN, urn, { properties: [{ propertyUrn: Q, values: [{ string: 'v' }] }] });
        // Lose the index of every dataset, as if it had never been built.
        const stored = await adapter.readEntities(urns);
        await adapter.commit({
          entities: stored.map((e) => ({ urn: e.urn, entityType: e.entityType, expectVersion: e.version, searchDocument: null })),
        });
        expect(await countWithValues(adapter, Q)).toBe(0);

        const seen: Array<[number, boolean]> = [];
        const result = await catalog.reindex({ batchSize: 3, onProgress: (p) => seen.push([p.processed, p.done]) });
        expect(await countWithValues(adapter, Q)).toBe(7);
        // 2 definitions + 7 datasets, 3 per batch.
        expect(seen).toEqual([
          [3, false],
          [6, false],
          [9, false],
          [9, true],
        ]);
        expect(result.processed).toBe(9);
        expect(await outcomeCode(catalog.reindex({ batchSize: 0 }))).toBe('INVALID_INPUT');
      });
    });
  });
}
