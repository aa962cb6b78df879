import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../../adapters/memory/index';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import { createCatalog, type Catalog, type StorageAdapter } from '../../../src/index';
import { ADMIN, answers, ds, exportOf, importAll, seedSource } from '../../support/initial-load-data';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function file(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'mc-initial-'));
  dirs.push(dir);
  return join(dir, name);
}

async function open(adapter: StorageAdapter): Promise<Catalog> {
  const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false } });
  await catalog.ready();
  return catalog;
}

/** What a file's search_keys and search_value_counts say (by key names: ids differ between files). */
function keyStatistics(filename: string): { keys: unknown[]; counts: unknown[] } {
  const db = new Database(filename, { readonly: true });
  try {
    const keys = db
      .prepare(
        'SELECT kind, name, def_key, entities, multi, entity_type, value_counts FROM search_keys WHERE entities > 0 ORDER BY kind, name, def_key',
      )
      .all();
    const counts = db
      .prepare(
        `SELECT k.kind, k.name, k.def_key, c.value, c.live, c.removed FROM search_value_counts c JOIN search_keys k ON k.id = c.key_id
         ORDER BY k.kind, k.name, k.def_key, c.value`,
      )
      .all();
    // Spot checks that the comparison compares something: keys of several values per document and of several types.
    expect(keys.some((k) => (k as { multi: number }).multi > 0)).toBe(true);
    expect(keys.some((k) => (k as { entity_type: string }).entity_type === '*')).toBe(true);
    expect(counts.length).toBeGreaterThan(10);
    return { keys, counts };
  } finally {
    db.close();
  }
}

describe('initial load (importRecords { initial: true })', () => {
  const COUNT = 700;
  let records: unknown[] = [];

  it('answers every search, filter, facet and count as an ordinary import of the same export does (SQLite, memory)', async () => {
    const source = await open(createMemoryAdapter());
    await seedSource(source, COUNT);
    records = await exportOf(source);
    await source.close();
    expect(records.filter((r) => (r as { kind: string }).kind === 'entity').length).toBeGreaterThan(COUNT);

    const ordinaryFile = file('ordinary.db');
    const ordinary = await open(createSqliteAdapter({ filename: ordinaryFile }));
    await importAll(ordinary, records, false);
    const initialFile = file('initial.db');
    const initial = await open(createSqliteAdapter({ filename: initialFile }));
    await importAll(initial, records, true);
    const expected = await answers(ordinary);
    expect(await answers(initial)).toEqual(expected);
    // Spot checks that the comparison compares something: soft-deleted entities hidden, hidden values of the deleted property.
    const all = expected[0] as { total: number };
    expect(all.total).toBeGreaterThan(COUNT * 0.8);
    expect(all.total).toBeLessThan(COUNT);
    expect(await initial.exportAll()[Symbol.asyncIterator]().next()).toBeDefined();
    await ordinary.close();
    await initial.close();
    // The file is an ordinary one afterwards: no marker, every index there.
    const db = new Database(initialFile, { readonly: true });
    try {
      const names = db.prepare("SELECT name FROM sqlite_master WHERE type IN ('index', 'table')").pluck().all() as string[];
      expect(names).not.toContain('mc_initial_load');
      expect(names).toEqual(
        expect.arrayContaining(['entities_by_urn', 'entities_by_scope', 'aspects_by_entity', 'search_values_by_value']),
      );
    } finally {
      db.close();
    }
    // The key statistics the load counted as it wrote are those every commit of the ordinary import kept.
    expect(keyStatistics(initialFile)).toEqual(keyStatistics(ordinaryFile));

    const memoryOrdinary = await open(createMemoryAdapter());
    await importAll(memoryOrdinary, records, false);
    const memoryInitial = await open(createMemoryAdapter());
    await importAll(memoryInitial, records, true);
    expect(await answers(memoryInitial)).toEqual(await answers(memoryOrdinary));
    await memoryOrdinary.close();
    await memoryInitial.close();
  });

  it('reads back every aspect as exported, and a new write after the load is versioned on top of it', async () => {
    const catalog = await open(createSqliteAdapter({ filename: file('round.db') }));
    await importAll(catalog, records, true, 250);
    expect(await exportOf(catalog)).toEqual(records.map((r) => ((r as { kind: string }).kind === 'header' ? expect.anything() : r)));
    const urn = (records.find((r) => (r as { urn?: string }).urn?.startsWith('urn:li:dataset:')) as { urn: string }).urn;
    const before = await catalog.entities.get(ADMIN, urn);
    const after = await catalog.entities.upsertAspect(ADMIN, urn, 'datasetProperties', { name: 'renamed after the load' });
    expect(after.aspects.datasetProperties?.version).toBe(before!.aspects.datasetProperties!.version + 1);
    const found = await catalog.search.search(ADMIN, { query: 'renamed', count: 5 });
    expect(found.searchResults.map((r) => r.entity.urn)).toEqual([urn]);
    await catalog.close();
  });

  it('is refused on a catalog that holds entities, and changes nothing', async () => {
    for (const adapter of [createSqliteAdapter({ filename: file('full.db') }), createMemoryAdapter()]) {
      const catalog = await open(adapter);
      await catalog.entities.upsertAspect(ADMIN, ds(1, 'hive'), 'datasetProperties', { name: 'there already' });
      await expect(catalog.importRecords(records.slice(0, 50), { initial: true })).rejects.toMatchObject({ code: 'CONFLICT' });
      const found = await catalog.search.search(ADMIN, { query: '*', count: 10 });
      expect(found.searchResults.map((r) => r.entity.urn)).toEqual([ds(1, 'hive')]);
      // The ordinary import still merges into it.
      await catalog.importRecords(records.slice(0, 50));
      await catalog.close();
    }
  });

  it('leaves the catalog empty when the load does not complete (closed mid-way), and a new load completes it', async () => {
    const path = file('cut.db');
    const cut = await open(createSqliteAdapter({ filename: path }));
    await cut.importRecords(records.slice(0, 300), { initial: true });
    // While it loads, the catalog takes no other write.
    await expect(cut.entities.upsertAspect(ADMIN, ds(9999, 'hive'), 'status', { removed: false })).rejects.toMatchObject({
      code: 'UNAVAILABLE',
    });
    await cut.close();
    const reopened = await open(createSqliteAdapter({ filename: path }));
    expect((await reopened.search.search(ADMIN, { query: '*', count: 1 })).total).toBe(0);
    expect(await exportOf(reopened)).toHaveLength(2);
    await importAll(reopened, records, true);
    expect((await exportOf(reopened)).length).toBe(records.length);
    await reopened.close();
  });

  it('another connection to the file writes nothing while a load runs, and cannot open the file then', async () => {
    const path = file('shared.db');
    const other = await open(createSqliteAdapter({ filename: path }));
    const loader = await open(createSqliteAdapter({ filename: path }));
    await loader.importRecords(records.slice(0, 200), { initial: true });
    await expect(other.entities.upsertAspect(ADMIN, ds(9999, 'hive'), 'status', { removed: false })).rejects.toMatchObject({
      code: 'UNAVAILABLE',
    });
    const late = createSqliteAdapter({ filename: path });
    await expect(late.open()).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await importAll(loader, records.slice(200), true);
    // Once complete, the other connection writes again and sees the load.
    await other.entities.upsertAspect(ADMIN, ds(9999, 'hive'), 'status', { removed: false });
    expect((await exportOf(other)).length).toBe(records.length + 1);
    await loader.close();
    await other.close();
  });

  it('refuses entities out of URN order and rolls the load back', async () => {
    const catalog = await open(createSqliteAdapter({ filename: file('order.db') }));
    const entities = records.filter((r) => (r as { kind: string }).kind === 'entity');
    await catalog.importRecords([records[0], ...entities.slice(0, 20)], { initial: true });
    await expect(catalog.importRecords(entities.slice(10, 30), { initial: true })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect((await exportOf(catalog)).length).toBe(2);
    // Writes are taken again, and a new load may start.
    await importAll(catalog, records, true);
    expect((await exportOf(catalog)).length).toBe(records.length);
    await catalog.close();
  });
});
