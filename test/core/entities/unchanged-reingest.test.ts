import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../../adapters/memory/index';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import { createCatalog, type Catalog, type StorageAdapter } from '../../../src/index';

const ADMIN = 'urn:li:corpuser:admin';
const TIER = 'urn:li:structuredProperty:io.reingest.tier';
const COUNT = 300;
const urnOf = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,reingest.t${i},PROD)`;
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The lines of a connector's run: three aspects per dataset, as change proposals. */
function proposals(tierOf: (i: number) => string = (i) => (i % 2 ? 'gold' : 'silver')): unknown[] {
  return Array.from({ length: COUNT }, (_, i) => [
    {
      entityUrn: urnOf(i),
      changeType: 'UPSERT',
      aspectName: 'datasetProperties',
      aspect: { json: { name: `t${i}`, description: `table ${i}` } },
    },
    { entityUrn: urnOf(i), changeType: 'UPSERT', aspectName: 'status', aspect: { json: { removed: false } } },
    {
      entityUrn: urnOf(i),
      changeType: 'UPSERT',
      aspectName: 'structuredProperties',
      aspect: { json: { properties: [{ propertyUrn: TIER, values: [{ string: tierOf(i) }] }] } },
    },
  ]).flat();
}

async function ingest(catalog: Catalog, lines: readonly unknown[]): Promise<void> {
  for (let i = 0; i < lines.length; i += 300) await catalog.entities.applyProposals(ADMIN, lines.slice(i, i + 300));
}

async function eventCount(catalog: Catalog): Promise<number> {
  let n = 0;
  let after: string | undefined;
  for (;;) {
    const page = await catalog.changes.read(ADMIN, { limit: 1000, ...(after ? { after } : {}) });
    if (page.events.length === 0) return n;
    n += page.events.length;
    after = page.events.at(-1)!.id;
  }
}

const gold = async (catalog: Catalog) =>
  (
    await catalog.search.search(ADMIN, {
      query: '*',
      count: 1,
      orFilters: [{ and: [{ field: 'structuredProperties.io.reingest.tier', values: ['gold'] }] }],
    })
  ).total;

describe('re-ingesting unchanged metadata', () => {
  const stores: Record<string, () => { adapter: StorageAdapter; file?: string }> = {
    memory: () => ({ adapter: createMemoryAdapter() }),
    sqlite: () => {
      const dir = mkdtempSync(join(tmpdir(), 'mc-reingest-'));
      dirs.push(dir);
      const file = join(dir, 'catalog.db');
      return { adapter: createSqliteAdapter({ filename: file }), file };
    },
  };
  for (const [kind, make] of Object.entries(stores)) {
    it(`${kind}: writes no version and no event, and the file does not grow; a changed value is still written`, async () => {
      const { adapter, file } = make();
      const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false } });
      try {
        await catalog.properties.create(ADMIN, { qualifiedName: 'io.reingest.tier', valueType: 'string', entityTypes: ['dataset'] });
        await ingest(catalog, proposals());
        const events = await eventCount(catalog);
        const size = file ? statSync(file).size + statSync(`${file}-wal`).size : 0;
        await ingest(catalog, proposals());
        await ingest(catalog, proposals());
        expect(await eventCount(catalog)).toBe(events);
        if (file) expect(statSync(file).size + statSync(`${file}-wal`).size).toBe(size);
        const view = await catalog.entities.get(ADMIN, urnOf(1));
        expect(Object.values(view!.aspects).map((a) => a.version)).toEqual([1, 1, 1]);
        expect(await gold(catalog)).toBe(COUNT / 2);

        // One value changed: that aspect alone gets a version and an event.
        await ingest(
          catalog,
          proposals((i) => (i === 0 ? 'gold' : i % 2 ? 'gold' : 'silver')),
        );
        expect(await eventCount(catalog)).toBe(events + 1);
        expect((await catalog.entities.get(ADMIN, urnOf(0)))!.aspects.structuredProperties!.version).toBe(2);
        expect(await gold(catalog)).toBe(COUNT / 2 + 1);
      } finally {
        await catalog.close();
      }
    });

    it(`${kind}: values of a definition deleted and created again are written anew when sent unchanged (they were hidden)`, async () => {
      const { adapter } = make();
      const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false } });
      try {
        await catalog.properties.create(ADMIN, { qualifiedName: 'io.reingest.tier', valueType: 'string', entityTypes: ['dataset'] });
        await ingest(catalog, proposals());
        expect(await gold(catalog)).toBe(COUNT / 2);
        await catalog.properties.delete(ADMIN, TIER, { hard: true });
        await catalog.properties.create(ADMIN, { qualifiedName: 'io.reingest.tier', valueType: 'string', entityTypes: ['dataset'] });
        expect(await gold(catalog)).toBe(0);
        // The stored values are equal to the sent ones, but were written under the old definition: planned, not skipped.
        await ingest(catalog, proposals());
        expect(await gold(catalog)).toBe(COUNT / 2);
      } finally {
        await catalog.close();
      }
    });
  }
});
