import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../../adapters/memory/index';
import { createCatalog, type Catalog, type StorageAdapter } from '../../../src/index';
import { ADMIN, answers, ds, exportOf, importAll, seedSource } from '../../support/initial-load-data';
import { SchemaPool, withPostgresServer } from '../../support/postgres';

async function open(adapter: StorageAdapter): Promise<Catalog> {
  const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false } });
  await catalog.ready();
  return catalog;
}

await withPostgresServer('test/adapters/postgres/initial-load.test.ts', 'initial load on PostgreSQL (COPY)', () => {
  describe('initial load on PostgreSQL (COPY)', () => {
    const schemas = new SchemaPool();
    const adapter = () => schemas.adapter({ schema: schemas.freshSchema() });
    let records: unknown[] = [];

    beforeAll(async () => {
      const source = await open(createMemoryAdapter());
      await seedSource(source, 400);
      records = await exportOf(source);
      await source.close();
    });
    afterAll(() => schemas.end());

    it('answers every search, filter, facet and count as an ordinary import of the same export does, with every index back', async () => {
      const ordinary = await open(adapter());
      await importAll(ordinary, records, false);
      const loaded = adapter();
      const initial = await open(loaded);
      await importAll(initial, records, true);
      const expected = await answers(ordinary);
      expect(await answers(initial)).toEqual(expected);
      expect((expected[0] as { total: number }).total).toBeGreaterThan(300);
      expect(await exportOf(initial)).toEqual(records.map((r) => ((r as { kind: string }).kind === 'header' ? expect.anything() : r)));
      // The same indexes as a schema that never loaded: the load dropped them and built them again.
      const indexes = async (a: StorageAdapter) =>
        (
          await schemas.query<{ indexname: string }>('SELECT indexname FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname', [
            schemas.schemaOfAdapter(a),
          ])
        ).map((r) => r.indexname);
      const loadedIndexes = await indexes(loaded);
      expect(loadedIndexes).toContain('property_values_str');
      expect(loadedIndexes).toContain('search_text_terms');
      await ordinary.close();
      const plain = adapter();
      await plain.open();
      expect(loadedIndexes).toEqual(await indexes(plain));
      await plain.close();
      // An ordinary write on top of the load is versioned after it.
      const urn = (records.find((r) => (r as { urn?: string }).urn?.startsWith('urn:li:dataset:')) as { urn: string }).urn;
      const before = await initial.entities.get(ADMIN, urn);
      const after = await initial.entities.upsertAspect(ADMIN, urn, 'datasetProperties', { name: 'renamed after the load' });
      expect(after.aspects.datasetProperties?.version).toBe(before!.aspects.datasetProperties!.version + 1);
      await initial.close();
    });

    it('is refused on a catalog that holds entities, and changes nothing', async () => {
      const a = adapter();
      const catalog = await open(a);
      await catalog.entities.upsertAspect(ADMIN, ds(1, 'hive'), 'datasetProperties', { name: 'there already' });
      await expect(catalog.importRecords(records.slice(0, 50), { initial: true })).rejects.toMatchObject({ code: 'CONFLICT' });
      const found = await catalog.search.search(ADMIN, { query: '*', count: 10 });
      expect(found.searchResults.map((r) => r.entity.urn)).toEqual([ds(1, 'hive')]);
      expect(await schemas.countRows(a, 'entities')).toBe(1);
      await catalog.close();
    });

    it('leaves an empty catalog when the load fails midway (a bad record at the end) or is not completed, and a new load completes it', async () => {
      const a = adapter();
      const catalog = await open(a);
      const entities = records.filter((r) => (r as { kind: string }).kind === 'entity');
      await importAll(catalog, records.slice(0, 250), true, 100);
      // Out of URN order: the storage refuses it and the load is rolled back.
      await expect(catalog.importRecords(entities.slice(0, 10), { initial: true })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      expect(await schemas.countRows(a, 'entities')).toBe(0);
      expect(await schemas.countRows(a, 'aspects')).toBe(0);
      expect(await schemas.countRows(a, 'property_values')).toBe(0);
      // A load left open (a bad record refused: the caller gives up) is rolled back at close.
      await importAll(catalog, records.slice(0, 250), true, 100);
      await expect(catalog.importRecords([{ kind: 'entity', urn: 'not a urn' }], { initial: true })).rejects.toMatchObject({
        code: 'INVALID_INPUT',
      });
      await catalog.close();
      expect(await schemas.countRows(a, 'entities')).toBe(0);
      expect(await schemas.countRows(a, 'search_text')).toBe(0);
      const indexes = await schemas.query('SELECT 1 FROM pg_indexes WHERE schemaname = $1 AND indexname = $2', [
        schemas.schemaOfAdapter(a),
        'property_values_str',
      ]);
      expect(indexes).toHaveLength(1);
      const again = await open(schemas.adapter({ schema: schemas.schemaOfAdapter(a) }));
      await importAll(again, records, true);
      expect((await exportOf(again)).length).toBe(records.length);
      await again.close();
    });
  });
});
