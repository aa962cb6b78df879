import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../adapters/sqlite/index';
import { randomCatalog, randomDocument, seededRandom } from '../src/testing/search-catalog';
import { WrittenCatalog } from '../src/testing/search-random';

const directory = mkdtempSync(join(tmpdir(), 'metacatalog-search-store-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

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
      await catalog.put(urns.filter(() => random() < 0.3).map((urn, i) => ({ ...randomDocument(random, 5000 + i), urn, entityType: catalog.documents.get(urn)!.entityType })));
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
      // Every document lists exactly the keys it has rows under.
      const docs = db.prepare('SELECT entity_id, key_ids FROM search_docs').all() as Array<{ entity_id: number; key_ids: string }>;
      const rows = db.prepare('SELECT DISTINCT key_id FROM search_values WHERE entity_id = ? ORDER BY key_id').pluck();
      for (const doc of docs) {
        const listed = doc.key_ids.split(' ').filter((k) => k !== '').map((k) => Number(k.replace('*', ''))).sort((a, b) => a - b);
        expect(listed).toEqual(rows.all(doc.entity_id));
      }
      expect(db.prepare('SELECT COUNT(*) FROM search_values WHERE entity_id NOT IN (SELECT entity_id FROM search_docs)').pluck().get()).toBe(0);
    } finally {
      db.close();
    }
  });
});
