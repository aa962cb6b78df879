import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import { SCHEMA_VERSION } from '../../../adapters/sqlite/schema';
import { countLimit } from '../../../adapters/sqlite/value-counts';
import type { FilterOperator, SearchCondition, SearchDocument, SearchField, SearchRequest } from '../../../src/adapter/types';
import { randomCatalog, randomDocument, seededRandom } from '../../../src/testing/search-catalog';
import { expectSearchLikeReference, WrittenCatalog } from '../../../src/testing/search-random';
import { aspect, faultAt, INJECTED_FAULT } from '../../../src/testing/support';

const directory = mkdtempSync(join(tmpdir(), 'metacatalog-value-counts-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** Reads the file on its own connection. */
function inspect<T>(filename: string, read: (db: Database.Database) => T): T {
  const db = new Database(filename, { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/**
 * The per-value counts equal the value rows grouped, for every key that keeps them; a key that keeps
 * none has no rows there; value_counts is the number of a key's rows, within its limit. Returns the
 * keys that keep counts.
 */
function expectValueCountsAgree(filename: string): number {
  return inspect(filename, (db) => {
    const kept = db.prepare('SELECT key_id, value, live, removed FROM search_value_counts ORDER BY key_id, value').all();
    const rows = db
      .prepare(
        `SELECT v.key_id AS key_id, v.value AS value, SUM(v.removed = 0) AS live, SUM(v.removed = 1) AS removed
         FROM search_values v JOIN search_keys k ON k.id = v.key_id WHERE k.value_counts IS NOT NULL
         GROUP BY v.key_id, v.value ORDER BY v.key_id, v.value`,
      )
      .all();
    expect(kept).toEqual(rows);
    const keys = db
      .prepare(
        `SELECT k.id AS id, k.entities AS entities, k.value_counts AS valueCounts,
           (SELECT COUNT(*) FROM search_value_counts c WHERE c.key_id = k.id) AS actual FROM search_keys k`,
      )
      .all() as Array<{ id: number; entities: number; valueCounts: number | null; actual: number }>;
    for (const key of keys) {
      if (key.valueCounts === null) expect(key.actual, `key ${key.id}`).toBe(0);
      else {
        expect(key.valueCounts, `key ${key.id}`).toBe(key.actual);
        expect(key.valueCounts, `key ${key.id}`).toBeLessThanOrEqual(countLimit(key.entities));
      }
    }
    return keys.filter((k) => k.valueCounts !== null).length;
  });
}

const TEAM = 'urn:li:structuredProperty:team';
const teamField: SearchField = { kind: 'property', propertyUrn: TEAM, definitionKey: 'k1', valueKind: 'string' };

function teamDoc(i: number, values: Array<string | number>, options: { removed?: boolean; entityType?: string } = {}): SearchDocument {
  const entityType = options.entityType ?? 'dataset';
  return {
    urn: entityType === 'dataset' ? `urn:li:dataset:(urn:li:dataPlatform:hive,t${i},PROD)` : `urn:li:chart:(looker,c${i})`,
    entityType,
    removed: options.removed ?? false,
    text: { urnKey: `k${i}` },
    fields: {},
    properties: values.length ? [{ propertyUrn: TEAM, definitionKey: 'k1', values }] : [],
  };
}

/** The team key's row: its document count, per-value count rows (null: none kept) and recheck point. */
function teamKey(filename: string): { entities: number; valueCounts: number | null; recheckAt: number } {
  return inspect(
    filename,
    (db) =>
      db.prepare('SELECT entities, value_counts AS valueCounts, recheck_at AS recheckAt FROM search_keys WHERE name = ?').get(TEAM) as {
        entities: number;
        valueCounts: number | null;
        recheckAt: number;
      },
  );
}

/** Lone conditions whose counts the per-value counts can answer, over the scopes that matter to them. */
function loneRequests(field: SearchField, values: Array<string | number>): SearchRequest[] {
  const conditions: Array<[FilterOperator, Array<string | number>]> = [
    ['EQUAL', values.slice(0, 1)],
    ['IN', values.slice(0, 3)],
    ['GREATER_THAN', values.slice(1, 2)],
    ['LESS_THAN_OR_EQUAL_TO', values.slice(2, 3)],
    ['IEQUAL', values.slice(0, 1).map((v) => (typeof v === 'string' ? v.toUpperCase() : v))],
    ['START_WITH', ['t']],
  ];
  const out: SearchRequest[] = [];
  for (const [operator, vs] of conditions) {
    const condition: SearchCondition = { field, operator, values: vs, negated: false };
    for (const entityTypes of [[], ['dataset'], ['chart']])
      for (const includeRemoved of [false, true]) out.push({ entityTypes, filter: [[condition]], includeRemoved, order: 'urn', limit: 5 });
  }
  return out;
}

describe('SQLite per-value counts', () => {
  it('stay equal to the value rows through replacements, soft delete and restore, deletions, dropped documents and failed commits', async () => {
    const filename = join(directory, 'random.db');
    const fault = faultAt(3);
    const adapter = createSqliteAdapter({ filename, faultInjector: fault.injector });
    await adapter.open();
    try {
      const catalog = new WrittenCatalog(adapter);
      const random = seededRandom(5150);
      await catalog.put(randomCatalog(404, 300));
      expect(expectValueCountsAgree(filename)).toBeGreaterThan(3);
      const urns = catalog.list.map((d) => d.urn);
      const replacing = (share: number, seed: number) =>
        urns
          .filter((u) => catalog.documents.has(u) && random() < share)
          .map((urn, i) => ({ ...randomDocument(random, seed + i), urn, entityType: catalog.documents.get(urn)!.entityType }));
      await catalog.put(replacing(0.3, 5000), 17);
      expectValueCountsAgree(filename);
      // Soft delete, then restore: the same values move from live to removed and back.
      const soft = catalog.list.filter((d) => !d.removed && random() < 0.2);
      await catalog.put(soft.map((d) => ({ ...d, removed: true })));
      expectValueCountsAgree(filename);
      await catalog.put(soft.map((d) => ({ ...d, removed: false })));
      expectValueCountsAgree(filename);
      await catalog.deleteEntities(catalog.list.map((d) => d.urn).filter(() => random() < 0.1));
      await catalog.dropDocuments(catalog.list.map((d) => d.urn).filter(() => random() < 0.05));
      expectValueCountsAgree(filename);
      // A batch that fails half-way leaves counts and rows as they were.
      const before = inspect(filename, (db) => db.prepare('SELECT * FROM search_value_counts ORDER BY key_id, value').all());
      fault.arm();
      const victims = replacing(0.1, 9000).slice(0, 6);
      await expect(
        adapter.commit({
          entities: victims.map((d) => ({
            urn: d.urn,
            entityType: d.entityType,
            expectVersion: catalog.versions.get(d.urn)!,
            put: [aspect('info', { title: 'x' }, catalog.versions.get(d.urn)! + 1)],
            searchDocument: d,
          })),
        }),
      ).rejects.toThrow(INJECTED_FAULT);
      fault.disarm();
      expect(inspect(filename, (db) => db.prepare('SELECT * FROM search_value_counts ORDER BY key_id, value').all())).toEqual(before);
      // Concurrent commits share one transaction; the one that conflicts is rolled back alone.
      const [a, b, c] = catalog.list.slice(0, 3);
      const write = (d: SearchDocument, expectVersion: number) =>
        adapter.commit({
          entities: [
            {
              urn: d.urn,
              entityType: d.entityType,
              expectVersion,
              put: [aspect('info', { title: 'y' }, expectVersion + 1)],
              searchDocument: { ...randomDocument(random, 7000), urn: d.urn, entityType: d.entityType },
            },
          ],
        });
      const outcomes = await Promise.allSettled([
        write(a!, catalog.versions.get(a!.urn)!),
        write(b!, catalog.versions.get(b!.urn)! + 5),
        write(c!, catalog.versions.get(c!.urn)!),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expectValueCountsAgree(filename);
    } finally {
      await adapter.close();
    }
  });

  it('answer lone conditions like the reference: removed or not, other entity types under the key, several values', async () => {
    const filename = join(directory, 'answers.db');
    const adapter = createSqliteAdapter({ filename });
    await adapter.open();
    try {
      const catalog = new WrittenCatalog(adapter);
      const teams = ['team-a', 'team-b', 'team-c', 'team-d'];
      await catalog.put(Array.from({ length: 80 }, (_, i) => teamDoc(i, [teams[i % 4]!], { removed: i % 7 === 0 })));
      expect(teamKey(filename).valueCounts).toBe(4);
      const check = async () => {
        for (const request of loneRequests(teamField, ['team-b', 'team-a', 'team-c']))
          await expectSearchLikeReference(expect, adapter, catalog.list, request);
        expectValueCountsAgree(filename);
      };
      await check();
      // Restored and removed.
      await catalog.put(Array.from({ length: 20 }, (_, i) => teamDoc(i, [teams[i % 4]!], { removed: i % 7 !== 0 })));
      await check();
      // A chart under the key: a dataset scope is not the whole key any more.
      await catalog.put([teamDoc(100, ['team-a'], { entityType: 'chart' }), teamDoc(101, ['team-b'], { entityType: 'chart' })]);
      await check();
      // Several values on one document: one wanted value is still counted per document.
      await catalog.put([teamDoc(102, ['team-a', 'team-b']), teamDoc(103, ['team-c', 'team-d', 'team-e'])]);
      await check();
      await catalog.deleteEntities([teamDoc(100, [], { entityType: 'chart' }).urn, teamDoc(101, [], { entityType: 'chart' }).urn]);
      await catalog.put([teamDoc(102, ['team-a']), teamDoc(103, ['team-c'])]);
      await check();
    } finally {
      await adapter.close();
    }
  });

  it('are dropped for a key past its limit, and counted again from its rows at twice its documents, by either of two connections', async () => {
    const filename = join(directory, 'limit.db');
    const first = createSqliteAdapter({ filename });
    const second = createSqliteAdapter({ filename });
    await first.open();
    await second.open();
    try {
      const one = new WrittenCatalog(first);
      const two = new WrittenCatalog(second);
      // 65 distinct values on 65 documents: past the limit (64, or a quarter of the documents).
      await one.put(
        Array.from({ length: 65 }, (_, i) => teamDoc(i, [`team-${i}`])),
        65,
      );
      expect(teamKey(filename)).toEqual({ entities: 65, valueCounts: null, recheckAt: 130 });
      expectValueCountsAgree(filename);
      // More documents repeating ten of the values, written by the other connection: at 130 the
      // key is looked at again (65 distinct values, still past the limit), then at 290.
      await two.put(Array.from({ length: 80 }, (_, i) => teamDoc(1000 + i, [`team-${i % 10}`])));
      expect(teamKey(filename)).toEqual({ entities: 145, valueCounts: null, recheckAt: 290 });
      // The first connection writes while the second changed the key: its view of the key is renewed.
      await one.put(Array.from({ length: 40 }, (_, i) => teamDoc(2000 + i, [`team-${i % 10}`])));
      await two.put(Array.from({ length: 120 }, (_, i) => teamDoc(3000 + i, [`team-${i % 10}`])));
      // 65 distinct values among 305 documents: within a quarter of them, so counted again.
      expect(teamKey(filename)).toEqual({ entities: 305, valueCounts: 65, recheckAt: 0 });
      expectValueCountsAgree(filename);
      // Both connections keep them from now on.
      await one.put(Array.from({ length: 10 }, (_, i) => teamDoc(i, [`team-${i % 3}`])));
      await two.put(Array.from({ length: 10 }, (_, i) => teamDoc(3000 + i, [`team-new-${i}`])));
      await one.put(Array.from({ length: 5 }, (_, i) => teamDoc(2000 + i, [`team-${i}`], { removed: true })));
      expect(teamKey(filename).valueCounts).toBe(75);
      expectValueCountsAgree(filename);
      const lone = loneRequests(teamField, ['team-1', 'team-0', 'team-5']);
      for (const request of lone) await expectSearchLikeReference(expect, first, [...one.list, ...two.list], request);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('are built by the migration of an existing file from its value rows, and kept by writes after it', async () => {
    const filename = join(directory, 'migrate.db');
    const adapter = createSqliteAdapter({ filename });
    await adapter.open();
    const catalog = new WrittenCatalog(adapter);
    try {
      await catalog.put(randomCatalog(77, 250));
      await catalog.put(catalog.list.slice(0, 30).map((d) => ({ ...d, removed: !d.removed })));
    } finally {
      await adapter.close();
    }
    const before = inspect(filename, (db) => db.prepare('SELECT * FROM search_value_counts ORDER BY key_id, value').all()) as Array<{
      key_id: number;
    }>;
    // The file as schema version 6 left it.
    const raw = new Database(filename);
    raw.exec(
      'DROP TABLE search_value_counts; ALTER TABLE search_keys DROP COLUMN value_counts; ALTER TABLE search_keys DROP COLUMN recheck_at',
    );
    raw.pragma('user_version = 6');
    raw.close();
    const again = createSqliteAdapter({ filename });
    await again.open();
    try {
      expect(inspect(filename, (db) => db.pragma('user_version', { simple: true }))).toBe(SCHEMA_VERSION);
      expect(expectValueCountsAgree(filename)).toBeGreaterThan(3);
      const { after, keys } = inspect(filename, (db) => ({
        after: db.prepare('SELECT * FROM search_value_counts ORDER BY key_id, value').all() as Array<{ key_id: number }>,
        keys: db
          .prepare(
            `SELECT k.id AS id, k.entities AS entities, k.value_counts AS valueCounts, k.recheck_at AS recheckAt,
               (SELECT COUNT(DISTINCT value) FROM search_values v WHERE v.key_id = k.id) AS distinct_
             FROM search_keys k`,
          )
          .all() as Array<{ id: number; entities: number; valueCounts: number | null; recheckAt: number; distinct_: number }>,
      }));
      // Kept exactly for the keys within their limit; the others are looked at again at twice their documents.
      for (const key of keys) {
        if (key.distinct_ <= countLimit(key.entities)) expect(key).toEqual({ ...key, valueCounts: key.distinct_, recheckAt: 0 });
        else expect(key).toEqual({ ...key, valueCounts: null, recheckAt: 2 * key.entities });
      }
      // Where the writes kept counts too, the same counts.
      const keptByWrites = new Set(before.map((r) => r.key_id));
      const keptByBoth = new Set(after.map((r) => r.key_id).filter((id) => keptByWrites.has(id)));
      expect(keptByBoth.size).toBeGreaterThan(3);
      expect(after.filter((r) => keptByBoth.has(r.key_id))).toEqual(before.filter((r) => keptByBoth.has(r.key_id)));
      const written = new WrittenCatalog(again);
      for (const d of catalog.list) written.versions.set(d.urn, catalog.versions.get(d.urn)!);
      const random = seededRandom(3);
      await written.put(
        catalog.list.slice(0, 60).map((d, i) => ({ ...randomDocument(random, 900 + i), urn: d.urn, entityType: d.entityType })),
      );
      expectValueCountsAgree(filename);
    } finally {
      await again.close();
    }
  });
});
