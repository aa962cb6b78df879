import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import { parseKeyIds } from '../../../adapters/sqlite/search-store';
import { randomCatalog, randomCondition, randomDocument, randomSearchRequest, seededRandom } from '../../../src/testing/search-catalog';
import { referenceMatching, referenceSearch } from '../../../src/testing/search-reference';
import { expectSearchLikeReference, WrittenCatalog } from '../../../src/testing/search-random';
import type { SearchDocument, SearchRequest } from '../../../src/adapter/types';
import { SCHEMA_VERSION } from '../../../adapters/sqlite/schema';

const directory = mkdtempSync(join(tmpdir(), 'metacatalog-search-store-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** Distinct entity types of the rows under each key, beside the type the key's statistics keep. */
function keyTypes(db: Database.Database): Array<{ id: number; kept: string | null; types: string | null }> {
  return db
    .prepare(
      `SELECT k.id AS id, k.entity_type AS kept, (SELECT group_concat(t, ',') FROM (SELECT DISTINCT y.text AS t FROM search_values v JOIN dictionary y ON CAST(y.id AS TEXT) = v.entity_type WHERE v.key_id = k.id ORDER BY t)) AS types
       FROM search_keys k ORDER BY k.id`,
    )
    .all() as Array<{ id: number; kept: string | null; types: string | null }>;
}

/** NULL exactly when a key has no rows; the type when all rows have one ('*' may stay after others went); '*' with several. */
function expectKeyTypesAgree(db: Database.Database): void {
  const keys = keyTypes(db);
  for (const { id, kept, types } of keys) {
    if (types === null) expect(kept, `key ${id}`).toBeNull();
    else if (types.includes(',')) expect(kept, `key ${id}`).toBe('*');
    else expect([types, '*'], `key ${id}`).toContain(kept);
  }
  expect(keys.length).toBeGreaterThan(0);
}

describe('SQLite search tables', () => {
  it('keep per-key document counts (all, and with several values) equal to the rows, through replacements and deletions', async () => {
    const filename = join(directory, 'counts.db');
    const adapter = createSqliteAdapter({ filename });
    await adapter.open();
    try {
      const catalog = new WrittenCatalog(adapter);
      const random = seededRandom(77);
      await catalog.put(randomCatalog(91, 200));
      const urns = catalog.list.map((d) => d.urn);
      await catalog.put(
        urns
          .filter(() => random() < 0.3)
          .map((urn, i) => ({ ...randomDocument(random, 5000 + i), urn, entityType: catalog.documents.get(urn)!.entityType })),
      );
      await catalog.deleteEntities(urns.filter(() => random() < 0.1).filter((u) => catalog.documents.has(u)));
      await catalog.dropDocuments(catalog.list.map((d) => d.urn).filter(() => random() < 0.05));
    } finally {
      await adapter.close();
    }
    const db = new Database(filename, { readonly: true });
    try {
      const kept = db.prepare('SELECT id, entities, multi FROM search_keys ORDER BY id').all();
      const actual = db
        .prepare(
          `SELECT k.id AS id, COUNT(v.entity_id) AS entities, COALESCE(SUM(v.n > 1), 0) AS multi FROM search_keys k
           LEFT JOIN (SELECT key_id, entity_id, COUNT(*) AS n FROM search_values GROUP BY key_id, entity_id) v ON v.key_id = k.id
           GROUP BY k.id ORDER BY k.id`,
        )
        .all();
      expect(kept).toEqual(actual);
      expect(kept.length).toBeGreaterThan(5);
      expectKeyTypesAgree(db);
      // Every document lists exactly the keys it has rows under.
      const docs = db.prepare('SELECT entity_id, key_ids FROM entities WHERE removed IS NOT NULL').all() as Array<{
        entity_id: number;
        key_ids: string;
      }>;
      const rows = db.prepare(
        'SELECT key_id, COUNT(*) > 1 AS several FROM search_values WHERE entity_id = ? GROUP BY key_id ORDER BY key_id',
      );
      for (const doc of docs) {
        const listed = [...parseKeyIds(doc.key_ids)].sort((a, b) => a[0] - b[0]).map(([id, several]) => [id, several ? 1 : 0]);
        expect(listed).toEqual(rows.raw(true).all(doc.entity_id) as Array<[number, number]>);
      }
      expect(
        db
          .prepare('SELECT COUNT(*) FROM search_values WHERE entity_id NOT IN (SELECT entity_id FROM entities WHERE removed IS NOT NULL)')
          .pluck()
          .get(),
      ).toBe(0);
    } finally {
      db.close();
    }
  });

  it('migrates an older file: the key entity types are filled in from the rows', async () => {
    const filename = join(directory, 'migrate.db');
    const adapter = createSqliteAdapter({ filename });
    await adapter.open();
    try {
      await new WrittenCatalog(adapter).put(randomCatalog(5, 150));
    } finally {
      await adapter.close();
    }
    const raw = new Database(filename);
    const before = raw.prepare('SELECT id, entity_type FROM search_keys ORDER BY id').all();
    raw.exec('ALTER TABLE search_keys DROP COLUMN entity_type');
    raw.pragma('user_version = 2');
    raw.close();
    const again = createSqliteAdapter({ filename });
    await again.open();
    await again.close();
    const db = new Database(filename, { readonly: true });
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      // Freshly computed, so exact: the migration and the writes agree.
      expect(db.prepare('SELECT id, entity_type FROM search_keys ORDER BY id').all()).toEqual(before);
      expectKeyTypesAgree(db);
    } finally {
      db.close();
    }
  });

  it('keep the entity type of a key: one type, then several, then none when the last document goes', async () => {
    const filename = join(directory, 'types.db');
    const adapter = createSqliteAdapter({ filename });
    await adapter.open();
    const doc = (entityType: string, i: number): SearchDocument => ({
      urn: entityType === 'dataset' ? `urn:li:dataset:(urn:li:dataPlatform:hive,t${i},PROD)` : `urn:li:chart:(looker,c${i})`,
      entityType,
      removed: false,
      text: { urnKey: `k${i}` },
      fields: {},
      properties: [{ propertyUrn: 'urn:li:structuredProperty:team', definitionKey: 'k1', values: [`team-${i}`] }],
    });
    const typeOfKey = (): unknown => {
      const db = new Database(filename, { readonly: true });
      try {
        return db.prepare("SELECT entity_type FROM search_keys WHERE name = 'urn:li:structuredProperty:team'").pluck().get();
      } finally {
        db.close();
      }
    };
    try {
      const catalog = new WrittenCatalog(adapter);
      await catalog.put([doc('dataset', 1), doc('dataset', 2)]);
      expect(typeOfKey()).toBe('dataset');
      await catalog.put([doc('chart', 3)]);
      expect(typeOfKey()).toBe('*');
      await catalog.deleteEntities(catalog.list.map((d) => d.urn));
      expect(typeOfKey()).toBeNull();
      await catalog.put([doc('chart', 4)]);
      expect(typeOfKey()).toBe('chart');
    } finally {
      await adapter.close();
    }
  });

  it('reuse key statistics between searches only while no connection committed: a key gaining a second type is seen at once', async () => {
    const filename = join(directory, 'stats-cache.db');
    const reader = createSqliteAdapter({ filename });
    const writer = createSqliteAdapter({ filename });
    await reader.open();
    await writer.open();
    const team = 'urn:li:structuredProperty:team';
    const doc = (entityType: string, i: number, value: string): SearchDocument => ({
      urn: entityType === 'dataset' ? `urn:li:dataset:(urn:li:dataPlatform:hive,t${i},PROD)` : `urn:li:chart:(looker,c${i})`,
      entityType,
      removed: false,
      text: { urnKey: `k${i}` },
      fields: {},
      properties: [{ propertyUrn: team, definitionKey: 'k1', values: [value] }],
    });
    // Datasets with team = a: the statistics say "one type", so the type test is left out.
    const datasetsWithA = async (adapter: typeof reader): Promise<string[]> =>
      (
        await adapter.search({
          entityTypes: ['dataset'],
          filter: [
            [
              {
                field: { kind: 'property', propertyUrn: team, definitionKey: 'k1', valueKind: 'string' },
                operator: 'EQUAL',
                values: ['a'],
                negated: false,
              },
            ],
          ],
          includeRemoved: false,
          order: 'urn',
          limit: 10,
        })
      ).hits.map((h) => h.urn);
    try {
      const other = new WrittenCatalog(writer);
      const own = new WrittenCatalog(reader);
      const d = (i: number) => doc('dataset', i, 'a').urn;
      await own.put([doc('dataset', 1, 'a'), doc('dataset', 2, 'b')]);
      expect(await datasetsWithA(reader)).toEqual([d(1)]);
      expect(await datasetsWithA(reader)).toEqual([d(1)]);
      // The reader's own connection adds a chart under the key: its cached "one type" is void.
      await own.put([doc('chart', 3, 'a')]);
      expect(await datasetsWithA(reader)).toEqual([d(1)]);
      await own.deleteEntities(own.list.map((x) => x.urn));
      await own.put([doc('dataset', 5, 'a')]);
      expect(await datasetsWithA(reader)).toEqual([d(5)]);
      // Another connection does the same.
      await other.put([doc('chart', 6, 'a')]);
      expect(await datasetsWithA(reader)).toEqual([d(5)]);
      const facet = { kind: 'property' as const, propertyUrn: team, definitionKey: 'k1', valueKind: 'string' as const };
      expect(
        await reader.aggregate({ entityTypes: ['dataset'], filter: [], includeRemoved: false, facets: [facet], maxValues: 10 }),
      ).toEqual([{ field: facet, buckets: [{ value: 'a', count: 1 }] }]);
    } finally {
      await reader.close();
      await writer.close();
    }
  });

  it('count a lone EXISTS from the key statistics exactly: removed documents, several values, other types, another connection', async () => {
    const filename = join(directory, 'exists-count.db');
    const reader = createSqliteAdapter({ filename });
    const writer = createSqliteAdapter({ filename });
    await reader.open();
    await writer.open();
    const team = 'urn:li:structuredProperty:team';
    const field = { kind: 'property' as const, propertyUrn: team, definitionKey: 'k1', valueKind: 'string' as const };
    const doc = (entityType: string, i: number, values: string[], removed = false): SearchDocument => ({
      urn: entityType === 'dataset' ? `urn:li:dataset:(urn:li:dataPlatform:hive,e${i},PROD)` : `urn:li:chart:(looker,e${i})`,
      entityType,
      removed,
      text: { urnKey: `k${i}` },
      fields: {},
      properties: values.length ? [{ propertyUrn: team, definitionKey: 'k1', values }] : [],
    });
    const exists = async (includeRemoved: boolean, entityTypes = ['dataset']) => {
      const answer = await reader.search({
        entityTypes,
        filter: [[{ field, operator: 'EXISTS', values: [], negated: false }]],
        includeRemoved,
        order: 'urn',
        limit: 2,
      });
      return { total: answer.total, urns: answer.hits.map((h) => h.urn) };
    };
    const urn = (i: number) => doc('dataset', i, []).urn;
    try {
      // Written through another connection than the one that searches: every change is seen at once.
      const other = new WrittenCatalog(writer);
      await other.put([doc('dataset', 1, ['a']), doc('dataset', 2, ['b'], true), doc('dataset', 3, []), doc('dataset', 4, ['c'])]);
      expect(await exists(false)).toEqual({ total: 2, urns: [urn(1), urn(4)] });
      expect(await exists(true)).toEqual({ total: 3, urns: [urn(1), urn(2)] });
      // One removed, the other restored.
      await other.put([doc('dataset', 1, ['a'], true), doc('dataset', 2, ['b'])]);
      expect(await exists(false)).toEqual({ total: 2, urns: [urn(2), urn(4)] });
      expect(await exists(true)).toEqual({ total: 3, urns: [urn(1), urn(2)] });
      // Several values on one document: still one document.
      await other.put([doc('dataset', 5, ['d', 'e'])]);
      expect(await exists(false)).toEqual({ total: 3, urns: [urn(2), urn(4)] });
      // A chart under the key: datasets alone are still counted as datasets.
      await other.put([doc('chart', 6, ['f'])]);
      expect((await exists(false)).total).toBe(3);
      expect((await exists(false, ['dataset', 'chart'])).total).toBe(4);
      await other.deleteEntities([urn(4), urn(5)]);
      expect(await exists(false)).toEqual({ total: 1, urns: [urn(2)] });
      expect(await exists(true)).toEqual({ total: 2, urns: [urn(1), urn(2)] });
    } finally {
      await reader.close();
      await writer.close();
    }
  });

  it('answer ANDs like the reference on 2,000 documents, whether planning finds a small driver (one pass) or not', async () => {
    const adapter = createSqliteAdapter({ filename: join(directory, 'plans.db') });
    await adapter.open();
    try {
      const catalog = new WrittenCatalog(adapter);
      await catalog.put(randomCatalog(8080, 2_000), 200);
      const documents = catalog.list;
      const random = seededRandom(12);
      let small = 0;
      let large = 0;
      for (let i = 0; i < 150; i++) {
        // One group of two or three positive conditions: the planner estimates and picks a driver.
        const group = Array.from({ length: 2 + (i % 2) }, () => ({ ...randomCondition(random, documents), negated: false }));
        const sizes = group.map((c) => referenceMatching(documents, { entityTypes: [], filter: [[c]], includeRemoved: true }).length);
        if (Math.min(...sizes) <= 256) small++;
        if (Math.min(...sizes) > 256) large++;
        const request: SearchRequest = { ...randomSearchRequest(random, documents), filter: [group], order: 'urn' };
        delete request.text;
        await expectSearchLikeReference(expect, adapter, documents, request);
        // And keyset pages after a URN in the middle of the matches.
        const all = referenceSearch(documents, { ...request, afterUrn: undefined, offset: 0, limit: 3_000 }).urns;
        if (all.length > 2)
          await expectSearchLikeReference(expect, adapter, documents, {
            ...request,
            afterUrn: all[Math.floor(all.length / 2)]!,
            offset: 0,
            limit: 5,
          });
      }
      expect(small).toBeGreaterThan(20);
      expect(large).toBeGreaterThan(20);
    } finally {
      await adapter.close();
    }
  });
  it('rewrite only the value rows that differ when a document is replaced (a soft delete updates them in place)', async () => {
    const filename = join(directory, 'changed-rows.db');
    const adapter = createSqliteAdapter({ filename });
    await adapter.open();
    const urn = 'urn:li:dataset:(urn:li:dataPlatform:hive,db.rows,PROD)';
    const doc = (fields: Record<string, string[]>, removed = false): SearchDocument => ({
      urn,
      entityType: 'dataset',
      removed,
      text: { urnKey: 'db.rows', name: 'rows' },
      fields,
      properties: [],
    });
    const first = { platform: ['urn:li:dataPlatform:hive'], origin: ['PROD'], name: ['rows'], tags: ['a', 'b', 'c'], size: ['3'] };
    try {
      const catalog = new WrittenCatalog(adapter);
      await catalog.put([doc(first)]);
      // Every change to the value rows from here on is logged by triggers (the commit's connection sees them).
      const side = new Database(filename);
      side.exec(`CREATE TABLE row_log (op TEXT, value)
        ; CREATE TRIGGER log_insert AFTER INSERT ON search_values BEGIN INSERT INTO row_log VALUES ('insert', NEW.value); END
        ; CREATE TRIGGER log_delete AFTER DELETE ON search_values BEGIN INSERT INTO row_log VALUES ('delete', OLD.value); END
        ; CREATE TRIGGER log_update AFTER UPDATE ON search_values BEGIN INSERT INTO row_log VALUES ('update', NEW.value); END`);
      const logged = () => {
        const rows = side.prepare('SELECT op, value FROM row_log ORDER BY op, value').raw().all();
        side.exec('DELETE FROM row_log');
        return rows;
      };
      // One field changed, one value of a list swapped, a field dropped, one added: only those rows move.
      const { size: _dropped, ...kept } = first;
      await catalog.put([doc({ ...kept, name: ['renamed'], tags: ['a', 'b', 'd'], owner: ['team'] })]);
      expect(logged()).toEqual([
        ['delete', '3'],
        ['delete', 'c'],
        ['delete', 'rows'],
        ['insert', 'd'],
        ['insert', 'renamed'],
        ['insert', 'team'],
      ]);
      // The same document again: no row is touched.
      await catalog.put([doc({ ...kept, name: ['renamed'], tags: ['a', 'b', 'd'], owner: ['team'] })]);
      expect(logged()).toEqual([]);
      // A soft delete and a restore update each row in place.
      const all = ['PROD', 'a', 'b', 'd', 'renamed', 'team', 'urn:li:dataPlatform:hive'].map((v) => ['update', v]);
      await catalog.put([doc({ ...kept, name: ['renamed'], tags: ['a', 'b', 'd'], owner: ['team'] }, true)]);
      expect(logged()).toEqual(all);
      await catalog.put([doc({ ...kept, name: ['renamed'], tags: ['a', 'b', 'd'], owner: ['team'] })]);
      expect(logged()).toEqual(all);
      side.close();
      // Searches answer from the rows as they are now.
      expect(
        (
          await adapter.search({
            entityTypes: [],
            filter: [[{ field: { kind: 'field', name: 'tags' }, operator: 'EQUAL', values: ['d'], negated: false }]],
            includeRemoved: false,
            order: 'urn',
            limit: 5,
          })
        ).total,
      ).toBe(1);
    } finally {
      await adapter.close();
    }
  });
});
